//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// Shared by the scoreboard and the control page: DOM helper, the event stream, the API, the games and
// cues as the server describes them, game renderers loaded by name.
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

  // A finished round's result, drawn the same wherever it shows (the board right after the round, the
  // scoreboard's "Last round" panel, the history page): a headline, why, and a row per player with
  // their figure of the round (tricks against target, a point, out) and a note. A game's renderer
  // builds these from its public view (`results(view)`); web/css/results.css styles them.
  function roundCard({kicker, head, why, rows, outcome}) {
    return h("section", {class: `round-card ${outcome || ""}`.trim()},
      kicker ? h("p", {class: "rc-kicker"}, kicker) : null,
      h("h2", {class: "rc-head"}, head),
      why ? h("p", {class: "rc-why"}, why) : null,
      rows && rows.length ? h("ul", {class: "rc-rows"}, rows.map((row) =>
        h("li", {class: `rc-row ${row.cls || ""}`.trim(), dataset: {seat: row.seat}},
          h("span", {class: "rc-name"}, row.name),
          h("span", {class: "rc-fig"}, row.fig),
          row.note ? h("span", {class: "rc-note"}, row.note) : null))) : null);
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
  // A stream the browser gave up on (an answer that is not a stream, e.g. while the table restarts)
  // is opened again after a moment; the table sends its current state first.
  function connect(onState, onCue, onStatus) {
    const source = new EventSource("/api/events");
    source.addEventListener("state", (e) => onState(JSON.parse(e.data)));
    source.addEventListener("cue", (e) => onCue(JSON.parse(e.data)));
    source.onopen = () => onStatus && onStatus(true);
    source.onerror = () => {
      if (onStatus) onStatus(false);
      if (source.readyState === EventSource.CLOSED) setTimeout(() => connect(onState, onCue, onStatus), 2000);
    };
    return source;
  }

  function token() { return localStorage.getItem("companionToken") || ""; }
  function setToken(value) { localStorage.setItem("companionToken", value); }

  // The table's inputs: a POST to one of these carries an Idempotency-Key, so it is safe to send again.
  const KEYED = new Set(["/api/games", "/api/actions", "/api/undo", "/api/taps"]);
  const RETRY_DELAYS = [300, 1000, 3000]; // ms before each new try after a network error

  // A fresh key per user action (crypto.randomUUID needs https; getRandomValues does not).
  function newKey() {
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // A control call: resolves to the JSON answer, rejects with Error(message) on a refusal. An input
  // whose answer was lost to the network is sent again with the same key: the table applies it once.
  async function api(method, path, body) {
    const headers = {"Content-Type": "application/json", "Authorization": `Bearer ${token()}`};
    const keyed = method === "POST" && KEYED.has(path);
    if (keyed) headers["Idempotency-Key"] = newKey();
    const init = {method, headers, body: body === undefined ? undefined : JSON.stringify(body)};
    let response;
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(path, init);
        break;
      } catch (err) { // no answer at all: the input may or may not have landed
        if (!keyed || attempt >= RETRY_DELAYS.length) throw err;
        await sleep(RETRY_DELAYS[attempt]);
      }
    }
    const data = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    if (!response.ok) {
      const err = new Error(data.error || `HTTP ${response.status}`);
      err.status = response.status;
      err.data = data; // the whole answer, for a refusal that carries more than its message
      throw err;
    }
    return data;
  }

  // The games and the cue catalogue come from the server (GET /api/games): this file names none of them.
  let catalog = {games: {}, cues: {}};
  let loading = null;
  function loadCatalog() {
    if (!loading) {
      loading = fetch("/api/games").then((r) => r.json()).then((data) => {
        catalog = {games: Object.fromEntries(data.games.map((g) => [g.game, g])),
          cues: Object.fromEntries(data.cues.map((c) => [c.cue, c]))};
        return data;
      }).catch(() => new Promise((again) => setTimeout(again, 2000)).then(() => { loading = null; return loadCatalog(); }));
    }
    return loading;  // retried until the table answers
  }
  // A page that arrived with its first look (the scoreboard: the games it shows and the cues, inlined
  // by the server) starts from that instead; another game is then asked for alone, by its version.
  let versions = {};
  function useCatalog(first) {
    for (const game of first.games) catalog.games[game.game] = game;
    catalog.cues = Object.fromEntries(first.cues.map((c) => [c.cue, c]));
    versions = first.versions || {};
  }
  const asked = {};
  function loadGame(name) {
    if (catalog.games[name] || !(name in versions)) return Promise.resolve(gameInfo(name));
    if (!asked[name]) {
      asked[name] = fetch(`/api/games/${encodeURIComponent(name)}?v=${versions[name]}`)
        .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
        .then((game) => { catalog.games[name] = game; return game; })
        .catch(() => sleep(2000).then(() => { delete asked[name]; return loadGame(name); }));
    }
    return asked[name];  // retried until the table answers
  }
  // Whether `name`'s presentation and renderer are here; if not, `then()` runs once they are.
  function gameReady(name, then) {
    if (!name || gameInfo(name) || !(name in versions)) return rendererReady(name, then);
    loadGame(name).then(() => { if (rendererReady(name, then)) then(); });
    return false;
  }
  const NO_CUE = {banner: false, kicker: "", rank: 2, minor: false, hold: [2500, 1300], role: "", sound: []};
  const cueStyle = (name) => catalog.cues[name] || NO_CUE;
  const gameInfo = (name) => catalog.games[name] || null;
  const titleOf = (name) => (gameInfo(name) ? gameInfo(name).short_title : "Table Companion");

  // A game's renderer (web/js/games/<game>.js and its CSS) is loaded the first time the game is seen.
  const requested = {};
  function loadRenderer(name) {
    const info = gameInfo(name);
    if (!info || !info.renderer.js) return Promise.resolve(renderer(name));
    if (!requested[name]) {
      // Its script and its style sheet both, before the board is drawn: a board drawn and its type
      // fitted before the sheet applies keeps the wrong size once it does.
      const added = (node) => new Promise((done) => {
        node.onload = node.onerror = done;
        document.head.append(node);
      });
      const sheet = info.renderer.css ? added(h("link", {rel: "stylesheet", href: info.renderer.css})) : null;
      requested[name] = Promise.all([added(h("script", {src: info.renderer.js})), sheet]).then(() => {
        loaded[name] = true;
        return renderer(name);
      });
    }
    return requested[name];
  }
  const loaded = {};
  // Whether `name`'s renderer is ready (loaded here, or by the page itself: the first look's is in its
  // head); if not, `then()` runs once it is.
  function rendererReady(name, then) {
    const info = gameInfo(name);
    if (!name || !info || !info.renderer.js || loaded[name] || (games[name] && !requested[name])) return true;
    loadRenderer(name).then(then);
    return false;
  }

  // The board shows every change at once, so the banners may not trail it: a cue's banner appears at
  // most MAX_LAG after the cue (less important ones waiting behind are dropped to keep to that), and
  // each stays at least MIN_SHOW (less for a minor one the board has already overtaken).
  const MAX_LAG = 2000;
  const MIN_SHOW = 900;
  const MIN_SHOW_STALE_MINOR = 500;
  // Minor cues may be dropped (the board shows their outcome anyway): from a long queue, and as soon
  // as a newer state is on the board. The rank says what to keep when not everything can be shown.
  const isMinor = (item) => cueStyle(item.cue.cue).minor;
  const rank = (item) => cueStyle(item.cue.cue).rank;
  const queue = [];
  let current = null;
  let timer = null;

  function bannerNode() {
    let node = document.getElementById("banner");
    if (!node) { node = h("div", {id: "banner", role: "status", "aria-live": "assertive"}); document.body.append(node); }
    return node;
  }

  // When the banner on screen gives way to the next.
  function endOf(item) {
    const [alone, hurried] = cueStyle(item.cue.cue).hold;
    let end = item.shownAt + (queue.length ? hurried : alone);
    // Early enough for every waiting banner to appear in time, each after MIN_SHOW of the one before.
    queue.forEach((next, i) => { end = Math.min(end, next.queuedAt + MAX_LAG - i * MIN_SHOW); });
    if (item.staleAt) end = Math.min(end, item.staleAt);
    const least = item.staleAt && isMinor(item) ? MIN_SHOW_STALE_MINOR : MIN_SHOW;
    return Math.max(end, item.shownAt + least);
  }

  // Keeps the queue within MAX_LAG: while a waiting banner would appear too late (each one before it
  // shown at least MIN_SHOW), the least important waiting banner is dropped (the oldest among equals).
  function prune() {
    for (;;) {
      let at = current ? endOf(current) : Date.now();
      const late = queue.some((item) => {
        const tooLate = at > item.queuedAt + MAX_LAG + 250;
        at += MIN_SHOW;
        return tooLate;
      });
      if (!late) return;
      let worst = 0;
      queue.forEach((item, i) => { if (rank(item) < rank(queue[worst])) worst = i; });
      queue.splice(worst, 1);
    }
  }

  function nextBanner() {
    clearTimeout(timer);
    const now = Date.now();
    // A cue that waited far too long (a timer held back while the page was hidden) is stale.
    while (queue.length && now - queue[0].queuedAt > MAX_LAG + 1500) queue.shift();
    current = queue.shift() || null;
    const node = bannerNode();
    if (!current) { node.classList.remove("show"); delete node.dataset.cue; return; }
    const {cue} = current;
    node.className = `banner cue-${cue.cue}`;
    node.dataset.cue = cue.cue;
    node.dataset.kicker = cueStyle(cue.cue).kicker;
    node.textContent = cue.text;
    void node.offsetWidth; // restart the animation
    node.classList.add("show");
    current.shownAt = now;
    if (current.onShow) { try { current.onShow(cue, now - current.queuedAt); } catch (err) { console.error(err); } }
    scheduleBanner();
  }

  function scheduleBanner() {
    clearTimeout(timer);
    if (!current) return;
    timer = setTimeout(nextBanner, Math.max(0, endOf(current) - Date.now()));
  }

  // A large announcement over the board for the cues players must notice. Cues that arrive together
  // (Camouflage, the trick, the mission, the round, the game) are shown one after the other, each long
  // enough to read but none more than about two seconds after its cue; `onShow(cue, lateMs)`, if
  // given, runs when its banner appears (the scoreboard plays the sound then; a banner dropped to keep
  // up never runs it). An undo or a new game clears what was still waiting. Returns whether the cue is
  // one for a banner.
  function banner(cue, onShow) {
    const style = cueStyle(cue.cue);
    if (!style.banner || !cue.text) return false;
    const reset = style.role === "reset";
    if (reset) queue.length = 0;
    queue.push({cue, onShow, queuedAt: Date.now()});
    while (queue.length > 4) {
      const minor = queue.findIndex(isMinor);
      queue.splice(minor >= 0 ? minor : 0, 1);
    }
    if (!current || reset) { nextBanner(); return true; }
    prune();
    scheduleBanner();
    return true;
  }

  // A newer state is on the board (a state comes before the cues of its own input, so everything
  // queued so far is about an older one): the minor banners still waiting are dropped, the others and
  // the one on screen are cut short.
  function boardMoved() {
    const now = Date.now();
    for (let i = queue.length - 1; i >= 0; i--) if (isMinor(queue[i])) queue.splice(i, 1);
    for (const item of queue) item.staleAt = item.staleAt || now;
    if (current) { current.staleAt = current.staleAt || now; prune(); scheduleBanner(); }
  }

  return {h, roundCard, registerGame, renderer, seatBox, connect, api, token, setToken, banner, boardMoved,
    loadCatalog, useCatalog, gameReady, gameInfo, titleOf, cueStyle, loadRenderer, rendererReady,
    get games() { return Object.values(catalog.games); }};
})();
