//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// Spy Team on the scoreboard: four seats around the table (partners facing each other), the trick in
// the middle, each seat's tricks against its target, the teams' missions and tiles, and a summary when
// a round or the game ends. Everything comes from the public view: the companion never sees a hand.
"use strict";

(() => {
  const {h} = Companion;
  // Seat 0 sits at the bottom, then clockwise: left, top, right.
  const PLACES = ["south", "west", "north", "east"];
  // Cards already shown by the previous render: only a card that is new gets the "drop" animation,
  // so the first cards of a trick do not jump again each time another one is played.
  let shown = new Set();

  function teamClass(view, seat) {
    return view.teams[0].seats.includes(seat) ? "team-a" : "team-b";
  }

  function card(play, classes, fresh) {
    const key = `${classes.includes("taken") ? "t" : "p"}:${play.card}`;
    fresh.add(key);
    const isNew = !shown.has(key);
    return h("div", {class: `card ${play.colour} ${classes} ${isNew ? "fresh" : ""}`.trim(),
      title: play.name, dataset: {card: play.card}},
    h("span", {class: "number"}, play.number));
  }

  // The trick on the table: the cards of the trick in progress or, between tricks, the trick just
  // taken (it stays on show until the next card is led, even into the next round's mission choice).
  function tableCards(view) {
    if (view.trick.length) return {kind: "trick", cards: view.trick};
    const last = view.last_trick;
    if (last && (last.round === view.round || (last.round === view.round - 1 && !view.played.length))) {
      return {kind: "taken", cards: last.cards, winner: last.winner, camouflage: last.camouflage, round: last.round};
    }
    return {kind: "none", cards: []};
  }

  // The card that takes the trick so far: the highest of the lead colour (a fourth card of the same
  // colour would make it Camouflage, where the lowest wins; the centre says so).
  function bestSoFar(trick) {
    if (!trick.length) return null;
    const lead = trick[0].colour;
    return trick.filter((p) => p.colour === lead).reduce((a, b) => (b.number > a.number ? b : a));
  }

  function pips(won, target) {
    if (target === null) return h("div", {class: "pips unknown"});
    const total = Math.max(won, target);
    const dots = [];
    for (let i = 0; i < total; i++) {
      const cls = i >= target ? "pip over" : i < won ? "pip on" : "pip";
      dots.push(h("span", {class: cls}));
    }
    return h("div", {class: `pips ${won === target ? "exact" : ""}`, "aria-hidden": "true"}, dots);
  }

  // The round just finished, until the next round's first input (a mission chosen): then the seats show
  // its tricks against its targets, and the centre which mission was completed or sabotaged.
  function justFinished(view) {
    const last = view.rounds.length ? view.rounds[view.rounds.length - 1] : null;
    if (!last || !last.targets || last.targets.length !== view.players.length) return null;
    if (view.status !== "playing" || last.round !== view.round - 1) return null;
    return view.teams.every((t) => !t.mission) && !view.played.length ? last : null;
  }

  function seat(view, player, table, fresh) {
    const last = justFinished(view);
    const target = last ? last.targets[player.seat] : view.targets[player.seat];
    const won = last ? last.tricks_won[player.seat] : view.tricks_won[player.seat];
    const classes = ["seat", PLACES[player.seat], teamClass(view, player.seat)];
    const active = view.turn === player.seat;
    if (active) classes.push("active");
    if (view.winners.includes(player.seat)) classes.push("winner");
    if (target !== null && won > target) classes.push("bust");

    let slot;
    const play = table.cards.find((p) => p.seat === player.seat);
    if (table.kind === "trick") {
      const best = bestSoFar(view.trick);
      const off = play && play.colour !== view.trick[0].colour;
      slot = play ? card(play, `played${best === play ? " best" : ""}${off ? " off" : ""}`, fresh)
        : h("div", {class: `card empty${active ? " turn" : ""}`}, active ? "?" : "");
    } else if (table.kind === "taken" && play) {
      slot = card(play, `taken${play.seat === table.winner ? " best" : ""}`, fresh);
    } else {
      slot = h("div", {class: `card empty${active ? " turn" : ""}`}, active ? "?" : "");
    }

    let tag = null;
    if (active) tag = h("span", {class: "tag turn"}, view.trick.length ? "▶ to play" : "▶ leads");
    else if (view.winners.includes(player.seat)) tag = h("span", {class: "tag win"}, "★ winner");
    else if (target !== null && won > target) tag = h("span", {class: "tag bust"}, "over target");
    else if (target !== null && won === target) tag = h("span", {class: "tag exact"}, "✓ on target");

    return h("section", {class: classes.join(" "), dataset: {seat: player.seat}},
      h("div", {class: "info"},
        h("header", {},
          h("span", {class: "name"}, player.name),
          view.start_seat === player.seat && view.status === "playing"
            ? h("span", {class: "badge", title: "start player this round"}, "★") : null),
        h("span", {class: "team"}, player.team,
          last ? h("span", {class: "round-of"}, ` · Round ${last.round}`) : null),
        h("div", {class: "tricks", title: "tricks won / target"},
          h("span", {class: over(won, target)}, won), " / ", target === null ? "?" : target),
        pips(won, target),
        tag),
      h("div", {class: "slot"}, slot));
  }

  function over(won, target) {
    if (target === null) return "count";
    if (won > target) return "count over";
    return won === target ? "count exact" : "count";
  }

  function tileOrder(a, b) { return Number(a.split("/")[0]) - Number(b.split("/")[0]); }

  function team(view, t, index) {
    const names = t.seats.map((s) => view.players[s].name);
    const classes = ["team-panel", index === 0 ? "team-a" : "team-b", t.mission ? "chosen" : "choosing"];
    if (view.winners.length && t.seats.includes(view.winners[0])) classes.push("won");
    const playing = view.status === "playing";
    let mission;
    if (t.mission) {
      mission = h("p", {class: "mission"}, h("b", {class: "mission-tile"}, `[${t.mission.tile}] `),
        `${names[0]} ${t.mission.targets[t.seats[0]]} · ${names[1]} ${t.mission.targets[t.seats[1]]}`,
        playing && !view.played.length ? h("span", {class: "state ok"}, " ✓ chosen") : null);
    } else if (playing) {
      mission = h("p", {class: "mission waiting"}, "choosing a mission…");
    } else {
      mission = h("p", {class: "mission"}, "—");
    }
    const all = [...t.tiles_left, ...t.tiles_removed].sort(tileOrder);
    return h("section", {class: classes.join(" ")},
      h("h2", {}, h("span", {class: "team-name"}, t.name),
        h("span", {class: "score", title: "tiles removed"}, `${t.tiles_removed.length}`, h("small", {}, " / 3"))),
      h("p", {class: "members"}, names.join(" & ")),
      mission,
      h("div", {class: "tiles"}, all.map((tile) => {
        const removed = t.tiles_removed.includes(tile);
        const current = t.mission && t.mission.tile === tile;
        return h("span", {class: `tile${removed ? " removed" : ""}${current ? " current" : ""}`,
          title: removed ? "completed: removed" : current ? "this round's mission" : "still to do"},
        removed ? `✓ ${tile}` : tile);
      })));
  }

  function roundResult(r, cls = "round-result") {
    const accomplished = r.outcome === "accomplished";
    return h("div", {class: `${cls} ${r.outcome}`},
      h("p", {class: "outcome"}, accomplished ? "✓ Mission accomplished" : "✗ Sabotage"),
      h("p", {class: "headline"}, `Round ${r.round}: ${r.team} remove ${r.tile}`),
      h("p", {class: "reason"}, r.reason));
  }

  function centre(view, table) {
    const parts = [];
    const waiting = view.teams.filter((t) => !t.mission);
    const lastRound = view.rounds.length ? view.rounds[view.rounds.length - 1] : null;
    if (view.status === "game-over") {
      parts.push(h("p", {class: "big"}, "Game over"));
    } else if (view.trick.length) {
      const lead = view.trick[0];
      const best = bestSoFar(view.trick);
      parts.push(h("p", {class: `lead-chip ${lead.colour}`}, "Lead ", h("b", {}, lead.colour)));
      parts.push(h("p", {class: "best-so-far"}, "Best so far: ", h("b", {}, `${view.players[best.seat].name} ${best.number}`)));
      if (view.trick.length === 3 && view.trick.every((p) => p.colour === lead.colour)) {
        const next = view.players[view.turn].name;
        parts.push(h("p", {class: "hint camo"}, `${next} plays ${lead.colour} too → Camouflage: the lowest wins`));
      }
    } else if (table.kind === "taken" && table.round === view.round) {
      const name = view.players[table.winner].name;
      parts.push(h("p", {class: "took"}, h("b", {}, name), " takes the trick"));
      if (table.camouflage) parts.push(h("p", {class: "camo-badge"}, "Camouflage: the lowest won"));
      parts.push(h("p", {class: "next"}, `${view.players[view.leader].name} leads next`));
    } else {
      if (justFinished(view)) {
        parts.push(h("div", {class: `round-flash ${lastRound.outcome}`},
          missionLines(view, lastRound).map((line) => h("p", {class: line.cls}, line.text))));
      } else if (lastRound && lastRound.round === view.round - 1) {
        parts.push(h("p", {class: `round-flash ${lastRound.outcome}`}, `Round ${lastRound.round} → ${roundLine(view, lastRound)}`));
        if (table.kind === "taken") {
          parts.push(h("p", {class: "next"}, `Last trick: ${view.players[table.winner].name}`));
        }
      }
      if (waiting.length) {
        parts.push(h("p", {class: "choose"}, `Round ${view.round}: choose missions`));
        parts.push(h("div", {class: "choosing"}, view.teams.map((t, i) =>
          h("span", {class: `who ${i === 0 ? "team-a" : "team-b"} ${t.mission ? "done" : "wait"}`},
            t.mission ? `${t.name} ✓` : `${t.name} …`))));
      } else {
        parts.push(h("p", {class: "next"}, `${view.players[view.leader].name} leads the first trick`));
      }
    }
    return h("div", {class: "centre"}, parts);
  }

  function summary(view) {
    const winner = view.teams.find((t) => t.seats.includes(view.winners[0]));
    const names = winner.seats.map((s) => view.players[s].name).join(" & ");
    const last = view.rounds[view.rounds.length - 1];
    return h("div", {class: "summary", role: "status"},
      h("p", {class: "trophy", "aria-hidden": "true"}, "★"),
      h("h2", {class: "champions"}, `${winner.name} win the game!`),
      h("p", {class: "names"}, `${names}: all three mission tiles done`),
      last ? roundResult(last, "round-result final") : null);
  }

  // The rounds so far: the latest in full (who removed which tile, and why), the earlier ones a line each.
  function history(view) {
    if (!view.rounds.length) return null;
    // At the game's end the summary over the table tells the last round in full; here a line each.
    const over = view.status === "game-over";
    const latest = view.rounds[view.rounds.length - 1];
    const earlier = over ? view.rounds : view.rounds.slice(0, -1);
    return h("div", {class: "rounds"},
      over ? null : roundResult(latest),
      earlier.length ? h("ol", {class: "history"}, earlier.map((r) =>
        h("li", {class: r.outcome, title: r.reason}, h("b", {}, `Round ${r.round}`), ` ${roundLine(view, r)}`))) : null);
  }

  function roundLine(view, r) {
    if (r.outcome === "accomplished") return `${r.team} ✓ ${r.tile}, mission accomplished`;
    const rivals = view.teams.find((t) => t.name !== r.team);
    return `${r.team} ✓ ${r.tile}, ${rivals ? rivals.name : "rivals"} sabotaged`;
  }

  // Which mission was completed, which sabotaged: a line each, the round's outcome first.
  function missionLines(view, r) {
    const completing = view.teams.findIndex((t) => t.name === r.team);
    const rival = view.teams[1 - completing];
    const tileOf = (index) => (r.missions && r.missions[index]) || "";
    const done = {cls: "done", text: `✓ ${r.team} remove ${r.tile}`};
    if (r.outcome === "accomplished") {
      return [{cls: "head", text: `Round ${r.round}: ${r.team} accomplish ${r.tile}`}, done];
    }
    return [{cls: "head", text: `Round ${r.round}: ✗ ${rival ? rival.name : "the rivals"}'s mission ${tileOf(1 - completing)} sabotaged`}, done];
  }

  // Each finished round as the table saw it: every player's tricks against their target, which
  // mission was completed and which sabotaged (the board right after the round, "Last round", history).
  function results(view) {
    return view.rounds.map((r) => {
      const [head, done] = missionLines(view, r);
      const rows = view.players.map((p) => {
        const target = r.targets ? r.targets[p.seat] : null;
        const won = r.tricks_won[p.seat];
        const status = target === null || target === undefined ? "" : won > target ? "over" : won === target ? "exact" : "under";
        const note = {over: "over target", exact: "on target", under: "under target", "": ""}[status];
        return {seat: p.seat, name: p.name, cls: status, fig: target === null || target === undefined ? `${won}` : `${won} / ${target}`,
          note: `${p.team}${note ? ` · ${note}` : ""}`};
      });
      return Companion.roundCard({kicker: `Round ${r.round} · tricks / target`, head: head.text.replace(/^Round \d+: /, ""),
        why: `${done.text}. ${r.reason}`, rows, outcome: r.outcome});
    });
  }

  Companion.registerGame("spy-team", {
    results,
    render(view, root) {
      const fresh = new Set();
      const table = tableCards(view);
      const phase = view.status === "game-over" ? "over" : justFinished(view) ? "result"
        : view.teams.some((t) => !t.mission) ? "choosing"
        : view.trick.length ? "trick" : "between";
      root.replaceChildren(
        h("div", {class: "spy-team", dataset: {phase}},
          h("div", {class: "table"}, view.players.map((p) => seat(view, p, table, fresh)), centre(view, table),
            view.status === "game-over" ? summary(view) : null),
          h("aside", {class: "teams"}, view.teams.map((t, i) => team(view, t, i)), history(view))));
      shown = fresh;
    },
    matNumbers: true, // the virtual mat shows the cards as numbers under their colour
    // The control page groups the prompt's actions: one group per team with its current choice.
    groupActions(view, actions) {
      if (!view.teams || !actions.some((a) => a.type === "mission")) return null;
      return view.teams.map((t) => {
        const names = t.seats.map((s) => view.players[s].name);
        const chosen = t.mission;
        return {
          title: `${t.name} (${names.join(" & ")})`,
          status: chosen ? `✓ ${chosen.tile}: ${names[0]} ${chosen.targets[t.seats[0]]} · ${names[1]} ${chosen.targets[t.seats[1]]}`
            : "choosing…",
          done: !!chosen,
          actions: actions.filter((a) => t.seats.includes(a.seat)).map((a) => {
            const mate = t.seats.find((s) => s !== a.seat);
            const [x, y] = a.tile.split("/").map(Number);
            const other = a.target === x ? y : x;
            const selected = !!chosen && chosen.tile === a.tile && chosen.targets[a.seat] === a.target;
            return {action: a, selected, tile: a.tile,
              text: `${view.players[a.seat].name} ${a.target} · ${view.players[mate].name} ${other}`};
          }),
        };
      });
    },
  });
})();
