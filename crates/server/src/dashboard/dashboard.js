// Tengen referee dashboard: hall view, table view, live updates over SSE, arbiter actions.
// Plain JavaScript served by the binary; no build step. Every visible text comes from I18N (or
// from the referee's own message in the chosen language); the browser test checks each
// language shows nothing untranslated.
"use strict";

const I18N = {
  en: {
    connecting: "connecting…", live: "live", offline: "reconnecting…", token: "Arbiter token",
    enable_alerts: "Enable alerts", alerts_on: "Alerts on", back: "← All tables",
    legend_extra: "on the board, not in the record", legend_missing: "in the record, not on the board",
    legend_dead: "marked dead", legend_alert: "points of an open alert", legend_last: "last move",
    pass_black: "Black passes", pass_white: "White passes",
    mark_dead: "Mark dead stones", mark_dead_done: "Done marking", end_game: "End game",
    set_result: "Set result", swap_colours: "Wrong colours (Art. 17.1)", correct: "Correct record from board", correct_move: "Correct a move",
    new_game: "New game", download_sgf: "Download SGF", alerts: "Alerts", camera: "Camera",
    moves: "Moves", events: "Events", no_alerts: "No open alerts.", confirm: "Confirm",
    dismiss: "Dismiss", before: "Before", after: "After", zoomed: "zoomed on {points}, ringed in orange",
    move_n: "Move {n}", to_move: "{side} to move", black: "Black", white: "White",
    cam_live: "camera live", cam_lost: "CAMERA LOST", cam_waiting: "no frame yet", cam_error: "CAMERA ERROR",
    readonly: "read-only (enter the arbiter token to act)", token_checking: "checking the token…",
    token_ok: "✓ arbiter", token_wrong: "✗ wrong token: read-only", token_unreachable: "cannot check the token (no connection)",
    warnings: "warnings {b} / {w}", result: "Result {r}",
    phase_playing: "playing", phase_ended: "ended", phase_scored: "scored", phase_waiting: "waiting for the board", phase_finished: "finished",
    count: "Count", sure_adopt: "Take the board as it is now as the legal position (correcting the record)?",
    new_alert: "New infraction at {table}", ask_result: "Result (e.g. B+3.5, W+R, Draw):", ask_correct_n: "Move number to correct:",
    ask_correct_p: "Right point (e.g. Q16, or \"pass\"):", sure_end: "End this game?",
    sure_colours: "The players hold the wrong colours (Art. 17.1)? Up to move 10 the game restarts with the right colours; after it the game stands.",
    sure_new: "Start a new game at this table?", done: "Done", failed: "Failed: {error}",
    tap_dead: "Tap stones to mark them dead, then press “Done marking”.", no_tables: "No tables configured.",
    sort: "Order", sort_need: "needs me first", sort_table: "by table", only_need: "only tables that need me",
    shown: "{shown} of {all} tables", open_for: "open {age}", vs: "{black} – {white}", pass: "pass",
    rounds: "Rounds", import_round: "Import a round (OpenGotha XML or CSV)", round_n: "Round {n}",
    round_started: "Round {n}: {count} games started", export_results: "results for OpenGotha", export_records: "all records (ZIP)",
    seconds: "{n} s", minutes: "{n} min", hours: "{n} h",
    ev_camera_lost: "No frame from the camera", ev_camera_back: "The camera is sending frames again",
    ev_game_started: "New game ({start}), komi {komi}", ev_arbiter: "Arbiter: {action}", ev_result_set: "Result set by the arbiter: {r}",
    start_even: "even", start_adopt: "board as found", start_handicap: "{n} handicap stones",
    act_confirm: "confirm", act_dismiss: "dismiss", act_pass: "pass", act_set_colours: "players’ colours", act_end_game: "end of game",
    act_mark_dead: "dead stones", act_set_result: "result", act_correct_record: "record corrected", act_count: "count",
    act_adopt_physical: "board adopted", act_set_to_move: "side to move", act_new_game: "new game",
    k_start: "start", k_move: "move", k_capture: "capture", k_pass: "pass", k_resync: "moves missed", k_occluded: "board covered",
    k_board_moved: "board moved", k_unclear_point: "unclear point", k_game_end: "end of play", k_dead_stones: "dead stones",
    k_result: "result", k_warning: "warning", k_wrong_colours: "wrong colours", k_double_move: "two moves in a row",
    k_takeback: "takeback", k_moved_stone: "moved stone", k_scattered_board: "scattered board", k_wrong_capture: "wrong capture",
    k_missed_capture: "missed capture", k_ko_retaken: "ko retaken", k_forbidden_point: "forbidden point", k_repetition: "repetition",
    k_no_result: "no result", k_correction: "correction", k_setup_mismatch: "board at the start", k_camera_lost: "camera lost",
    k_camera_back: "camera back", k_game_started: "new game", k_arbiter: "arbiter",
    phone_camera: "Phone as camera", phone_scan: "Scan with the phone that will film this board (the link works for this table only):",
  },
  "zh-Hans": {
    connecting: "连接中…", live: "在线", offline: "重新连接…", token: "裁判口令",
    enable_alerts: "开启提醒", alerts_on: "提醒已开", back: "← 全部棋桌",
    legend_extra: "棋盘上有、棋谱中无", legend_missing: "棋谱中有、棋盘上无",
    legend_dead: "已标为死子", legend_alert: "待处理警示所涉的点", legend_last: "最后一手",
    pass_black: "黑方虚着", pass_white: "白方虚着",
    mark_dead: "标记死子", mark_dead_done: "完成标记", end_game: "终局",
    set_result: "录入结果", swap_colours: "拿错黑白棋（第十七条第一款）", correct: "按棋盘更正棋谱", correct_move: "更正一手",
    new_game: "新对局", download_sgf: "下载棋谱", alerts: "警示", camera: "摄像头",
    moves: "着手", events: "事件", no_alerts: "没有待处理的警示。", confirm: "确认犯规",
    dismiss: "驳回", before: "之前", after: "之后", zoomed: "放大显示{points}，橙色圆圈标出",
    move_n: "第{n}手", to_move: "{side}方行棋", black: "黑", white: "白",
    cam_live: "摄像头正常", cam_lost: "摄像头失联", cam_waiting: "尚无画面", cam_error: "摄像头故障",
    readonly: "只读（输入裁判口令后可操作）", token_checking: "正在核对口令…",
    token_ok: "✓ 裁判", token_wrong: "✗ 口令错误：只读", token_unreachable: "无法核对口令（未连接）",
    warnings: "警告 黑{b}次 / 白{w}次", result: "结果 {r}",
    phase_playing: "对局中", phase_ended: "已终局", phase_scored: "已计点", phase_waiting: "等待棋盘", phase_finished: "已结束",
    count: "数子", sure_adopt: "以棋盘现状为合法局面（更正棋谱）？",
    new_alert: "{table}出现新的犯规嫌疑", ask_result: "结果（如 B+3.5、W+R、和棋）：", ask_correct_n: "要更正的手数：",
    ask_correct_p: "正确位置（如 Q16，虚着请输入 pass）：", sure_end: "确定终局？",
    sure_colours: "确认拿错黑白棋（第十七条第一款）？第10手之内改正并重新开始；超过10手对局有效。",
    sure_new: "在此棋桌开始新对局？", done: "完成", failed: "失败：{error}",
    tap_dead: "点击棋子标记死子，然后按“完成标记”。", no_tables: "未配置棋桌。",
    sort: "排序", sort_need: "需处理的在前", sort_table: "按棋桌", only_need: "只看需处理的棋桌",
    shown: "显示{shown}桌，共{all}桌", open_for: "已等{age}", vs: "{black} 对 {white}", pass: "虚着",
    rounds: "轮次", import_round: "导入一轮对阵（OpenGotha XML 或 CSV）", round_n: "第{n}轮",
    round_started: "第{n}轮：已开始{count}局", export_results: "导出结果（OpenGotha）", export_records: "全部棋谱（ZIP）",
    seconds: "{n}秒", minutes: "{n}分钟", hours: "{n}小时",
    ev_camera_lost: "摄像头没有画面", ev_camera_back: "摄像头恢复画面",
    ev_game_started: "新对局（{start}），贴目{komi}", ev_arbiter: "裁判操作：{action}", ev_result_set: "裁判录入结果：{r}",
    start_even: "分先", start_adopt: "按现有盘面", start_handicap: "让{n}子",
    act_confirm: "确认", act_dismiss: "驳回", act_pass: "虚着", act_set_colours: "执子", act_end_game: "终局",
    act_mark_dead: "死子", act_set_result: "结果", act_correct_record: "更正棋谱", act_count: "数子",
    act_adopt_physical: "以盘面为准", act_set_to_move: "轮到哪方", act_new_game: "新对局",
    k_start: "开局", k_move: "着手", k_capture: "提子", k_pass: "虚着", k_resync: "漏看着手", k_occluded: "棋盘被遮挡",
    k_board_moved: "棋盘移动", k_unclear_point: "无法辨认的点", k_game_end: "终局", k_dead_stones: "死子",
    k_result: "结果", k_warning: "警告", k_wrong_colours: "拿错黑白棋", k_double_move: "连下两着",
    k_takeback: "悔棋", k_moved_stone: "移动棋子", k_scattered_board: "棋局散乱", k_wrong_capture: "误提",
    k_missed_capture: "未提或漏提", k_ko_retaken: "提劫违规", k_forbidden_point: "禁着点", k_repetition: "全局同形",
    k_no_result: "无胜负", k_correction: "更正", k_setup_mismatch: "开局盘面不符", k_camera_lost: "摄像头失联",
    k_camera_back: "摄像头恢复", k_game_started: "新对局", k_arbiter: "裁判",
    phone_camera: "用手机当摄像头", phone_scan: "用拍摄本棋盘的手机扫描（此链接只对本桌有效）：",
  },
  "zh-Hant": {
    connecting: "連線中…", live: "在線", offline: "重新連線…", token: "裁判口令",
    enable_alerts: "開啟提醒", alerts_on: "提醒已開", back: "← 全部棋桌",
    legend_extra: "棋盤上有、棋譜中無", legend_missing: "棋譜中有、棋盤上無",
    legend_dead: "已標為死子", legend_alert: "待處理警示所涉的點", legend_last: "最後一手",
    pass_black: "黑方虛著", pass_white: "白方虛著",
    mark_dead: "標記死子", mark_dead_done: "完成標記", end_game: "終局",
    set_result: "錄入結果", swap_colours: "拿錯黑白棋（第十七條第一款）", correct: "按棋盤更正棋譜", correct_move: "更正一手",
    new_game: "新對局", download_sgf: "下載棋譜", alerts: "警示", camera: "攝像機",
    moves: "著手", events: "事件", no_alerts: "沒有待處理的警示。", confirm: "確認犯規",
    dismiss: "駁回", before: "之前", after: "之後", zoomed: "放大顯示{points}，橙色圓圈標出",
    move_n: "第{n}手", to_move: "{side}方行棋", black: "黑", white: "白",
    cam_live: "攝像機正常", cam_lost: "攝像機失聯", cam_waiting: "尚無畫面", cam_error: "攝像機故障",
    readonly: "唯讀（輸入裁判口令後可操作）", token_checking: "正在核對口令…",
    token_ok: "✓ 裁判", token_wrong: "✗ 口令錯誤：唯讀", token_unreachable: "無法核對口令（未連線）",
    warnings: "警告 黑{b}次 / 白{w}次", result: "結果 {r}",
    phase_playing: "對局中", phase_ended: "已終局", phase_scored: "已計點", phase_waiting: "等待棋盤", phase_finished: "已結束",
    count: "數子", sure_adopt: "以棋盤現狀為合法局面（更正棋譜）？",
    new_alert: "{table}出現新的犯規嫌疑", ask_result: "結果（如 B+3.5、W+R、和棋）：", ask_correct_n: "要更正的手數：",
    ask_correct_p: "正確位置（如 Q16，虛著請輸入 pass）：", sure_end: "確定終局？",
    sure_colours: "確認拿錯黑白棋（第十七條第一款）？第10手之內改正並重新開始；超過10手對局有效。",
    sure_new: "在此棋桌開始新對局？", done: "完成", failed: "失敗：{error}",
    tap_dead: "點擊棋子標記死子，然後按「完成標記」。", no_tables: "未設定棋桌。",
    sort: "排序", sort_need: "需處理的在前", sort_table: "按棋桌", only_need: "只看需處理的棋桌",
    shown: "顯示{shown}桌，共{all}桌", open_for: "已等{age}", vs: "{black} 對 {white}", pass: "虛著",
    rounds: "輪次", import_round: "匯入一輪對陣（OpenGotha XML 或 CSV）", round_n: "第{n}輪",
    round_started: "第{n}輪：已開始{count}局", export_results: "匯出結果（OpenGotha）", export_records: "全部棋譜（ZIP）",
    seconds: "{n}秒", minutes: "{n}分鐘", hours: "{n}小時",
    ev_camera_lost: "攝像機沒有畫面", ev_camera_back: "攝像機恢復畫面",
    ev_game_started: "新對局（{start}），貼目{komi}", ev_arbiter: "裁判操作：{action}", ev_result_set: "裁判錄入結果：{r}",
    start_even: "分先", start_adopt: "按現有盤面", start_handicap: "讓{n}子",
    act_confirm: "確認", act_dismiss: "駁回", act_pass: "虛著", act_set_colours: "執子", act_end_game: "終局",
    act_mark_dead: "死子", act_set_result: "結果", act_correct_record: "更正棋譜", act_count: "數子",
    act_adopt_physical: "以盤面為準", act_set_to_move: "輪到哪方", act_new_game: "新對局",
    k_start: "開局", k_move: "著手", k_capture: "提子", k_pass: "虛著", k_resync: "漏看著手", k_occluded: "棋盤被遮擋",
    k_board_moved: "棋盤移動", k_unclear_point: "無法辨認的點", k_game_end: "終局", k_dead_stones: "死子",
    k_result: "結果", k_warning: "警告", k_wrong_colours: "拿錯黑白棋", k_double_move: "連下兩著",
    k_takeback: "悔棋", k_moved_stone: "移動棋子", k_scattered_board: "棋局散亂", k_wrong_capture: "誤提",
    k_missed_capture: "未提或漏提", k_ko_retaken: "提劫違規", k_forbidden_point: "禁著點", k_repetition: "全局同形",
    k_no_result: "無勝負", k_correction: "更正", k_setup_mismatch: "開局盤面不符", k_camera_lost: "攝像機失聯",
    k_camera_back: "攝像機恢復", k_game_started: "新對局", k_arbiter: "裁判",
    phone_camera: "用手機當攝像機", phone_scan: "用拍攝本棋盤的手機掃描（此連結只對本桌有效）：",
  },
};
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
