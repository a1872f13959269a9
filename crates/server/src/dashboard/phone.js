"use strict";
// A phone as a table camera: the rear camera's picture, posted as a JPEG twice a second to
// /api/tables/{table}/frames with the token the QR code carried (scoped to this table).
const TEXT = {
  en: { start: "Start camera", stop: "Stop", starting: "starting the camera…", live: "sending", denied: "camera not allowed: allow it in the browser's settings",
        insecure: "cameras need https:// — open the address from the QR code", notoken: "no camera token: scan the table's QR code again",
        failed: "not sent: ", sent: "{n} frames sent", help: "Place the phone above the board, looking straight down, the whole grid in view. Keep the screen on." },
  zh: { start: "开启摄像头", stop: "停止", starting: "正在开启摄像头…", live: "正在发送", denied: "不允许使用摄像头：请在浏览器设置中允许",
        insecure: "摄像头需要 https:// ——请打开二维码中的地址", notoken: "没有摄像头口令：请重新扫描本桌二维码",
        failed: "发送失败：", sent: "已发送{n}帧", help: "把手机放在棋盘正上方，镜头朝下，拍到整个棋盘。请保持屏幕常亮。" },
};
const lang = (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
const tr = (k, n) => TEXT[lang][k].replace("{n}", n);
const table = decodeURIComponent(location.pathname.split("/").pop() || "");
const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
const fps = Number(new URLSearchParams(location.search).get("fps")) || 2;
const $ = (id) => document.getElementById(id);
let stream = null, timer = null, sent = 0, busy = false;

function show(key, cls, extra) { $("state").textContent = tr(key) + (extra || ""); $("state").className = "state " + (cls || ""); }

async function post(blob) {
  busy = true;
  try {
    const res = await fetch(`/api/tables/${encodeURIComponent(table)}/frames`, { method: "POST", body: blob, headers: { "Content-Type": "image/jpeg", Authorization: "Bearer " + token } });
    if (res.ok) { sent++; $("sent").textContent = tr("sent", sent); show("live", "ok"); }
    else show("failed", "bad", (await res.json().catch(() => ({}))).message || res.status);
  } catch (err) { show("failed", "bad", err.message); }
  busy = false;
}

function grab() {
  const video = $("video"), canvas = $("canvas");
  if (busy || !video.videoWidth) return;
  canvas.width = video.videoWidth; canvas.height = video.videoHeight;
  canvas.getContext("2d").drawImage(video, 0, 0);
  canvas.toBlob((blob) => { if (blob) post(blob); }, "image/jpeg", 0.85);
}

async function start() {
  if (stream) { stream.getTracks().forEach((t) => t.stop()); stream = null; clearInterval(timer); $("start").textContent = tr("start"); show("start"); return; }
  if (!token) { show("notoken", "bad"); return; }
  if (!window.isSecureContext || !navigator.mediaDevices) { show("insecure", "bad"); return; }
  show("starting");
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: { ideal: "environment" }, width: { ideal: 1920 }, height: { ideal: 1080 } }, audio: false });
  } catch (_) { show("denied", "bad"); return; }
  $("video").srcObject = stream;
  $("start").textContent = tr("stop");
  timer = setInterval(grab, 1000 / Math.min(5, Math.max(0.5, fps)));
}

$("table").textContent = table;
$("help").textContent = tr("help");
$("start").textContent = tr("start");
$("start").addEventListener("click", start);
show(token ? "start" : "notoken", token ? "" : "bad");
// Start at once where the browser allows it (a page opened from the QR code asks once).
if (token) start();
