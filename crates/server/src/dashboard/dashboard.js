// Tengen referee dashboard: hall view, table view, live updates over SSE, arbiter actions.
// Plain JavaScript served by the binary; no build step. Every visible text comes from I18N (or
// from the referee's own message in the chosen language); the browser test checks each
// language shows nothing untranslated. I18N is the data file i18n.json (one table a language,
// a key a message), which the server puts before this script as `const I18N = …;` (dashboard.rs).
const LOCALES = { en: "en-GB", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW" };
const HTML_LANG = { en: "en", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW" };

function initialLanguage() {
  const saved = localStorage.getItem("tengen.lang");
  if (saved === "zh") return "zh-Hans";
  if (I18N[saved]) return saved;
  const nav = (navigator.language || "en").toLowerCase();
  if (nav.startsWith("zh")) return /tw|hk|mo|hant/.test(nav) ? "zh-Hant" : "zh-Hans";
  return "en";
}

const state = {
  lang: initialLanguage(),
  token: localStorage.getItem("tengen.token") || "",
  tokenStatus: "none",
  conn: "connecting",
  tables: new Map(),
  route: { view: "hall" },
  detail: null,
  events: [],
  markingDead: false,
  deadSelection: new Set(),
  audio: null,
  seenAlerts: new Set(),
  sort: localStorage.getItem("tengen.sort") || "need",
  onlyNeed: localStorage.getItem("tengen.onlyNeed") === "1",
};

const $ = (sel) => document.querySelector(sel);
// A translation, with {name} placeholders filled from `args`.
const t = (key, args) => {
  const text = (I18N[state.lang] && I18N[state.lang][key]) || I18N.en[key] || key;
  return args ? text.replace(/\{(\w+)\}/g, (_, k) => (args[k] === undefined ? "" : String(args[k]))) : text;
};
const zh = () => state.lang !== "en";
const LETTERS = "ABCDEFGHJKLMNOPQRST";
const human = (sgf) => {
  if (!sgf) return t("pass");
  const c = sgf.charCodeAt(0) - 97, r = sgf.charCodeAt(1) - 97;
  return LETTERS[c] + (19 - r);
};
const sgfOf = (c, r) => String.fromCharCode(97 + c) + String.fromCharCode(97 + r);
const colourName = (c) => t(c === "black" ? "black" : "white");

// Article references as the rules write them: "Art. 18.2" / 第十八条第二款 / 第十八條第二款.
function chineseNumber(n) {
  const d = "零一二三四五六七八九";
  if (n < 10) return d[n];
  if (n < 20) return "十" + (n % 10 ? d[n % 10] : "");
  return d[Math.floor(n / 10)] + "十" + (n % 10 ? d[n % 10] : "");
}
function articleText(article) {
  const m = /^(?:Art\. )?(\d+)(?:\.(\d+))?$/.exec(article || "");
  if (!m) return article || "";
  if (!zh()) return "Art. " + m[1] + (m[2] ? "." + m[2] : "");
  const [art, clause] = state.lang === "zh-Hant" ? ["條", "款"] : ["条", "款"];
  return "第" + chineseNumber(Number(m[1])) + art + (m[2] ? "第" + chineseNumber(Number(m[2])) + clause : "");
}
function articlePrefix(article) {
  return article ? articleText(article) + (zh() ? "　" : " · ") : "";
}

function timeText(ms) {
  return new Date(ms).toLocaleTimeString(LOCALES[state.lang]);
}
function ageText(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return t("seconds", { n: s });
  if (s < 3600) return t("minutes", { n: Math.floor(s / 60) });
  return t("hours", { n: Math.floor(s / 3600) });
}

function applyLanguage() {
  document.documentElement.lang = HTML_LANG[state.lang];
  document.title = zh() ? "天元 裁判" : "Tengen referee";
  document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $("#lang").value = state.lang;
  showConnection();
  if (state.markingDead) $("#mark-dead").textContent = t("mark_dead_done");
  updateMode();
  render();
  renderRounds();
}

function showConnection() {
  const el = $("#conn");
  el.dataset.i18n = state.conn;
  el.textContent = t(state.conn);
  el.className = "conn" + (state.conn === "live" ? " live" : state.conn === "offline" ? " down" : "");
}

function updateMode() {
  const arbiter = state.token && state.tokenStatus === "ok";
  document.body.classList.toggle("readonly", !arbiter);
  const key = !state.token ? "readonly" : { ok: "token_ok", wrong: "token_wrong", checking: "token_checking", unreachable: "token_unreachable" }[state.tokenStatus] || "readonly";
  const mode = $("#mode");
  mode.textContent = t(key);
  mode.className = "mode token-" + (state.token ? state.tokenStatus : "none");
}

// The token is checked as soon as it is entered (a harmless authenticated request), so a
// wrong one is said at once, not at the first action.
async function checkToken(value) {
  state.token = value.trim();
  if (!state.token) { state.tokenStatus = "none"; localStorage.removeItem("tengen.token"); updateMode(); return; }
  state.tokenStatus = "checking"; updateMode();
  try {
    const res = await fetch("/api/auth", { headers: { Authorization: "Bearer " + state.token } });
    state.tokenStatus = res.ok ? "ok" : res.status === 401 || res.status === 403 ? "wrong" : "unreachable";
  } catch (_) { state.tokenStatus = "unreachable"; }
  if (state.tokenStatus === "ok") localStorage.setItem("tengen.token", state.token);
  updateMode();
  render();
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
  let body = options.body;
  if (body !== undefined && !options.raw) { headers["Content-Type"] = "application/json"; body = JSON.stringify(body); }
  if (options.auth) headers["Authorization"] = "Bearer " + state.token;
  const res = await fetch(path, { method: options.method || "GET", headers, body });
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
    toast(t("failed", { error: err.message }));
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
  // #/table/1?token=… — checked, kept in localStorage and dropped from the address bar.
  const withToken = location.hash.match(/^(#[^?]*)\?(?:.*&)?token=([^&]+)/);
  if (withToken) {
    $("#token").value = decodeURIComponent(withToken[2]);
    history.replaceState(null, "", withToken[1] || "#/");
    checkToken($("#token").value);
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

function kindText(kind) {
  return t("k_" + String(kind || ""));
}

// How much a table needs the arbiter: open alerts first (the longest waiting first), then a
// lost camera, then nothing.
function need(s) {
  if (s.open_alerts > 0) {
    const since = s.newest_alert && s.newest_alert.raised_ms ? s.newest_alert.raised_ms : Date.now();
    return [0, since];
  }
  if (s.camera === "lost") return [1, 0];
  return [2, 0];
}
function tableOrder(a, b) {
  const na = Number(a), nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return String(a).localeCompare(String(b));
}

function players(s) {
  if (!s.black && !s.white) return "";
  return t("vs", { black: s.black || "?", white: s.white || "?" });
}

function renderHall() {
  const box = $("#tables");
  $("#sort").value = state.sort;
  $("#only-need").checked = state.onlyNeed;
  if (state.tables.size === 0) { box.innerHTML = `<p class="none">${t("no_tables")}</p>`; return; }
  const none = box.querySelector(".none");
  if (none) none.remove();
  let ids = [...state.tables.keys()];
  if (state.sort === "need") {
    ids.sort((a, b) => {
      const [ga, ta] = need(state.tables.get(a)), [gb, tb] = need(state.tables.get(b));
      return ga - gb || ta - tb || tableOrder(a, b);
    });
  } else ids.sort(tableOrder);
  const shown = state.onlyNeed ? ids.filter((id) => need(state.tables.get(id))[0] < 2) : ids;
  $("#hall-count").textContent = t("shown", { shown: shown.length, all: ids.length });
  // Keep one card per table, update it in place and reorder (a hundred tables redraw cheaply).
  const visible = new Set(shown);
  for (const card of box.querySelectorAll(".card")) card.hidden = !visible.has(card.dataset.table);
  for (const id of shown) {
    const s = state.tables.get(id);
    let card = box.querySelector(`[data-table="${CSS.escape(id)}"]`);
    if (!card) {
      card = document.createElement("a");
      card.className = "card"; card.dataset.table = id; card.href = `#/table/${encodeURIComponent(id)}`;
      card.innerHTML = `<canvas width="190" height="190"></canvas><div class="line"><span class="name"></span><span class="alerts"></span></div><div class="line players"></div><div class="line newest"></div><div class="line"><span class="moveinfo"></span><span class="cam"></span></div>`;
    }
    box.appendChild(card);
    card.hidden = false;
    card.classList.toggle("alerting", s.open_alerts > 0);
    // In a hall of several nodes, the node analysing the table.
    card.querySelector(".name").textContent = s.node ? `${s.name} · ${s.node}` : s.name;
    card.querySelector(".name").title = s.node ? s.node : "";
    card.querySelector(".alerts").innerHTML = s.open_alerts > 0 ? `<span class="badge">${s.open_alerts}</span>` : "";
    card.querySelector(".players").textContent = players(s);
    const a = s.open_alerts > 0 ? s.newest_alert : null;
    card.querySelector(".newest").textContent = a
      ? `${articlePrefix(a.article)}${kindText(a.kind)}${a.raised_ms ? " · " + t("open_for", { age: ageText(a.raised_ms) }) : ""}`
      : "";
    card.querySelector(".moveinfo").textContent = `${t("move_n", { n: s.move_number })} · ${t("to_move", { side: colourName(s.to_move) })}`;
    const cam = card.querySelector(".cam");
    cam.textContent = s.result ? resultText(s) : cameraText(s.camera, s.camera_error);
    cam.className = "cam cam-" + (s.camera_error ? "error" : s.camera);
    cam.title = s.camera_error || "";
    const key = s.legal + s.physical;
    if (card.dataset.drawn !== key) { drawBoard(card.querySelector("canvas"), s.legal, s.physical); card.dataset.drawn = key; }
  }
}

function renderTable() {
  const d = state.detail;
  const id = state.route.table;
  const summary = state.tables.get(id);
  $("#t-name").textContent = summary ? summary.name : id;
  $("#t-players").textContent = summary ? players(summary) : "";
  $("#sgf").href = `/api/tables/${encodeURIComponent(id)}/sgf`;
  if (!d) return;
  const v = d.view;
  const w = v.warnings || [0, 0];
  const phase = I18N.en["phase_" + v.phase] ? t("phase_" + v.phase) : v.phase;
  $("#t-status").textContent = [
    t("move_n", { n: v.moves.length }), t("to_move", { side: colourName(v.to_move) }), phase,
    t("warnings", { b: w[0], w: w[1] }), cameraText(d.camera, d.camera_error),
  ].concat(v.result ? [t("result", { r: resultText(v) })] : []).join(" · ");
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
      const where = (a.points || []).map(human).join(" ");
      const caption = (label) => `${label}${where ? " · " + t("zoomed", { points: where }) : ""}`;
      const evidence = ev && ev.evidence
        ? `<div class="evidence"><figure><img src="/api/events/${ev.id}/before.jpg" alt=""><figcaption>${escapeHtml(caption(t("before")))}</figcaption></figure><figure><img src="/api/events/${ev.id}/after.jpg" alt=""><figcaption>${escapeHtml(caption(t("after")))}</figcaption></figure></div>` : "";
      const rule = ruling(ev);
      const age = a.raised_ms ? ` · ${t("open_for", { age: ageText(a.raised_ms) })}` : "";
      div.innerHTML = `<div class="title">${escapeHtml(articlePrefix(a.article))}${escapeHtml(ev ? text(ev) : kindText(a.kind))}</div><div class="kind">${escapeHtml(kindText(a.kind) + age)}</div>${rule ? `<div class="ruling">${escapeHtml(rule)}</div>` : ""}${evidence}<div class="points">${escapeHtml(where)}</div><div class="buttons write"><button class="confirm" data-confirm="${a.alert_id}">${t("confirm")}</button><button class="dismiss" data-dismiss="${a.alert_id}">${t("dismiss")}</button></div>`;
      alerts.appendChild(div);
    }
  }
  $("#events").innerHTML = state.events.slice(-200).reverse().map((e) =>
    `<li class="${e.severity}">#${e.id} ${timeText(e.at_ms)} ${escapeHtml(articlePrefix(e.article))}${escapeHtml(text(e))}</li>`).join("");
}

// A game's result in the chosen language: the referee's words (exact in English, customary in
// Chinese, each with the record's form), or the record's form alone from an older service.
function resultText(v) {
  const m = v.result_text;
  if (!m) return v.result || "";
  return state.lang === "en" ? m.en : state.lang === "zh-Hant" ? m.zh : (m.zh_hans || m.zh);
}

// The referee's own text in the chosen language (its events carry English and both Chinese
// scripts); the service's own events are worded here.
function text(e) {
  if (!e) return "";
  const m = e.detail && e.detail.message;
  if (m) return state.lang === "en" ? m.en : state.lang === "zh-Hant" ? m.zh : (m.zh_hans || m.zh);
  const d = e.detail || {};
  switch (e.kind) {
    case "camera_lost": return t("ev_camera_lost");
    case "camera_back": return t("ev_camera_back");
    case "game_started": return t("ev_game_started", { start: startText(d.start), komi: d.komi });
    case "arbiter": return t("ev_arbiter", { action: t("act_" + (d.action || "")) });
    case "result": return t("ev_result_set", { r: d.result || "" });
    default: return zh() ? kindText(e.kind) : e.summary;
  }
}

function startText(start) {
  if (start && typeof start === "object" && start.handicap) return t("start_handicap", { n: start.handicap });
  return t(start === "adopt" ? "start_adopt" : "start_even");
}

function ruling(e) {
  const r = e && e.detail && e.detail.ruling;
  if (!r) return "";
  return state.lang === "en" ? r.en : state.lang === "zh-Hant" ? r.zh : (r.zh_hans || r.zh);
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

// ---- a phone as the table's camera ----------------------------------------------------------

async function showPhone() {
  const box = $("#phone");
  if (!box.hidden) { box.hidden = true; return; }
  try {
    const link = await api(`/api/tables/${encodeURIComponent(state.route.table)}/phone`, { auth: true });
    $("#phone-qr").innerHTML = link.svg;
    $("#phone-link").textContent = link.url.replace(/#.*/, "");
    $("#phone-link").href = link.url;
    box.hidden = false;
  } catch (err) { toast(t("failed", { error: err.message })); }
}

// ---- rounds: pairings in, results out ------------------------------------------------------

async function renderRounds() {
  let rounds = [];
  try { rounds = (await api("/api/rounds")).rounds || []; } catch (_) { return; }
  $("#round-list").innerHTML = rounds.map((r) =>
    `<li>${escapeHtml(t("round_n", { n: r.round }))}${r.event ? " · " + escapeHtml(r.event) : ""} · <a href="/api/rounds/${r.round}/opengotha.xml" download>${t("export_results")}</a> · <a href="/api/rounds/${r.round}/records.zip" download>${t("export_records")}</a></li>`).join("");
}

async function importRound(file) {
  const body = await file.text();
  const type = /\.xml$/i.test(file.name) ? "application/xml" : "text/csv";
  try {
    const answer = await api("/api/rounds", { method: "POST", body, raw: true, auth: true, headers: { "Content-Type": type } });
    toast(t("round_started", { n: answer.round, count: answer.games.length }));
    renderRounds();
  } catch (err) { toast(t("failed", { error: err.message })); }
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
  const title = t("new_alert", { table: table ? table.name : event.table });
  if ("Notification" in window && Notification.permission === "granted") {
    try { new Notification(title, { body: articlePrefix(event.article) + text(event), tag: "tengen-" + event.id }); } catch (_) { /* some browsers need a service worker */ }
  }
  toast(title);
}

// ---- live stream --------------------------------------------------------------------------

function connect() {
  const es = new EventSource("/api/stream");
  es.onopen = () => { state.conn = "live"; showConnection(); };
  es.onerror = () => {
    state.conn = "offline"; showConnection();
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
    if (e.kind === "game_started") renderRounds();
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
  const token = $("#token");
  token.value = state.token;
  // Checked when entered: on change (Enter), when pasted (no Enter needed) and on leaving the field.
  token.addEventListener("change", () => checkToken(token.value));
  token.addEventListener("blur", () => { if (token.value.trim() !== state.token || state.tokenStatus === "none") checkToken(token.value); });
  token.addEventListener("paste", () => setTimeout(() => checkToken(token.value), 0));
  token.addEventListener("keydown", (e) => { if (e.key === "Enter") checkToken(token.value); });
  $("#lang").addEventListener("change", (e) => {
    state.lang = e.target.value;
    localStorage.setItem("tengen.lang", state.lang);
    applyLanguage();
  });
  $("#sort").addEventListener("change", (e) => { state.sort = e.target.value; localStorage.setItem("tengen.sort", state.sort); renderHall(); });
  $("#only-need").addEventListener("change", (e) => { state.onlyNeed = e.target.checked; localStorage.setItem("tengen.onlyNeed", state.onlyNeed ? "1" : "0"); renderHall(); });
  $("#round-file").addEventListener("change", (e) => { const f = e.target.files[0]; if (f) importRound(f); e.target.value = ""; });
  $("#sound").addEventListener("click", () => {
    // Browsers allow sound and notifications only after a user gesture.
    try { state.audio = state.audio || new (window.AudioContext || window.webkitAudioContext)(); } catch (_) { /* no audio */ }
    if ("Notification" in window && Notification.permission === "default") Notification.requestPermission();
    $("#sound").dataset.i18n = "alerts_on";
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
    if (a === "phone") showPhone();
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
  // Ages of open alerts move on.
  setInterval(() => { if (state.route.view === "hall") renderHall(); }, 10000);
}

async function start() {
  setup();
  try {
    for (const s of await api("/api/tables")) state.tables.set(s.id, s);
  } catch (err) { toast(err.message); }
  applyLanguage();
  route();
  if (state.token) checkToken(state.token);
  connect();
}

start();
