// Spy Team on the scoreboard: four seats around the table, the trick in the middle, the teams' tiles.
"use strict";

(() => {
  const {h} = Companion;
  // Seat 0 sits at the bottom, then clockwise: left, top, right.
  const PLACES = ["south", "west", "north", "east"];

  function card(play, extra = "") {
    return h("div", {class: `card ${play.colour} ${extra}`, title: play.name},
      h("span", {class: "number"}, play.number));
  }

  function seat(view, player) {
    const target = view.targets[player.seat];
    const won = view.tricks_won[player.seat];
    const played = view.trick.find((p) => p.seat === player.seat);
    const classes = ["seat", PLACES[player.seat], player.team === "C.A.T." ? "team-a" : "team-b"];
    if (view.turn === player.seat) classes.push("active");
    if (view.winners.includes(player.seat)) classes.push("winner");
    return h("section", {class: classes.join(" "), dataset: {seat: player.seat}},
      h("header", {},
        h("span", {class: "name"}, player.name),
        view.start_seat === player.seat ? h("span", {class: "badge", title: "start player"}, "★") : null,
        h("span", {class: "team"}, player.team)),
      h("div", {class: "tricks", title: "tricks won / target"},
        h("span", {class: over(won, target)}, won), " / ", target === null ? "?" : target),
      played ? card(played, "played") : h("div", {class: "card empty"}));
  }

  function over(won, target) {
    if (target === null) return "count";
    if (won > target) return "count over";
    return won === target ? "count exact" : "count";
  }

  function team(view, t, index) {
    const names = t.seats.map((s) => view.players[s].name);
    const mission = t.mission
      ? `${names[0]} ${t.mission.targets[t.seats[0]]} · ${names[1]} ${t.mission.targets[t.seats[1]]}`
      : "choosing a mission…";
    return h("section", {class: `team-panel ${index === 0 ? "team-a" : "team-b"}`},
      h("h2", {}, t.name, h("span", {class: "score"}, t.tiles_removed.length)),
      h("p", {class: "mission"}, t.mission ? h("b", {}, `[${t.mission.tile}] `) : null, mission),
      h("div", {class: "tiles"},
        t.tiles_left.map((tile) => h("span", {class: "tile"}, tile)),
        t.tiles_removed.map((tile) => h("span", {class: "tile removed", title: "completed"}, tile))));
  }

  function centre(view) {
    const last = view.last_trick;
    const lead = view.trick.length ? view.trick[0] : null;
    return h("div", {class: "centre"},
      view.status === "game-over"
        ? h("p", {class: "big"}, `${view.teams.find((t) => t.seats.includes(view.winners[0])).name} wins the game!`)
        : h("p", {class: "lead"}, lead ? `Lead: ${lead.colour}` : `${view.players[view.leader].name} leads`),
      last && last.round === view.round && !view.trick.length
        ? h("div", {class: "last-trick"}, h("span", {}, `Last trick: ${view.players[last.winner].name}`,
            last.camouflage ? " (Camouflage)" : ""), h("div", {class: "cards"}, last.cards.map((p) => card(p, p.seat === last.winner ? "best" : ""))))
        : null);
  }

  Companion.registerGame("spy-team", {
    render(view, root) {
      root.replaceChildren(
        h("div", {class: "spy-team"},
          h("div", {class: "table"}, view.players.map((p) => seat(view, p)), centre(view)),
          h("aside", {class: "teams"}, view.teams.map((t, i) => team(view, t, i)),
            view.rounds.length ? h("ol", {class: "history"}, view.rounds.map((r) =>
              h("li", {}, `Round ${r.round}: ${r.reason}`))) : null)));
    },
    startOptions: [{name: "start", label: "Start player", type: "seat"}],
  });
})();
