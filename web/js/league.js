// The league page: polls GET /api/league and draws tables, standings and ratings, and the last games.
"use strict";

const POLL_MS = 5000;
const nightSelect = document.getElementById("night");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child);  // strings become text: names are never HTML
  return node;
}

const STATUS = { setup: "setting up", playing: "playing", "game-over": "finished", idle: "no game" };

function titleOf(league, game) {
  const entry = league.standings.find((s) => s.game === game);
  return game ? (entry ? entry.title : game) : "no game";
}

function drawTables(league) {
  const box = document.getElementById("tables");
  box.replaceChildren();
  if (!league.tables.length) box.append(el("p", { class: "empty" }, "No table has been seen yet."));
  for (const t of league.tables) {
    const round = t.round && t.status === "playing" ? ` · round ${t.round}` : "";
    const what = t.game ? `${titleOf(league, t.game)} · ${STATUS[t.status] || t.status}${round}` : "no game running";
    const players = el("ul", {});
    for (const p of t.players) players.append(el("li", {}, `${p.name} `, el("b", {}, String(p.score ?? 0))));
    box.append(el("article", { class: `table${t.online ? " online" : ""}` },
      el("h3", {}, t.table, el("span", { class: "presence" }, t.online ? "online" : "offline")),
      el("p", { class: "what" }, what), players));
  }
}

function th(text, title) {
  return el("th", title ? { scope: "col", title } : { scope: "col" }, text);
}

function standingsTable(game) {
  const body = el("tbody", {});
  const best = game.players.length ? game.players[0] : null;
  for (const p of game.players) {
    const leader = best && p.won === best.won && p.points === best.points && p.won > 0;
    body.append(el("tr", leader ? { class: "leader" } : {},
      el("td", {}, p.player), el("td", {}, String(p.played)), el("td", {}, String(p.won)), el("td", {}, String(p.points))));
  }
  const head = el("thead", {}, el("tr", {}, th("Player"), th("Played"), th("Won"), th("Points")));
  return el("table", {}, head, body);
}

// Ratings best first: the rating (mu - 3 sigma) large, the estimate and its uncertainty beside it.
function ratingsTable(players) {
  const body = el("tbody", {});
  players.forEach((p, i) => {
    body.append(el("tr", i === 0 ? { class: "leader" } : {},
      el("td", {}, p.player), el("td", { class: "rating" }, p.rating.toFixed(1)),
      el("td", { class: "skill" }, `${p.mu.toFixed(1)} ± ${p.sigma.toFixed(1)}`), el("td", {}, String(p.played))));
  });
  const head = el("thead", {}, el("tr", {}, th("Player"), th("Rating", "μ − 3σ"),
    th("μ ± σ", "skill estimate ± its uncertainty"), th("Games", "games rated")));
  return el("table", {}, head, body);
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function drawStandings(league) {
  const box = document.getElementById("standings");
  box.replaceChildren();
  const rated = new Map(league.ratings.games.map((g) => [g.game, g]));
  const games = league.standings.map((s) => s.game);
  for (const g of league.ratings.games) if (!games.includes(g.game)) games.push(g.game);
  if (!games.length) box.append(el("p", { class: "empty" }, "No finished game yet."));
  for (const name of games) {
    const standing = league.standings.find((s) => s.game === name);
    const rating = rated.get(name);
    const title = standing ? standing.title : rating.title;
    const count = standing ? plural(standing.games, "game") : "none this night";
    box.append(el("article", { class: "game", "data-game": name }, el("h3", {}, `${title} `, el("small", {}, count)),
      el("div", { class: "pair" },
        el("div", { class: "standing" }, el("h4", {}, "Standings"),
          standing ? standingsTable(standing) : el("p", { class: "empty" }, "Not played this night.")),
        el("div", { class: "ratings" }, el("h4", {}, "Ratings"),
          rating ? ratingsTable(rating.players) : el("p", { class: "empty" }, "No game rated yet.")))));
  }
  drawOverall(league);
}

function drawOverall(league) {
  const { overall, left_out: leftOut } = league.ratings;
  const card = document.getElementById("overall");
  card.hidden = !overall.games && !leftOut.length;
  document.getElementById("overall-count").textContent = plural(overall.games, "game");
  document.getElementById("ratings-scope").textContent = league.night ? `up to ${league.night}` : "over all nights";
  const notes = leftOut.map((g) => el("li", {}, `${g.table}, ${g.game}: ${g.reason}`));
  card.querySelector(".ratings").replaceChildren(ratingsTable(overall.players),
    ...(notes.length ? [el("p", { class: "left-out" }, "Not rated:"), el("ul", { class: "left-out" }, ...notes)] : []));
}

function drawRecent(league) {
  const list = document.getElementById("recent");
  list.replaceChildren();
  for (const r of league.recent) {
    const when = new Date(r.started_at).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
    const won = r.winners.length ? `${r.winners.join(" & ")} won` : "no winner";
    list.append(el("li", {}, `${titleOf(league, r.game)}: ${won} `, el("span", { class: "meta" }, `${r.table}, ${when}`)));
  }
  if (!league.recent.length) list.append(el("li", { class: "empty" }, "None yet."));
}

function drawNights(league) {
  const chosen = nightSelect.value;
  const options = [el("option", { value: "" }, "All nights")];
  for (const n of league.nights) options.push(el("option", { value: n.night }, `${n.night} (${n.games})`));
  nightSelect.replaceChildren(...options);
  nightSelect.value = chosen;
}

async function refresh() {
  const night = nightSelect.value;
  try {
    const response = await fetch(`/api/league${night ? `?night=${encodeURIComponent(night)}` : ""}`, { cache: "no-store" });
    const league = await response.json();
    drawNights(league);
    drawTables(league);
    drawStandings(league);
    drawRecent(league);
    document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    document.getElementById("updated").textContent = "the league server does not answer; retrying";
  }
}

nightSelect.addEventListener("change", refresh);
refresh();
setInterval(refresh, POLL_MS);
