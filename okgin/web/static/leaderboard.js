// The leaderboard: ratings with their CIs, each pair's results with links to replay their games, and a
// person's own record, all read from the GET routes under /api/arena (okgin/web/arena.py). Plain text
// only (textContent): names come from the store and are never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const PLAYER_KEY = "okgin-player";  // the name the table's page sends with a new game (app.js)

async function get(path) {
  const resp = await fetch(path);
  let data;
  try { data = await resp.json(); } catch (e) { data = { error: `HTTP ${resp.status}` }; }
  if (!resp.ok) throw new Error(data.error || `HTTP ${resp.status}`);
  return data;
}

function cell(row, text, attrs = {}) {
  const td = document.createElement("td");
  td.textContent = text;
  for (const [k, v] of Object.entries(attrs)) td.setAttribute(k, v);
  row.append(td);
  return td;
}

function replayLink(matchId, game, label) {
  const a = document.createElement("a");
  a.href = `/#replay=${matchId}.${game}`;
  a.textContent = label;
  return a;
}

const fmt = (x, digits) => (x >= 0 ? "+" : "") + x.toFixed(digits);

async function loadRatings() {
  const r = await get("/api/arena/ratings");
  const body = $("ratings").querySelector("tbody");
  body.replaceChildren();
  $("ratings-note").textContent = r.ratings.length
    ? `Bradley-Terry on ${r.hands} hands over ${r.pairs} pairs, Elo scale, ${r.anchor} = 0; 95% CIs: ${r.ci_method}.`
    : "No results yet.";
  r.ratings.forEach((row, k) => {
    const tr = document.createElement("tr");
    cell(tr, String(k + 1));
    cell(tr, row.agent, { "data-agent": row.agent });
    cell(tr, row.kind);
    cell(tr, row.rating.toFixed(0), { class: "rating" });
    cell(tr, row.rating_ci ? `[${row.rating_ci[0].toFixed(0)}, ${row.rating_ci[1].toFixed(0)}]` : "", { class: "ci" });
    cell(tr, String(row.hands));
    cell(tr, row.win_rate.toFixed(3));
    cell(tr, fmt(row.points_per_hand, 2));
    body.append(tr);
  });
}

async function showPair(p) {
  const r = await get(`/api/arena/matches?a=${p.a}&b=${p.b}&limit=20`);
  $("pair-matches-title").textContent = `${p.name_a} against ${p.name_b}: the latest ${r.matches.length} matches`;
  const body = $("pair-matches-table").querySelector("tbody");
  body.replaceChildren();
  for (const m of r.matches) {
    const aIsFirst = m.agent_a_id === p.a;
    const tr = document.createElement("tr");
    cell(tr, String(m.id));
    cell(tr, m.source);
    cell(tr, aIsFirst ? p.name_a : p.name_b);
    cell(tr, String(m.hands));
    cell(tr, String(m.wins_a));
    cell(tr, String(m.wins_b));
    cell(tr, fmt(m.points_a, 0));
    const links = cell(tr, m.replays.length ? "" : "no log kept");
    m.replays.slice(0, 10).forEach((g, k) => {
      if (k) links.append(" ");
      links.append(replayLink(m.id, g, m.replays.length > 1 ? `game ${g + 1}` : "replay"));
    });
    body.append(tr);
  }
  $("pair-matches").hidden = false;
}

async function loadPairs() {
  const r = await get("/api/arena/pairs");
  const body = $("pairs").querySelector("tbody");
  body.replaceChildren();
  for (const p of r.pairs) {
    const tr = document.createElement("tr");
    cell(tr, p.name_a);
    cell(tr, p.name_b);
    cell(tr, String(p.matches));
    cell(tr, String(p.hands));
    cell(tr, String(p.wins_a));
    cell(tr, String(p.wins_b));
    cell(tr, String(p.voids));
    cell(tr, `${p.forfeits_a}/${p.forfeits_b}`);
    cell(tr, p.win_rate.toFixed(3));
    cell(tr, fmt(p.points_per_hand, 2));
    const td = cell(tr, "");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `Matches of ${p.name_a} and ${p.name_b}`;
    b.addEventListener("click", () => showPair(p).catch((e) => { $("lb-error").textContent = e.message; }));
    td.append(b);
    body.append(tr);
  }
}

async function showMe(name) {
  $("me-error").textContent = "";
  let r;
  try { r = await get(`/api/arena/people/${encodeURIComponent(name)}`); } catch (e) {
    $("me-error").textContent = e.message;
    $("me-opponents").hidden = $("me-recent").hidden = true;
    return;
  }
  localStorage.setItem(PLAYER_KEY, r.player);
  const ob = $("me-opponents").querySelector("tbody");
  ob.replaceChildren();
  for (const o of r.opponents) {
    const tr = document.createElement("tr");
    [o.opponent, o.games, o.won, o.lost, o.hands, o.hands_won].forEach((x) => cell(tr, String(x)));
    cell(tr, fmt(o.points_per_hand, 2));
    ob.append(tr);
  }
  const rb = $("me-recent").querySelector("tbody");
  rb.replaceChildren();
  for (const g of r.recent) {
    const tr = document.createElement("tr");
    cell(tr, String(g.id));
    cell(tr, g.opponent);
    cell(tr, g.abandoned ? "abandoned" : g.won ? "won" : g.lost ? "lost" : "unfinished");
    cell(tr, String(g.hands));
    cell(tr, fmt(g.points, 0));
    const td = cell(tr, g.replay ? "" : "no log");
    if (g.replay) td.append(replayLink(g.id, 0, "replay"));
    rb.append(tr);
  }
  $("me-opponents").hidden = $("me-recent").hidden = false;
}

$("me-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("me-name").value.trim();
  if (name) showMe(name);
});

async function start() {
  const saved = localStorage.getItem(PLAYER_KEY);
  if (saved) $("me-name").value = saved;
  try {
    await loadRatings();
    await loadPairs();
    if (saved) await showMe(saved);
  } catch (e) { $("lb-error").textContent = e.message; }
  $("leaderboard").dataset.loading = "false";
}

start();
