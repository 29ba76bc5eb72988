// Cards and tags: the enrollment panel of the control page, rendered into <div id="enroll">.
// Self-contained (needs nothing else on the page): the API of companion/cards_api.py with the token
// from localStorage.companionToken, and its own event stream to catch unknown tags as they are tapped.
//
// - per game, how many cards have a tag; "Enroll deck" walks through the deck ("Tap Red 17", with a
//   progress bar) while the table's readers hand every tag to the enrollment instead of the game;
// - every unknown tag tapped meanwhile is listed with its UID, a card to choose and an Enroll button.
"use strict";

(() => {
  const root = document.getElementById("enroll");
  if (!root) return;

  const POLL_MS = 700;
  // The panel's own layout, so that it needs no stylesheet of the page's.
  document.head.append(Object.assign(document.createElement("style"), {textContent: `
    #enroll .enroll-game { display: grid; grid-template-columns: minmax(9em, 1.2fr) auto 1fr auto auto auto;
      gap: .3em .8em; align-items: center; margin: .3em 0; }
    #enroll .enroll-game progress, #enroll .enroll-session progress { width: 100%; min-width: 8em; }
    #enroll .enroll-game label { white-space: nowrap; }
    #enroll .enroll-session { margin: .8em 0; padding: .6em .8em; border-left: 4px solid currentColor; }
    #enroll .enroll-session .prompt-text { font-size: 1.6em; margin: 0 0 .3em; }
    #enroll .enroll-last.refused { font-weight: bold; }
    #enroll .enroll-unknown { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; }
    #enroll .enroll-unknown select { max-width: 18em; }
  `}));
  const state = {summary: null, session: null, cards: [], unknown: new Map(), message: "", error: false};
  let polling = null;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  async function call(method, path, body) {
    const token = localStorage.getItem("companionToken") || "";
    const response = await fetch(path, {
      method,
      headers: {"Content-Type": "application/json", "Authorization": `Bearer ${token}`},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    if (!response.ok && !(data && data.status === "refused")) {
      const error = new Error(data.error || `HTTP ${response.status}`);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function say(message, error) {
    state.message = message;
    state.error = Boolean(error);
    render();
  }

  async function refresh() {
    try {
      const summary = await call("GET", "/api/cards");
      state.summary = summary;
      state.session = summary.session;
      state.message = state.error && state.message.startsWith("Save the") ? "" : state.message;
    } catch (error) {
      state.summary = null;
      if (error.status === 401) say("Save the table's token above to enroll cards.", true);
      else say(error.message, true);
      return;
    }
    if (state.session && !state.session.finished) startPolling();
    render();
  }

  function startPolling() {
    if (polling) return;
    polling = setInterval(async () => {
      try {
        const answer = await call("GET", "/api/cards/session");
        const changed = !state.session || !answer.session || answer.session.version !== state.session.version;
        state.session = answer.session;
        if (!answer.session || answer.session.finished) stopPolling();
        if (changed) await refresh();
      } catch (error) {
        stopPolling();
        say(error.message, true);
      }
    }, POLL_MS);
  }

  function stopPolling() {
    clearInterval(polling);
    polling = null;
  }

  async function act(method, path, body, done) {
    try {
      const answer = await call(method, path, body);
      if (done) done(answer);
    } catch (error) {
      say(error.message, true);
    }
    await refresh();
  }

  // The parts of the panel

  function gameRows() {
    if (!state.summary) return [];
    return state.summary.games.map((game) => {
      const missing = el("input", {type: "checkbox", checked: game.enrolled > 0 && game.enrolled < game.total});
      const force = el("input", {type: "checkbox"});
      const start = () => act("POST", "/api/cards/session", {game: game.game, missing: missing.checked,
        force: force.checked}, () => say(`Enrolling ${game.title}: tap each card when asked.`));
      return el("div", {class: "enroll-game", "data-game": game.game},
        el("strong", {}, game.title), el("span", {}, `${game.enrolled}/${game.total} cards have a tag`),
        el("progress", {value: game.enrolled, max: game.total}),
        el("label", {}, missing, " only missing"),
        el("label", {title: "take tags that belong to another card"}, force, " force"),
        el("button", {type: "button", class: "primary", onclick: start,
          disabled: Boolean(state.session && !state.session.finished)}, "Enroll deck"));
    });
  }

  function sessionBox() {
    const s = state.session;
    if (!s) return null;
    const last = s.last ? el("p", {class: `enroll-last ${s.last.status}`}, s.last.message) : null;
    const head = s.finished
      ? el("p", {class: "prompt-text"}, `${s.title}: done, ${s.enrolled} enrolled, ${s.skipped} skipped.`)
      : el("p", {class: "prompt-text"}, "Tap ", el("strong", {}, s.current.name));
    return el("div", {class: "enroll-session"},
      head,
      el("div", {class: "row"}, el("progress", {value: s.position, max: s.total || 1}),
        ` ${s.position}/${s.total}`),
      last,
      el("div", {class: "row"},
        s.finished ? null : el("button", {type: "button", onclick: () => act("POST", "/api/cards/session/skip")},
          "Skip this card"),
        el("button", {type: "button", class: "danger", onclick: () => act("DELETE", "/api/cards/session")},
          s.finished ? "Close" : "Stop")));
  }

  function cardPicker() {
    const select = el("select", {});
    const missing = new Set();
    for (const game of (state.summary ? state.summary.games : [])) {
      for (const card of game.missing) missing.add(card.id);
    }
    for (const card of state.cards) {
      select.append(el("option", {value: card.id}, card.name + (missing.has(card.id) ? "" : " (has a tag)")));
    }
    const first = state.cards.find((card) => missing.has(card.id));
    if (first) select.value = first.id;
    return select;
  }

  function unknownRows() {
    return [...state.unknown.values()].map((uid) => {
      const picker = cardPicker();
      const enroll = () => act("POST", "/api/cards/enroll", {uid, card: picker.value}, (answer) => {
        if (answer.status === "enrolled") state.unknown.delete(uid);
        say(answer.message, answer.status !== "enrolled");
      });
      return el("div", {class: "row enroll-unknown", "data-uid": uid},
        "Unknown tag ", el("code", {}, uid), " is ", picker,
        el("button", {type: "button", class: "primary", onclick: enroll}, "Enroll"),
        el("button", {type: "button", onclick: () => { state.unknown.delete(uid); render(); }}, "Dismiss"));
    });
  }

  function render() {
    root.replaceChildren(...[
      el("div", {class: "enroll-games"}, gameRows()),
      sessionBox(),
      el("div", {class: "enroll-unknowns"}, unknownRows()),
      state.message ? el("p", {class: state.error ? "message error" : "message", role: "status"}, state.message) : null,
      el("p", {class: "hint"}, "A card's tag gets the card id written on it when it can (NTAG21x), and its "
        + "UID registered in any case. During an enrollment the readers do not play cards."),
    ].filter(Boolean));
  }

  // Unknown tags arrive as "unknown-card" cues; enrollment results as cues carrying data.enroll.
  const events = new EventSource("/api/events");
  events.addEventListener("cue", (event) => {
    const cue = JSON.parse(event.data);
    if (cue.cue === "unknown-card" && cue.data && cue.data.uid) {
      state.unknown.set(cue.data.uid, cue.data.uid);
      render();
    } else if (cue.data && cue.data.enroll) {
      refresh();
    }
  });

  fetch("/api/games").then((r) => r.json()).then((data) => {
    state.cards = data.games.flatMap((game) => game.cards.map((card) => ({id: card.id, name: `${game.title}: ${card.name}`})));
    render();
  }).catch(() => {});
  window.addEventListener("storage", (event) => { if (event.key === "companionToken") refresh(); });
  document.addEventListener("submit", (event) => { if (event.target.id === "token-form") setTimeout(refresh, 100); });
  render();
  refresh();
})();
