// The public scoreboard: follows the table live over /api/events; shows only the public view.
"use strict";

(() => {
  const {h, renderer, connect, banner} = Companion;
  const TITLES = {"spy-team": "Spy Team", "spy": "SPY", "peanuts": "Mission for Peanuts"};
  const board = document.getElementById("board");
  let view = null;

  function show(next) {
    view = next;
    document.body.dataset.game = view.game || "idle";
    document.body.dataset.status = view.status;
    document.getElementById("title").textContent = TITLES[view.game] || "Table Companion";
    document.getElementById("round").textContent =
      view.status === "game-over" ? "Game over"
        : view.round && renderer(view.game).showRound !== false ? `Round ${view.round}` : "";
    document.getElementById("prompt").textContent = view.prompt ? view.prompt.text : "";
    if (!view.game) {
      board.replaceChildren(h("div", {class: "idle"}, h("p", {}, "No game yet."),
        h("p", {class: "hint"}, "Open /control on the host's device to start one.")));
      return;
    }
    renderer(view.game).render(view, board);
  }

  // A cue with a banner sounds when its banner appears (banners queue up: Camouflage, then the trick,
  // then the mission...), so the tunes do not play over each other; any other cue sounds at once.
  function cue(c) {
    if (!banner(c, () => Sounds.play(c.cue))) Sounds.play(c.cue);
    if (c.cue === "reader-lost") setHealth("Reader lost", false);
    if (c.cue === "reader-back") setHealth("Live", true);
    document.body.dataset.lastCue = c.cue;
  }

  function setHealth(text, ok) {
    const node = document.getElementById("health");
    node.textContent = text;
    node.className = `health ${ok ? "ok" : "bad"}`;
  }

  document.getElementById("sound").addEventListener("click", (e) => {
    Sounds.enable();
    e.target.textContent = "Sound on";
    e.target.disabled = true;
  });

  fetch("/healthz").then((r) => r.json()).then((s) => {
    if (s.reader === "lost") setHealth("Reader lost", false);
  }).catch(() => {});
  connect(show, cue, (open) => setHealth(open ? "Live" : "Reconnecting…", open));
})();
