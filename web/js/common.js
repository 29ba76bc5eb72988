// Shared by the scoreboard and the control page: DOM helper, the event stream, the API, game renderers.
"use strict";

const Companion = (() => {
  const games = {};

  // h("div", {class: "x"}, "text", child): builds elements; text is always set as text, never as HTML.
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function registerGame(name, renderer) { games[name] = renderer; }
  function renderer(name) { return games[name] || genericRenderer; }

  // A game without its own renderer still shows players, scores and the prompt.
  const genericRenderer = {
    render(view, root) {
      root.replaceChildren(h("div", {class: "seats"}, view.players.map((p) => seatBox(view, p))));
    },
  };

  function seatBox(view, player, ...extra) {
    const classes = ["seat"];
    if (view.prompt && view.prompt.seat === player.seat) classes.push("active");
    if (player.eliminated) classes.push("out");
    if ((view.winners || []).includes(player.seat)) classes.push("winner");
    return h("section", {class: classes.join(" "), dataset: {seat: player.seat}},
      h("header", {}, h("span", {class: "name"}, player.name), h("span", {class: "score"}, player.score)),
      ...extra);
  }

  // The live connection: calls onState(view) and onCue(cue); reconnects by itself (EventSource does).
  function connect(onState, onCue, onStatus) {
    const source = new EventSource("/api/events");
    source.addEventListener("state", (e) => onState(JSON.parse(e.data)));
    source.addEventListener("cue", (e) => onCue(JSON.parse(e.data)));
    source.onopen = () => onStatus && onStatus(true);
    source.onerror = () => onStatus && onStatus(false);
    return source;
  }

  function token() { return localStorage.getItem("companionToken") || ""; }
  function setToken(value) { localStorage.setItem("companionToken", value); }

  // A control call: resolves to the JSON answer, rejects with Error(message) on a refusal.
  async function api(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: {"Content-Type": "application/json", "Authorization": `Bearer ${token()}`},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    if (!response.ok) {
      const err = new Error(data.error || `HTTP ${response.status}`);
      err.status = response.status;
      throw err;
    }
    return data;
  }

  const BANNER_CUES = new Set(["trick-won", "camouflage", "mission-accomplished", "mission-sabotaged",
    "round-won", "game-won", "bomb-lit", "boom", "spied", "card-revealed", "already-exposed",
    "player-eliminated", "error", "unknown-card", "family-found", "showdown", "extra-turn", "shuffle-in",
    "undo", "reader-lost", "reader-back", "game-started"]);

  // A large announcement over the board for the cues players must notice; the newest replaces the last.
  function banner(cue) {
    if (!BANNER_CUES.has(cue.cue) || !cue.text) return;
    let node = document.getElementById("banner");
    if (!node) { node = h("div", {id: "banner", role: "status", "aria-live": "assertive"}); document.body.append(node); }
    node.className = `banner cue-${cue.cue}`;
    node.textContent = cue.text;
    void node.offsetWidth; // restart the animation
    node.classList.add("show");
    clearTimeout(node._timer);
    const long = ["game-won", "mission-accomplished", "mission-sabotaged", "boom", "round-won"].includes(cue.cue);
    node._timer = setTimeout(() => node.classList.remove("show"), long ? 4500 : 2500);
  }

  return {h, registerGame, renderer, seatBox, connect, api, token, setToken, banner};
})();
