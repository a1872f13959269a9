// Tengen referee dashboard: hall view, table view, live updates over SSE, arbiter actions.
// Plain JavaScript served by the binary; no build step.
"use strict";

const I18N = {
  en: {
    connecting: "connecting…", live: "live", offline: "reconnecting…", token: "Arbiter token",
    enable_alerts: "Enable alerts", alerts_on: "Alerts on", back: "← All tables",
    legend_extra: "on the board, not in the record", legend_missing: "in the record, not on the board",
    legend_dead: "marked dead", pass_black: "Black passes", pass_white: "White passes",
    mark_dead: "Mark dead stones", mark_dead_done: "Done marking", end_game: "End game",
    set_result: "Set result", swap_colours: "Wrong colours (17.1)", correct: "Correct record from board", correct_move: "Correct a move",
    new_game: "New game", download_sgf: "Download SGF", alerts: "Alerts", camera: "Camera",
    moves: "Moves", events: "Events", no_alerts: "No open alerts.", confirm: "Confirm",
    dismiss: "Dismiss", before: "Before", after: "After", move: "Move", to_move: "to move",
    black: "Black", white: "White", cam_live: "camera live", cam_lost: "CAMERA LOST",
    cam_waiting: "no frame yet", cam_error: "CAMERA ERROR", readonly: "read-only (enter the arbiter token to act)",
    arbiter: "arbiter", warnings: "warnings", result: "Result", phase_playing: "playing",
    phase_ended: "ended", phase_scored: "scored", phase_waiting: "waiting for the board", phase_finished: "finished", count: "Count",
    sure_adopt: "Take the board as it is now as the legal position (correcting the record)?", new_alert: "New infraction at",
    ask_result: "Result (e.g. B+3.5, W+R, Draw):", ask_correct_n: "Move number to correct:",
    ask_correct_p: "Right point (e.g. Q16, or \"pass\"):", sure_end: "End this game?",
    sure_colours: "The players hold the wrong colours (Art. 17.1)? Up to move 10 the game restarts with the right colours; after it the game stands.",
    sure_new: "Start a new game at this table?", done: "Done", failed: "Failed",
    tap_dead: "Tap stones to mark them dead, then press “Done marking”.", no_tables: "No tables configured.",
  },
  zh: {
    connecting: "连接中…", live: "在线", offline: "重新连接…", token: "裁判口令",
    enable_alerts: "开启提醒", alerts_on: "提醒已开", back: "← 全部棋桌",
    legend_extra: "棋盘上有、棋谱中无", legend_missing: "棋谱中有、棋盘上无",
    legend_dead: "已标为死子", pass_black: "黑方虚着", pass_white: "白方虚着",
    mark_dead: "标记死子", mark_dead_done: "完成标记", end_game: "终局",
    set_result: "录入结果", swap_colours: "拿错黑白棋（17.1）", correct: "按棋盘更正棋谱", correct_move: "更正一手",
    new_game: "新对局", download_sgf: "下载 SGF 棋谱", alerts: "警示", camera: "摄像头",
    moves: "着手", events: "事件", no_alerts: "没有待处理的警示。", confirm: "确认犯规",
    dismiss: "驳回", before: "之前", after: "之后", move: "第", to_move: "行棋",
    black: "黑", white: "白", cam_live: "摄像头正常", cam_lost: "摄像头失联",
    cam_waiting: "尚无画面", cam_error: "摄像头故障", readonly: "只读（输入裁判口令后可操作）",
    arbiter: "裁判", warnings: "警告", result: "结果", phase_playing: "对局中",
    phase_ended: "已终局", phase_scored: "已计点", phase_waiting: "等待棋盘", phase_finished: "已结束", count: "数子",
    sure_adopt: "以棋盘现状为合法局面（更正棋谱）？", new_alert: "新的犯规嫌疑：",
    ask_result: "结果（如 B+3.5、W+R、和棋）：", ask_correct_n: "要更正的手数：",
    ask_correct_p: "正确位置（如 Q16，虚着请输入 pass）：", sure_end: "确定终局？",
    sure_colours: "确认拿错黑白棋（第17条1款）？第10手之内改正并重新开始；超过10手对局有效。",
    sure_new: "在此棋桌开始新对局？", done: "完成", failed: "失败",
    tap_dead: "点击棋子标记死子，然后按“完成标记”。", no_tables: "未配置棋桌。",
  },
};

const state = {
  lang: localStorage.getItem("tengen.lang") || ((navigator.language || "en").startsWith("zh") ? "zh" : "en"),
  token: localStorage.getItem("tengen.token") || "",
  tables: new Map(),
  route: { view: "hall" },
  detail: null,
  events: [],
  markingDead: false,
  deadSelection: new Set(),
  audio: null,
  seenAlerts: new Set(),
};

const $ = (sel) => document.querySelector(sel);
const t = (key) => (I18N[state.lang] && I18N[state.lang][key]) || I18N.en[key] || key;
const LETTERS = "ABCDEFGHJKLMNOPQRST";
const human = (sgf) => {
  if (!sgf) return "pass";
  const c = sgf.charCodeAt(0) - 97, r = sgf.charCodeAt(1) - 97;
  return LETTERS[c] + (19 - r);
};
const sgfOf = (c, r) => String.fromCharCode(97 + c) + String.fromCharCode(97 + r);
const colourName = (c) => t(c === "black" ? "black" : "white");

function applyLanguage() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("#lang").textContent = state.lang === "zh" ? "English" : "中文";
  if (state.markingDead) $("#mark-dead").textContent = t("mark_dead_done");
  updateMode();
  render();
}

function updateMode() {
  document.body.classList.toggle("readonly", !state.token);
  $("#mode").textContent = state.token ? t("arbiter") : t("readonly");
}

// ---- drawing ----------------------------------------------------------------------------

function drawBoard(canvas, legal, physical, opts = {}) {
  const ctx = canvas.getContext("2d");
  const size = canvas.width;
  const margin = size / 20;
  const step = (size - 2 * margin) / 18;
  ctx.fillStyle = "#e3b96b";
  ctx.fillRect(0, 0, size, size);
  ctx.strokeStyle = "#3b2a10";
  ctx.lineWidth = Math.max(1, size / 700);
  for (let i = 0; i < 19; i++) {
    const p = margin + i * step;
    ctx.beginPath(); ctx.moveTo(margin, p); ctx.lineTo(size - margin, p); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(p, margin); ctx.lineTo(p, size - margin); ctx.stroke();
  }
  ctx.fillStyle = "#3b2a10";
  for (const r of [3, 9, 15]) for (const c of [3, 9, 15]) {
    ctx.beginPath(); ctx.arc(margin + c * step, margin + r * step, Math.max(1.5, step * 0.1), 0, 7); ctx.fill();
  }
  if (opts.coords) {
    ctx.fillStyle = "#3b2a10";
    ctx.font = `${Math.round(step * 0.38)}px sans-serif`;
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (let i = 0; i < 19; i++) {
      ctx.fillText(LETTERS[i], margin + i * step, margin * 0.45);
      ctx.fillText(String(19 - i), margin * 0.45, margin + i * step);
    }
  }
  const dead = opts.dead || new Set();
  const last = opts.last;
  for (let i = 0; i < 361; i++) {
    const c = i % 19, r = Math.floor(i / 19);
    const x = margin + c * step, y = margin + r * step;
    const l = legal ? legal[i] : ".";
    const ph = physical ? physical[i] : l;
    if (l === "B" || l === "W") {
      ctx.beginPath(); ctx.arc(x, y, step * 0.47, 0, 7);
      ctx.fillStyle = l === "B" ? "#111" : "#f8f8f8"; ctx.fill();
      ctx.strokeStyle = "#000"; ctx.lineWidth = Math.max(0.5, size / 1500); ctx.stroke();
      if (dead.has(sgfOf(c, r))) {
        ctx.fillStyle = "rgba(128,128,128,.75)"; ctx.beginPath(); ctx.arc(x, y, step * 0.47, 0, 7); ctx.fill();
      }
      if (last === sgfOf(c, r)) {
        ctx.beginPath(); ctx.arc(x, y, step * 0.2, 0, 7);
        ctx.strokeStyle = l === "B" ? "#fff" : "#000"; ctx.lineWidth = Math.max(1, step * 0.07); ctx.stroke();
      }
    }
    if (physical && ph !== "?" && ph !== l) {
      ctx.lineWidth = Math.max(2, step * 0.12);
      ctx.strokeStyle = "#d62828";
      if (ph === "B" || ph === "W") {
        // A stone the camera sees that the record does not have (or of the other colour).
        ctx.beginPath(); ctx.arc(x, y, step * 0.42, 0, 7);
        if (l === ".") { ctx.fillStyle = ph === "B" ? "rgba(17,17,17,.45)" : "rgba(255,255,255,.6)"; ctx.fill(); }
        ctx.stroke();
      } else {
        // A stone of the record missing from the board.
        const d = step * 0.3;
        ctx.beginPath(); ctx.moveTo(x - d, y - d); ctx.lineTo(x + d, y + d);
        ctx.moveTo(x + d, y - d); ctx.lineTo(x - d, y + d); ctx.stroke();
      }
    }
  }
  if (opts.highlight) {
    ctx.strokeStyle = "#ff7b00"; ctx.lineWidth = Math.max(2, step * 0.1);
    for (const p of opts.highlight) {
      const c = p.charCodeAt(0) - 97, r = p.charCodeAt(1) - 97;
      ctx.strokeRect(margin + c * step - step / 2, margin + r * step - step / 2, step, step);
    }
  }
}

// ---- API --------------------------------------------------------------------------------

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.auth) headers["Authorization"] = "Bearer " + state.token;
  const res = await fetch(path, { method: options.method || "GET", headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  if (!res.ok) throw new Error((data && data.message) || res.statusText);
  return data;
}

async function act(action) {
  if (!state.route.table) return;
  try {
    await api(`/api/tables/${encodeURIComponent(state.route.table)}/arbiter`, { method: "POST", body: action, auth: true });
    toast(t("done"));
    await loadDetail();
  } catch (err) {
    toast(t("failed") + ": " + err.message);
  }
}

function toast(text) {
  const el = $("#toast");
  el.textContent = text; el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 3000);
}

// ---- views ------------------------------------------------------------------------------

function route() {
  // An arbiter link may carry the token in the fragment (never sent to the server):
  // #/table/1?token=… — keep it in localStorage and drop it from the address bar.
  const withToken = location.hash.match(/^(#[^?]*)\?(?:.*&)?token=([^&]+)/);
  if (withToken) {
    state.token = decodeURIComponent(withToken[2]);
    localStorage.setItem("tengen.token", state.token);
    $("#token").value = state.token;
    history.replaceState(null, "", withToken[1] || "#/");
    updateMode();
  }
  const m = location.hash.match(/^#\/table\/([^?]+)/);
  state.route = m ? { view: "table", table: decodeURIComponent(m[1]) } : { view: "hall" };
  state.detail = null; state.events = []; state.markingDead = false; state.deadSelection.clear();
  $("#hall").hidden = state.route.view !== "hall";
  $("#table").hidden = state.route.view !== "table";
  if (state.route.view === "table") { loadDetail(); loadEvents(); }
  render();
}

function render() {
  if (state.route.view === "hall") renderHall(); else renderTable();
}

function cameraText(cam, error) {
  // The service's own words for what failed (a refused connection, a corrupt frame) follow.
  if (error) return `${t("cam_error")}: ${error}`;
  return cam === "live" ? t("cam_live") : cam === "lost" ? t("cam_lost") : t("cam_waiting");
}

function renderHall() {
  const box = $("#tables");
  if (state.tables.size === 0) { box.innerHTML = `<p class="none">${t("no_tables")}</p>`; return; }
  const ids = [...state.tables.keys()];
  // Keep one card per table and update it in place (a hundred tables redraw cheaply).
  for (const id of ids) {
    const s = state.tables.get(id);
    let card = box.querySelector(`[data-table="${CSS.escape(id)}"]`);
    if (!card) {
      card = document.createElement("a");
      card.className = "card"; card.dataset.table = id; card.href = `#/table/${encodeURIComponent(id)}`;
      card.innerHTML = `<canvas width="190" height="190"></canvas><div class="line"><span class="name"></span><span class="alerts"></span></div><div class="line"><span class="moveinfo"></span><span class="cam"></span></div>`;
      box.appendChild(card);
    }
    card.classList.toggle("alerting", s.open_alerts > 0);
    card.querySelector(".name").textContent = s.name;
    card.querySelector(".alerts").innerHTML = s.open_alerts > 0 ? `<span class="badge">${s.open_alerts}</span>` : "";
    card.querySelector(".moveinfo").textContent = `#${s.move_number} · ${colourName(s.to_move)} ${t("to_move")}`;
    const cam = card.querySelector(".cam");
    cam.textContent = s.result ? s.result : cameraText(s.camera, s.camera_error);
    cam.className = "cam cam-" + (s.camera_error ? "error" : s.camera);
    cam.title = s.camera_error || "";
    drawBoard(card.querySelector("canvas"), s.legal, s.physical);
  }
}

function renderTable() {
  const d = state.detail;
  const id = state.route.table;
  const summary = state.tables.get(id);
  $("#t-name").textContent = summary ? summary.name : id;
  $("#sgf").href = `/api/tables/${encodeURIComponent(id)}/sgf`;
  if (!d) return;
  const v = d.view;
  const w = v.warnings || [0, 0];
  const phase = t("phase_" + v.phase) || v.phase;
  $("#t-status").textContent = `${t("move")} ${v.moves.length} · ${colourName(v.to_move)} ${t("to_move")} · ${phase} · ${t("warnings")} ${t("black")} ${w[0]} / ${t("white")} ${w[1]} · ${cameraText(d.camera, d.camera_error)}` + (v.result ? ` · ${t("result")} ${v.result}` : "");
  const highlight = v.open_alerts.flatMap((a) => a.points || []);
  const dead = new Set(v.dead.concat([...state.deadSelection]));
  const last = v.moves.length ? v.moves[v.moves.length - 1].point : null;
  drawBoard($("#board"), v.legal, v.physical, { coords: true, dead, highlight, last });
  $("#moves").innerHTML = v.moves.map((m) => `<li>${m.colour === "black" ? "●" : "○"} ${human(m.point)}</li>`).join("");
  const alerts = $("#alerts");
  if (!v.open_alerts.length) alerts.innerHTML = `<p class="none">${t("no_alerts")}</p>`;
  else {
    alerts.innerHTML = "";
    for (const a of v.open_alerts) {
      const ev = state.events.slice().reverse().find((e) => e.alert_id === a.alert_id && e.severity === "alert");
      const div = document.createElement("div");
      div.className = "alert"; div.dataset.alert = a.alert_id;
      const evidence = ev && ev.evidence
        ? `<div class="evidence"><figure><img src="/api/events/${ev.id}/before.jpg" alt=""><figcaption>${t("before")}</figcaption></figure><figure><img src="/api/events/${ev.id}/after.jpg" alt=""><figcaption>${t("after")}</figcaption></figure></div>` : "";
      const rule = ruling(ev);
      div.innerHTML = `<div class="title">${a.article ? a.article + " · " : ""}${escapeHtml(ev ? text(ev) : a.summary)}</div>${rule ? `<div class="ruling">${escapeHtml(rule)}</div>` : ""}${evidence}<div class="points">${(a.points || []).map(human).join(" ")}</div><div class="buttons write"><button class="confirm" data-confirm="${a.alert_id}">${t("confirm")}</button><button class="dismiss" data-dismiss="${a.alert_id}">${t("dismiss")}</button></div>`;
      alerts.appendChild(div);
    }
  }
  $("#events").innerHTML = state.events.slice(-200).reverse().map((e) =>
    `<li class="${e.severity}">#${e.id} ${new Date(e.at_ms).toLocaleTimeString()} ${e.article ? e.article + " · " : ""}${escapeHtml(text(e))}</li>`).join("");
}

// The referee's own text in the chosen language when it gave one (events carry en and zh).
function text(e) {
  const m = e && e.detail && e.detail.message;
  return (m && m[state.lang]) || (e && e.summary) || "";
}

function ruling(e) {
  const r = e && e.detail && e.detail.ruling;
  return (r && r[state.lang]) || "";
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

async function loadDetail() {
  const id = state.route.table;
  if (!id) return;
  try {
    state.detail = await api(`/api/tables/${encodeURIComponent(id)}`);
    state.tables.set(id, state.detail);
  } catch (err) { toast(err.message); }
  renderTable();
}

async function loadEvents() {
  const id = state.route.table;
  let after = 0;
  const all = [];
  for (let i = 0; i < 20; i++) {
    const page = await api(`/api/events?table=${encodeURIComponent(id)}&after=${after}&limit=1000`);
    all.push(...page.events); after = page.next;
    if (!page.more) break;
  }
  // Only the current game's events matter here.
  const game = state.detail ? state.detail.game : null;
  state.events = game ? all.filter((e) => e.game === game) : all;
  renderTable();
}

function refreshFrame() {
  if (state.route.view !== "table") return;
  const img = $("#frame");
  const d = state.detail;
  if (d && d.frames > 0) img.src = `/api/tables/${encodeURIComponent(state.route.table)}/frame?t=${Date.now()}`;
}

// ---- alerts: sound and notifications ------------------------------------------------------

function beep() {
  if (!state.audio) return;
  const ctx = state.audio;
  const osc = ctx.createOscillator(), gain = ctx.createGain();
  osc.frequency.value = 880; osc.type = "square";
  gain.gain.setValueAtTime(0.15, ctx.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.6);
  osc.connect(gain).connect(ctx.destination);
  osc.start(); osc.stop(ctx.currentTime + 0.6);
}

function announce(event) {
  if (state.seenAlerts.has(event.id)) return;
  state.seenAlerts.add(event.id);
  beep();
  const table = state.tables.get(event.table);
  const title = `${t("new_alert")} ${table ? table.name : event.table}`;
  if ("Notification" in window && Notification.permission === "granted") {
    try { new Notification(title, { body: (event.article ? event.article + " · " : "") + text(event), tag: "tengen-" + event.id }); } catch (_) { /* some browsers need a service worker */ }
  }
  toast(title);
}

// ---- live stream --------------------------------------------------------------------------

function connect() {
  const es = new EventSource("/api/stream");
  es.onopen = () => { $("#conn").textContent = t("live"); $("#conn").className = "conn live"; };
  es.onerror = () => {
    $("#conn").textContent = t("offline"); $("#conn").className = "conn down";
    // A refused resume (the service's log was replaced) closes the stream for good: start afresh.
    if (es.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  };
  es.addEventListener("table", (msg) => {
    const s = JSON.parse(msg.data);
    const old = state.tables.get(s.id) || {};
    state.tables.set(s.id, Object.assign(old, s));
    if (state.route.view === "hall") renderHall();
    else if (state.route.table === s.id) { if (!state.detail || state.detail.move_number !== s.move_number || state.detail.open_alerts !== s.open_alerts || state.detail.phase !== s.phase || state.detail.camera !== s.camera || state.detail.camera_error !== s.camera_error) loadDetail(); }
  });
  es.addEventListener("event", (msg) => {
    const e = JSON.parse(msg.data);
    if (e.severity === "alert") announce(e);
    if (state.route.view === "table" && state.route.table === e.table) {
      if (e.kind === "game_started") { loadDetail().then(loadEvents); return; }
      state.events.push(e);
      loadDetail();
    }
  });
}

// ---- controls -----------------------------------------------------------------------------

function boardPoint(evt) {
  const canvas = $("#board");
  const rect = canvas.getBoundingClientRect();
  const x = (evt.clientX - rect.left) / rect.width, y = (evt.clientY - rect.top) / rect.height;
  const margin = 1 / 20, step = (1 - 2 * margin) / 18;
  const c = Math.round((x - margin) / step), r = Math.round((y - margin) / step);
  return c >= 0 && c < 19 && r >= 0 && r < 19 ? sgfOf(c, r) : null;
}

function setup() {
  $("#token").value = state.token;
  $("#token").addEventListener("change", (e) => {
    state.token = e.target.value.trim();
    localStorage.setItem("tengen.token", state.token);
    updateMode();
  });
  $("#lang").addEventListener("click", () => {
    state.lang = state.lang === "zh" ? "en" : "zh";
    localStorage.setItem("tengen.lang", state.lang);
    applyLanguage();
  });
  $("#sound").addEventListener("click", () => {
    // Browsers allow sound and notifications only after a user gesture.
    try { state.audio = state.audio || new (window.AudioContext || window.webkitAudioContext)(); } catch (_) { /* no audio */ }
    if ("Notification" in window && Notification.permission === "default") Notification.requestPermission();
    $("#sound").textContent = t("alerts_on");
    beep();
  });
  $("#alerts").addEventListener("click", (e) => {
    const c = e.target.dataset.confirm, d = e.target.dataset.dismiss;
    if (c) act({ action: "confirm", alert_id: Number(c) });
    if (d) act({ action: "dismiss", alert_id: Number(d) });
  });
  $("#board").addEventListener("click", (e) => {
    if (!state.markingDead) return;
    const p = boardPoint(e);
    if (!p) return;
    if (state.deadSelection.has(p)) state.deadSelection.delete(p); else state.deadSelection.add(p);
    renderTable();
  });
  document.querySelector(".controls.write").addEventListener("click", async (e) => {
    const a = e.target.dataset.act;
    if (!a) return;
    if (a === "pass-black") act({ action: "pass", colour: "black" });
    if (a === "pass-white") act({ action: "pass", colour: "white" });
    if (a === "end" && confirm(t("sure_end"))) act({ action: "end_game" });
    if (a === "new" && confirm(t("sure_new"))) act({ action: "new_game" });
    if (a === "colours" && confirm(t("sure_colours"))) act({ action: "set_colours", swapped: true });
    if (a === "result") { const r = prompt(t("ask_result")); if (r) act({ action: "set_result", result: r }); }
    if (a === "correct" && confirm(t("sure_adopt"))) act({ action: "adopt_physical" });
    if (a === "correct-move") {
      const n = Number(prompt(t("ask_correct_n")));
      if (Number.isInteger(n) && n > 0) {
        const p = (prompt(t("ask_correct_p")) || "").trim();
        if (p) act({ action: "correct_record", move_number: n, point: p.toLowerCase() === "pass" ? null : p });
      }
    }
    if (a === "count") act({ action: "count" });
    if (a === "mark-dead") {
      if (!state.markingDead) { state.markingDead = true; state.deadSelection.clear(); e.target.textContent = t("mark_dead_done"); e.target.classList.add("active"); toast(t("tap_dead")); }
      else {
        state.markingDead = false; e.target.textContent = t("mark_dead"); e.target.classList.remove("active");
        const points = [...state.deadSelection]; state.deadSelection.clear();
        if (points.length) act({ action: "mark_dead", points });
      }
    }
  });
  window.addEventListener("hashchange", route);
  setInterval(refreshFrame, 1000);
}

async function start() {
  setup();
  try {
    for (const s of await api("/api/tables")) state.tables.set(s.id, s);
  } catch (err) { toast(err.message); }
  applyLanguage();
  route();
  connect();
}

start();
