// The history page: GET /api/history drawn as the players' statistics and every past game, newest
// first, each opening on its story (the public log of its final view) and its summary.
"use strict";

(() => {
  const el = Companion.h;  // text is always set as text: names are never HTML

  const STATUS = {setup: "setting up", playing: "not finished", "game-over": "finished"};

  function when(at) {
    const date = new Date(at);
    return isNaN(date) ? at : date.toLocaleString([], {dateStyle: "medium", timeStyle: "short"});
  }

  function drawPlayers(history) {
    const box = document.getElementById("players");
    if (!history.players.length) {
      box.replaceChildren(el("p", {class: "empty"}, "No finished game yet."));
      return;
    }
    const titles = Object.fromEntries(history.games.map((g) => [g.game, g.title]));
    const body = el("tbody", {});
    for (const p of history.players) {
      const perGame = Object.entries(p.games).map(([game, g]) => `${titles[game] || game} ${g.won}/${g.played}`);
      // Per game under the name, not in a column of its own: three columns fit a phone.
      body.append(el("tr", {}, el("th", {scope: "row"}, p.player, el("span", {class: "per-game"}, perGame.join(" · "))),
        el("td", {}, String(p.played)), el("td", {}, String(p.won))));
    }
    const head = el("thead", {}, el("tr", {}, el("th", {scope: "col"}, "Player (won/played per game)"),
      el("th", {scope: "col"}, "Played"), el("th", {scope: "col"}, "Won")));
    box.replaceChildren(el("table", {class: "players"}, head, body));
  }

  function drawGames(history) {
    const box = document.getElementById("games");
    if (!history.games.length) {
      box.replaceChildren(el("p", {class: "empty"}, "No game in the journal yet."));
      return;
    }
    box.replaceChildren(...history.games.map((g) => {
      const names = g.players.map((p) => p.name).join(", ");
      const result = g.winners.length ? `${g.winners.join(" & ")} won` : STATUS[g.status] || g.status;
      const rounds = g.rounds ? ` · ${g.rounds} round${g.rounds === 1 ? "" : "s"}` : "";
      const summary = el("summary", {}, el("strong", {}, g.title), ` · ${when(g.started_at)}`,
        el("span", {class: "who"}, `${names}${rounds} · ${result}`));
      const lines = g.summary.map((line) => el("p", {}, line));
      const results = el("div", {class: "results", dataset: {game: g.game}});
      const story = el("ol", {class: "log"}, ...g.log.map((line) => el("li", {}, line)));
      drawResults(g, results);
      return el("details", {class: "game", id: `game-${g.id}`}, summary, el("div", {class: "summary"}, ...lines),
        results, story);
    }));
  }

  // Each round's result, drawn by the game's own renderer as on the scoreboard (its `results(view)`),
  // from the part of the final view the record carries; a game without one shows its summary alone.
  function drawResults(game, box) {
    if (!game.board) return;
    Companion.loadCatalog().then(() => Companion.loadRenderer(game.game)).then((renderer) => {
      const cards = renderer && renderer.results ? renderer.results(game.board) : [];
      if (cards.length) box.replaceChildren(el("h3", {}, "Round by round"), ...cards);
    });
  }

  fetch("/api/history", {cache: "no-store"}).then((r) => r.json()).then((history) => {
    drawPlayers(history);
    drawGames(history);
    const opened = location.hash && document.getElementById(location.hash.slice(1));
    if (opened) opened.open = true;
  }).catch(() => {
    document.getElementById("games").replaceChildren(el("p", {class: "empty"}, "The table does not answer; reload to try again."));
  });
})();
