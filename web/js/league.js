// The league page: polls GET /api/league and draws tables, standings and the last games.
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

function drawStandings(league) {
  const box = document.getElementById("standings");
  box.replaceChildren();
  if (!league.standings.length) box.append(el("p", { class: "empty" }, "No finished game yet."));
  for (const game of league.standings) {
    const body = el("tbody", {});
    const best = game.players.length ? game.players[0] : null;
    for (const p of game.players) {
      const leader = best && p.won === best.won && p.points === best.points && p.won > 0;
      body.append(el("tr", leader ? { class: "leader" } : {},
        el("td", {}, p.player), el("td", {}, String(p.played)), el("td", {}, String(p.won)), el("td", {}, String(p.points))));
    }
    const head = el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Player"), el("th", { scope: "col" }, "Played"),
      el("th", { scope: "col" }, "Won"), el("th", { scope: "col" }, "Points")));
    const games = `${game.games} game${game.games === 1 ? "" : "s"}`;
    box.append(el("article", { class: "game" }, el("h3", {}, `${game.title} `, el("small", {}, games)),
      el("table", {}, head, body)));
  }
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
