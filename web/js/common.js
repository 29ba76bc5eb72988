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

  // The word over the banner's sentence, per cue (shown by CSS from data-kicker; the text stays the cue's).
  const KICKERS = {
    "trick-won": "Trick", "camouflage": "Camouflage", "mission-accomplished": "✓ Mission accomplished",
    "mission-sabotaged": "✗ Sabotage", "round-won": "Round over", "game-won": "★ Game won ★",
    "error": "Refused", "unknown-card": "Unknown card", "undo": "Undo", "reader-lost": "Reader",
  };
  // How long a banner stays: [alone, when another waits behind it] in milliseconds.
  const HOLD = {
    "game-won": [7000, 7000], "mission-accomplished": [4500, 3000], "mission-sabotaged": [4500, 3000],
    "boom": [4500, 2500], "round-won": [4000, 2200], "camouflage": [2600, 1800], "trick-won": [2600, 1500],
  };
  const DEFAULT_HOLD = [2500, 1300];
  // Cues that may be dropped from a long queue (the board shows their outcome anyway).
  const MINOR = new Set(["trick-won", "card-revealed", "spied", "extra-turn", "shuffle-in", "game-started", "reader-back"]);
  const queue = [];
  let current = null;
  let timer = null;

  function bannerNode() {
    let node = document.getElementById("banner");
    if (!node) { node = h("div", {id: "banner", role: "status", "aria-live": "assertive"}); document.body.append(node); }
    return node;
  }

  function nextBanner() {
    clearTimeout(timer);
    // A minor cue that waited too long behind others is stale (the board already shows its outcome).
    while (queue.length && MINOR.has(queue[0].cue.cue) && Date.now() - queue[0].queuedAt > 5000) queue.shift();
    current = queue.shift() || null;
    const node = bannerNode();
    if (!current) { node.classList.remove("show"); return; }
    const {cue} = current;
    node.className = `banner cue-${cue.cue}`;
    node.dataset.kicker = KICKERS[cue.cue] || "";
    node.textContent = cue.text;
    void node.offsetWidth; // restart the animation
    node.classList.add("show");
    current.shownAt = Date.now();
    if (current.onShow) { try { current.onShow(cue); } catch (err) { console.error(err); } }
    scheduleBanner();
  }

  function scheduleBanner() {
    clearTimeout(timer);
    const [alone, hurried] = HOLD[current.cue.cue] || DEFAULT_HOLD;
    const until = current.shownAt + (queue.length ? hurried : alone);
    timer = setTimeout(nextBanner, Math.max(0, until - Date.now()));
  }

  // A large announcement over the board for the cues players must notice. Cues that arrive together
  // (Camouflage, the trick, the mission, the round, the game) are shown one after the other, each long
  // enough to read; `onShow(cue)`, if given, runs when its banner appears (the scoreboard plays the
  // sound then). An undo or a new game clears what was still waiting. Returns whether it will show.
  function banner(cue, onShow) {
    if (!BANNER_CUES.has(cue.cue) || !cue.text) return false;
    if (cue.cue === "undo" || cue.cue === "game-started") queue.length = 0;
    queue.push({cue, onShow, queuedAt: Date.now()});
    while (queue.length > 4) {
      const minor = queue.findIndex((item) => MINOR.has(item.cue.cue));
      queue.splice(minor >= 0 ? minor : 0, 1);
    }
    if (!current || cue.cue === "undo" || cue.cue === "game-started") nextBanner();
    else scheduleBanner();
    return true;
  }

  return {h, registerGame, renderer, seatBox, connect, api, token, setToken, banner};
})();
