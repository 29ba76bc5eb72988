// The toy game's renderer (tests only): a lane per player, its score out of the target.
"use strict";

(() => {
  const {h} = Companion;
  Companion.registerGame("toy-race", {
    render(view, root) {
      root.replaceChildren(h("div", {class: "toy-race"}, view.players.map((p) =>
        h("section", {class: `lane${view.winners.includes(p.seat) ? " winner" : ""}`, dataset: {seat: p.seat}},
          h("span", {class: "name"}, p.name),
          h("span", {class: "progress"}, `${p.score} / ${view.target}`)))));
    },
  });
})();
