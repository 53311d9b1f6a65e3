// The okgin web table: plain JavaScript over the JSON API of okgin/web/endpoints.py (docs/play.md).
// Every control is a real <button> whose text or aria-label says what it does, so a screen reader
// and the browser tests drive the same page a person sees.
"use strict";

const $ = (id) => document.getElementById(id);
let config = null;      // GET /api/config
let game = null;        // the current human game's view
let busy = false;       // a request is in flight: ignore further clicks and keys
// <body data-busy> mirrors `busy` (set before a request, cleared after the answer is drawn) so that
// scripts and tests can wait for the page instead of guessing
function setBusy(b) { busy = b; document.body.dataset.busy = String(b); }

// --------------------------------------------------------------------------- API

// Every POST carries a JSON body ("{}" when there is nothing to say): the server refuses others (415).
async function api(method, path, body, extra = {}) {
  const opts = { method, headers: {}, ...extra };
  if (method === "POST") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = body === undefined ? "{}" : (typeof body === "string" ? body : JSON.stringify(body));
  }
  const resp = await fetch(path, opts);
  let data;
  try { data = await resp.json(); } catch (e) { data = { error: `HTTP ${resp.status}` }; }
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

// --------------------------------------------------------------------------- cards

const RED = new Set(["h", "d"]);
const SUIT_NAMES = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// A card face drawn with CSS: rank and suit symbol in two corners and the suit in the middle.
// card = {card: "Th", text: "10♥"}; with `action` it is a button that plays it (a yellow ring:
// "you may press this"). `mark` is one of MARKS: a card you may not discard, or the one just drawn.
const MARKS = {
  locked: { tag: "taken", note: "taken from the discard pile this turn: you may not discard it" },
  fresh: { tag: "new", note: "just drawn" },
};

function cardEl(card, opts = {}) {
  const suit = card.card.slice(-1).toLowerCase();
  const rank = card.text.slice(0, -1);
  const sym = card.text.slice(-1);
  const mark = opts.mark ? MARKS[opts.mark] : null;
  const note = mark ? mark.note : opts.note;
  const cls = ["card", RED.has(suit) ? "red" : "black", opts.mark || ""].join(" ");
  const face = [el("span", { class: "corner", "aria-hidden": "true" }, el("b", { text: rank }), el("i", { text: sym })),
    el("span", { class: "pip", "aria-hidden": "true", text: sym })];
  if (mark) face.push(el("span", { class: "mark", "aria-hidden": "true", text: mark.tag }));
  if (opts.action) {
    const label = opts.action.label + (note ? ` (${note})` : "");
    return el("button", { type: "button", class: cls + " playable", "aria-label": label, title: label,
      "data-action": opts.action.id, "data-card": card.card, onclick: () => play(opts.action.id) }, ...face);
  }
  return el("span", { class: cls, role: "img", "aria-label": `${rank} of ${SUIT_NAMES[suit]}` + (note ? `, ${note}` : ""),
    title: note || null, "data-card": card.card }, ...face);
}

function backEl(extra = "") { return el("span", { class: "card back " + extra, "aria-hidden": "true" }); }

// A hand {melds, deadwood_cards}: melds framed, then the deadwood; `actionFor(card)` makes buttons.
function handEl(hand, actionFor = () => null, markFor = () => null) {
  const box = el("div", { class: "groups" });
  const cards = (cs) => cs.map((c) => cardEl(c, { action: actionFor(c), mark: markFor(c) }));
  for (const m of hand.melds) box.append(el("div", { class: "group meld", role: "group", "aria-label": "meld" }, ...cards(m)));
  if (hand.deadwood_cards.length) {
    box.append(el("div", { class: "group dead", role: "group", "aria-label": "deadwood" }, ...cards(hand.deadwood_cards)));
  }
  return box;
}

// One Tab stop for a row of buttons: the arrow keys move between them (a "roving tabindex").
function roving(box) {
  const buttons = Array.from(box.querySelectorAll("button"));
  buttons.forEach((b, i) => { b.tabIndex = i === 0 ? 0 : -1; });
  box.onkeydown = (ev) => {
    const i = buttons.indexOf(document.activeElement);
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
    if (i < 0 || !step) return;
    const next = buttons[(i + step + buttons.length) % buttons.length];
    buttons[i].tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
    ev.preventDefault();
  };
}

// --------------------------------------------------------------------------- play

// A game is "in progress" while a person could still lose something by leaving it.
function inProgress() { return !!game && !game.finished && !game.abandoned; }

async function abandonGame(keepalive = false) {
  const id = game.id;
  try { await api("POST", `/api/games/${id}/abandon`, {}, keepalive ? { keepalive: true } : {}); } catch (e) { /* gone */ }
}

async function newGame(ask = true) {
  if (busy) return;
  if (ask && inProgress() && !window.confirm("Abandon this game and start a new one? It is recorded as abandoned.")) {
    focusHand();
    return;
  }
  setBusy(true);
  if (inProgress()) await abandonGame();
  const body = { opponent: $("opponent-select").value, hand_only: $("hand-only").checked };
  const player = config.arena && localStorage.getItem("okgin-player");  // the leaderboard's "Your name"
  if (player) body.player = player;
  try {
    game = await api("POST", "/api/games", body);
    showError("");
    renderGame();
  } catch (e) { showError(e.message); }
  setBusy(false);
}

async function play(action) {
  if (!game || busy) return;
  setBusy(true);
  clearKeys();
  try {
    game = await api("POST", `/api/games/${game.id}/actions`, { action });
    showError("");
    renderGame();
  } catch (e) { showError(e.message); }
  setBusy(false);
}

function showError(msg) { $("error").textContent = msg; }

function legalOf(kind) { return game.legal.filter((a) => a.kind === kind); }

function scoreText(v) {
  const [you, opp] = v.scores;
  if (v.hand_only) return "One hand";
  return `Scores: You ${you}, ${v.opponent} ${opp} (game to ${v.target_score})`;
}

function renderGame() {
  const v = game;
  $("play-table").hidden = false;
  $("opp-name").textContent = v.opponent;
  const info = [el("span", { text: scoreText(v) }), el("span", { text: `Hand ${v.hand_no}` })];
  if (v.status === "your_turn") info.push(el("span", { text: `Knock limit ${v.knock_limit_text}` }));
  $("infobar").replaceChildren(...info);
  const before = v.last && v.last[v.opponent];
  const oppMoves = v.opponent_moves.length ? `${v.opponent} just: ${v.opponent_moves.join(", ")}`
    : (before ? `${v.opponent}'s last move: ${before}` : "");
  $("opp-moves").textContent = oppMoves;
  const playing = v.status === "your_turn";
  for (const id of ["you-seat", "prompt"]) $(id).hidden = !playing;
  document.querySelector("#play-table .middle").hidden = !playing;
  $("opp-cards").hidden = !playing;
  $("showdown").hidden = playing;
  if (!playing) $("opp-role").textContent = "";
  if (playing) renderTurn(v); else if (v.result) renderShowdown($("showdown"), v.result, v.names, v);
  focusHand();
}

// After every move the focus goes back to the hand (its first card you may play), so the keyboard
// and a screen reader stay where the next move is; at a showdown, to its first button.
function focusHand() {
  if (!game || $("play").hidden || !$("help-panel").hidden) return;
  if (game.status !== "your_turn") {
    const b = $("showdown").querySelector("button.big");
    if (b) b.focus();
    return;
  }
  const target = $("hand").querySelector("button[tabindex='0']") || $("play-table").querySelector(".middle button")
    || $("hand");
  target.focus({ preventScroll: true });
}

function renderTurn(v) {
  $("opp-role").textContent = v.you_deal ? "" : "(dealer)";
  $("you-role").textContent = v.you_deal ? "(dealer)" : "";
  $("opp-cards").replaceChildren(...Array.from({ length: v.opponent_cards }, () => backEl("small")));
  // stock
  const draw = legalOf("draw")[0];
  const stock = draw
    ? el("button", { type: "button", class: "card back playable", "aria-label": draw.label, title: draw.label,
        onclick: () => play(draw.id) }, el("span", { class: "count", text: String(v.stock) }))
    : el("span", { class: "card back", role: "img", "aria-label": `stock, ${v.stock} cards` },
        el("span", { class: "count", text: String(v.stock) }));
  $("stock").replaceChildren(stock, el("div", { class: "pile-note", text: `${v.stock} cards` }));
  // discard pile
  const take = legalOf("take")[0];
  let top = v.pile_top ? cardEl(v.pile_top, { action: take }) : el("span", { class: "card empty", text: "empty" });
  $("discard").replaceChildren(top, el("div", { class: "pile-note", text: `${v.pile_size} card${v.pile_size === 1 ? "" : "s"}` }));
  const pass = legalOf("pass")[0];
  $("pass-box").replaceChildren(...(pass ? [el("button", { type: "button", class: "big", onclick: () => play(pass.id),
    "data-action": pass.id, text: pass.label })] : []));
  // prompt
  let prompt = `Your turn: ${v.prompt}.`;
  if (v.drawn) prompt += ` You drew the ${v.drawn.text}.`;
  if (v.taken) prompt += ` You took the ${v.taken.text}: it may not be discarded this turn.`;
  if (legalOf("discard").length) prompt += " Keys: type a card (7h, th, 10h) to discard it, k and a card to knock.";
  $("prompt").textContent = prompt;
  // hand: a yellow ring on every card you may discard; the taken card locked; the drawn one marked new
  const discards = new Map(legalOf("discard").map((a) => [a.card, a]));
  const markFor = (c) => (v.taken && c.card === v.taken.card ? "locked" : (v.drawn && c.card === v.drawn.card ? "fresh" : null));
  $("hand").replaceChildren(handEl(v.hand, (c) => discards.get(c.card) || null, markFor));
  roving($("hand"));
  $("you-deadwood").textContent = `Deadwood ${v.hand.deadwood}`;
  const knocks = legalOf("knock");
  $("knocks").replaceChildren(...knocks.map((a) => el("button", { type: "button", class: a.gin ? "knock gin" : "knock",
    "data-action": a.id, "data-card": a.card, onclick: () => play(a.id), text: a.label })));
  roving($("knocks"));
}

// The showdown of a hand: both hands (knocker first) with melds, lay-offs, deadwood and the points.
function renderShowdown(box, r, names, v) {
  const order = r.knocker === null ? [0, 1] : [r.knocker, 1 - r.knocker];
  const parts = [el("h2", { text: `Hand ${r.hand} over: ${r.headline}` })];
  for (const p of order) {
    const role = r.knocker === null ? "" : (p === r.knocker ? (r.how === "gin" ? " (went gin)" : " (knocked)") : " (defending)");
    const melds = { melds: r.melds[p], deadwood_cards: [] };
    const row = el("div", { class: "show-seat" },
      el("h3", { text: `${r.deadwood_titles[p]}${role}` }),
      el("div", { class: "show-hand" }, handEl(melds)));
    if (p === r.knocker && r.knock_card) row.querySelector(".show-hand").append(
      el("div", { class: "group knockcard", role: "group", "aria-label": "discarded face down" },
        cardEl(r.knock_card, { note: "face down" }), el("span", { class: "tag", text: "face down" })));
    if (p !== r.knocker && r.layoffs.length) row.querySelector(".show-hand").append(
      el("div", { class: "group layoff", role: "group", "aria-label": "laid off" },
        ...r.layoffs.map((x) => cardEl(x.card, { note: "laid off onto " + x.onto.map((c) => c.text).join(" ") })),
        el("span", { class: "tag", text: "laid off" })));
    if (r.deadwood_cards[p].length) row.querySelector(".show-hand").append(
      el("div", { class: "group dead", role: "group", "aria-label": "deadwood" },
        ...r.deadwood_cards[p].map((c) => cardEl(c)), el("span", { class: "tag", text: `= ${r.deadwood[p]}` })));
    parts.push(row);
  }
  parts.push(el("p", { class: "score-line", text: r.score_line }));
  const [a, b] = r.scores;
  if (r.game_over) {
    const w = r.game_winner;
    parts.push(el("p", { class: "totals", text: `Game over: ${w === 0 && names[0] === "You" ? "you win" : names[w] + " wins"} the game, ${r.scores[w]} to ${r.scores[1 - w]}.` }));
  } else if (!(v && v.hand_only)) {
    parts.push(el("p", { class: "totals", text: `Totals: ${names[0]} ${a}, ${names[1]} ${b}.` }));
  }
  if (v && v.mode === "play") parts.push(...afterShowdown(v));
  box.replaceChildren(...parts);
}

// Under a person's showdown: whether the result was saved, then Next hand or the game-over buttons.
function afterShowdown(v) {
  const out = [];
  if (v.results_saved === true) out.push(el("p", { class: "saved", id: "results-note", text: "Result saved." }));
  if (v.results_saved === false) {
    out.push(el("p", { class: "error", id: "results-note", role: "alert",
      text: `The result is not saved yet: ${v.results_error} It is kept by the server.` }));
  }
  const buttons = el("div", { class: "after" });
  if (v.next) buttons.append(el("button", { type: "button", class: "big", id: "next-hand", onclick: () => play("next"), text: v.next.label }));
  if (v.new_game) {
    buttons.append(el("button", { type: "button", class: "big", id: "new-game", onclick: () => newGame(false), text: v.new_game.label }));
    buttons.append(el("a", { href: v.log_url, download: `okgin-game-${v.seed}.json`, text: "Download the log" }));
    buttons.append(el("button", { type: "button", onclick: replayThisGame, text: "Replay this game" }));
  }
  out.push(buttons);
  return out;
}

async function replayThisGame() {
  try {
    const log = await api("GET", game.log_url);
    await openReplay(log);
    selectTab("replay");
  } catch (e) { showError(e.message); }
}

// --------------------------------------------------------------------------- keys

// The terminal's commands as keys: s draw, t take, p pass, n next hand; in the discard phase a
// card's keys discard it ("7h", "th" or "10h") and k before a card knocks with it ("k7h"; "kh"
// alone is the king of hearts). "/" opens the command box, "?" the help, Escape clears.
let keys = "";
const CARD_KEYS = /^(?:(k)(?=.)(?![shdc]$))?(10|[a2-9tjqk])([shdc])$/;
const CARD_PREFIX = /^k?(?:1|10|[a2-9tjqk])?$/;

function clearKeys() { keys = ""; $("typed").textContent = ""; }

function cardKey(key) {
  const buf = keys + key;
  const m = buf.match(CARD_KEYS);
  if (m) {
    const card = (m[2] === "10" ? "T" : m[2].toUpperCase()) + m[3];
    const command = (m[1] ? "k " : "") + card;
    clearKeys();
    play(command);  // an illegal one answers with the reason, as in the terminal
    return true;
  }
  if (CARD_PREFIX.test(buf)) {
    keys = buf;
    $("typed").textContent = `Typed: ${buf.startsWith("k") && buf.length > 1 ? "k " + buf.slice(1) : buf}…`;
    return true;
  }
  clearKeys();
  showError(`"${buf}" is not a card: type a rank (a 2-9 t/10 j q k) then a suit (s h d c), e.g. 7h.`);
  return true;
}

function playKey(key) {
  if (game.status === "your_turn") {
    if (legalOf("discard").length || legalOf("knock").length) return /^[a-z0-9]$/.test(key) && cardKey(key);
    const kind = { s: "draw", t: "take", p: "pass" }[key];
    const a = kind && legalOf(kind)[0];
    if (a) play(a.id);
    return !!a;
  }
  if (key === "n" && game.next) { play("next"); return true; }
  return false;
}

document.addEventListener("keydown", (ev) => {
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "?") { toggleHelp(); ev.preventDefault(); return; }
  if (ev.key === "Escape") { clearKeys(); if (!$("help-panel").hidden) toggleHelp(); return; }
  if (!$("replay").hidden) {
    if (ev.key === "ArrowRight") { replayGo(replayPos + 1); ev.preventDefault(); }
    if (ev.key === "ArrowLeft") { replayGo(replayPos - 1); ev.preventDefault(); }
    return;
  }
  if ($("play").hidden || !game || busy) return;
  const key = ev.key.toLowerCase();
  if (key === "/") { $("command").focus(); ev.preventDefault(); return; }
  if (key === "backspace" && keys) { keys = keys.slice(0, -1); $("typed").textContent = keys ? `Typed: ${keys}…` : ""; return; }
  if (key.length === 1 && playKey(key)) ev.preventDefault();
});

function toggleHelp() {
  const panel = $("help-panel");
  panel.hidden = !panel.hidden;
  $("help-button").setAttribute("aria-expanded", String(!panel.hidden));
  if (!panel.hidden) panel.focus(); else focusHand();
}

$("help-button").addEventListener("click", toggleHelp);
$("help-close").addEventListener("click", toggleHelp);

$("command-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("command").value.trim();
  $("command").value = "";
  if (!game) return;
  if (text === "?" || text.toLowerCase() === "help") { $("command").blur(); toggleHelp(); return; }
  if (game.new_game && ["n", "new", "new game"].includes(text.toLowerCase())) { newGame(); return; }
  play(text);
});

$("command").addEventListener("keydown", (ev) => { if (ev.key === "Escape") { $("command").blur(); focusHand(); } });

$("setup").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });

// Leaving or reloading the page mid-game asks first (the browser's own dialog); a game left
// anyway is recorded as abandoned.
window.addEventListener("beforeunload", (ev) => { if (inProgress()) { ev.preventDefault(); ev.returnValue = ""; } });
window.addEventListener("pagehide", () => { if (inProgress()) abandonGame(true); });

// --------------------------------------------------------------------------- watch and replay frames

// One frame: both hands face up, the piles, the move just made, or the showdown at a hand's end.
function renderFrame(box, f, opts = {}) {
  const parts = [];
  const scores = opts.handOnly ? "One hand" : `Scores: ${f.names[0]} ${f.scores[0]}, ${f.names[1]} ${f.scores[1]}`;
  parts.push(el("div", { class: "infobar" }, el("span", { text: scores }), el("span", { text: `Hand ${f.hand_no}` }),
    el("span", { text: `Knock limit ${f.knock_limit_text}` })));
  if (f.move) parts.push(el("p", { class: "prompt move", text: f.move }));
  if (f.result) {
    const sd = el("div", { class: "showdown" });
    renderShowdown(sd, f.result, f.names, { hand_only: opts.handOnly });
    parts.push(sd);
  } else {
    for (const p of [0, 1]) {
      const h = f.hands[p];
      const turn = f.current === p ? " (to play)" : "";
      parts.push(el("div", { class: "seat" },
        el("div", { class: "seat-head" }, el("span", { class: "name", text: f.names[p] }),
          el("span", { class: "role", text: (f.dealer === p ? " (dealer)" : "") + turn }),
          el("span", { class: "deadwood", text: `Deadwood ${h.deadwood}` })),
        el("div", { class: "hand" }, handEl(h))));
      if (p === 0) {
        parts.push(el("div", { class: "middle" },
          el("div", { class: "pile" }, el("div", { class: "pile-label", text: "Stock" }),
            el("span", { class: "card back", role: "img", "aria-label": `stock, ${f.stock} cards` },
              el("span", { class: "count", text: String(f.stock) }))),
          el("div", { class: "pile" }, el("div", { class: "pile-label", text: "Discard pile" }),
            f.pile_top ? cardEl(f.pile_top) : el("span", { class: "card empty", text: "empty" }))));
      }
    }
  }
  if (f.finished) parts.push(el("p", { class: "totals", text: "The game is over." }));
  box.replaceChildren(...parts);
  box.hidden = false;
}

// --------------------------------------------------------------------------- watch

const SPEEDS = [[2000, "slowest"], [1000, "slow"], [500, "normal"], [200, "fast"], [50, "fastest"]];
let watch = null;         // {id, names, handOnly, timer, paused, finished}

async function startWatch() {
  stopWatchTimer();
  try {
    const w = await api("POST", "/api/watches", { a: $("watch-a").value, b: $("watch-b").value,
      hand_only: $("watch-hand-only").checked });
    watch = { id: w.id, handOnly: w.hand_only, paused: false, finished: false };
    renderFrame($("watch-frame"), w.frame, { handOnly: watch.handOnly });
    $("watch-controls").hidden = false;
    setPaused(false);
  } catch (e) { $("watch-frame").hidden = false; $("watch-frame").textContent = e.message; }
}

function watchDelay() { return SPEEDS[Number($("watch-speed").value)][0]; }
function stopWatchTimer() { if (watch && watch.timer) { clearTimeout(watch.timer); watch.timer = null; } }

async function watchStep() {
  if (!watch || watch.finished || watch.inflight) return;
  watch.inflight = true;
  document.body.dataset.stepping = "true";  // as data-busy: tests wait for "false"
  try {
    const f = await api("POST", `/api/watches/${watch.id}/step`);
    renderFrame($("watch-frame"), f, { handOnly: watch.handOnly });
    if (f.finished) { watch.finished = true; setPaused(true); $("watch-pause").disabled = true; $("watch-step").disabled = true; }
    watch.lastWasResult = !!f.result;
  } catch (e) { watch.finished = true; setPaused(true); $("watch-frame").append(el("p", { class: "error", text: e.message })); }
  watch.inflight = false;
  document.body.dataset.stepping = "false";
}

function scheduleWatch() {
  stopWatchTimer();
  if (!watch || watch.paused || watch.finished) return;
  // a showdown stays up four times as long as a move, and at least 1.5 s
  const wait = watch.lastWasResult ? Math.max(1500, 4 * watchDelay()) : watchDelay();
  watch.timer = setTimeout(async () => { await watchStep(); scheduleWatch(); }, wait);
}

function setPaused(p) {
  if (!watch) return;
  watch.paused = p;
  $("watch-pause").textContent = p ? "Resume" : "Pause";
  $("watch-pause").disabled = watch.finished;
  $("watch-step").disabled = watch.finished;
  if (p) stopWatchTimer(); else scheduleWatch();
}

$("watch-setup").addEventListener("submit", (ev) => { ev.preventDefault(); startWatch(); });
$("watch-pause").addEventListener("click", () => setPaused(!watch.paused));
$("watch-step").addEventListener("click", async () => { setPaused(true); await watchStep(); });
$("watch-speed").addEventListener("input", () => {
  const name = SPEEDS[Number($("watch-speed").value)][1];
  $("watch-speed-text").textContent = name;
  $("watch-speed").setAttribute("aria-valuetext", name);
  if (watch && !watch.paused) scheduleWatch();
});

// --------------------------------------------------------------------------- replay

// The server checks the log once and answers its frames a page at a time (at most PAGE frames a
// request); the page keeps the pages it has seen.
const PAGE = 100;
let replay = null;        // {id, moves, episode, frames: Map(move number -> frame)}
let replayPos = 0;

async function openReplay(log) {
  const r = await api("POST", "/api/replays", log);
  replay = { id: r.id, moves: r.moves, episode: r.episode, frames: new Map() };
  r.frames.forEach((f, i) => replay.frames.set(r.start + i, f));
  $("replay-error").textContent = "";
  $("replay-controls").hidden = false;
  await replayGo(0);
}

async function replayFrame(k) {
  if (!replay.frames.has(k)) {
    const start = k - (k % PAGE);
    const r = await api("GET", `/api/replays/${replay.id}/frames?start=${start}&count=${PAGE}`);
    if (replay.frames.size > 20 * PAGE) replay.frames.clear();  // bounded memory on very long logs
    r.frames.forEach((f, i) => replay.frames.set(r.start + i, f));
  }
  return replay.frames.get(k);
}

async function replayGo(k) {
  if (!replay) return;
  const want = Math.max(0, Math.min(replay.moves, k));
  let f;
  try { f = await replayFrame(want); } catch (e) { $("replay-error").textContent = e.message; return; }
  replayPos = want;
  renderFrame($("replay-frame"), f, { handOnly: replay.episode === "hand" });
  $("replay-pos").textContent = `Move ${replayPos} of ${replay.moves}`;
  $("replay-first").disabled = $("replay-back").disabled = replayPos === 0;
  $("replay-last").disabled = $("replay-forward").disabled = replayPos === replay.moves;
}

$("replay-file").addEventListener("change", async () => {
  const file = $("replay-file").files[0];
  if (!file) return;
  try {
    const text = await file.text();
    let log;
    try { log = JSON.parse(text); } catch (e) { throw new Error(`${file.name} is not JSON: ${e.message}`); }
    await openReplay(log);
  } catch (e) { $("replay-error").textContent = e.message; }
});
$("replay-first").addEventListener("click", () => replayGo(0));
$("replay-back").addEventListener("click", () => replayGo(replayPos - 1));
$("replay-forward").addEventListener("click", () => replayGo(replayPos + 1));
$("replay-last").addEventListener("click", () => replayGo(replay.moves));

// --------------------------------------------------------------------------- tabs and start

function selectTab(name) {
  for (const t of ["play", "watch", "replay"]) {
    $(t).hidden = t !== name;
    $(`tab-${t}`).setAttribute("aria-pressed", String(t === name));
  }
  if (name !== "watch" && watch) setPaused(true);
}

for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => selectTab(b.dataset.tab));

async function start() {
  config = await api("GET", "/api/config");
  const opts = (sel, value) => { $(sel).replaceChildren(...config.bots.map((b) => el("option", { value: b, text: b, selected: b === value }))); };
  opts("opponent-select", config.opponent);
  $("help-commands").textContent = config.help;
  $("hand-only").checked = config.hand_only;
  $("watch-hand-only").checked = config.hand_only;
  const [wa, wb] = config.watch || [config.opponent, config.opponent];
  opts("watch-a", wa);
  opts("watch-b", wb);
  $("leaderboard-link").hidden = !config.arena;
  // a leaderboard's replay link: /#replay=MATCH.GAME opens that stored game in the Replay tab
  const stored = /^#replay=([0-9]{1,12})\.([0-9]{1,6})$/.exec(location.hash);
  if (stored) {
    selectTab("replay");
    try { await openReplay(await api("GET", `/api/arena/matches/${stored[1]}/games/${stored[2]}/log`)); } catch (e) { $("replay-error").textContent = e.message; }
    return;
  }
  if (config.watch) { selectTab("watch"); startWatch(); } else { newGame(); }
}

start().catch((e) => { document.querySelector("main").prepend(el("p", { class: "error", role: "alert", text: `Cannot reach the server: ${e.message}` })); });
