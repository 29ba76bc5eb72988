// Cards and tags: the enrollment panel of the control page, rendered into <div id="enroll">.
// It uses the API of companion/webapp/cards_api.py through common.js (Companion.api, the token from
// localStorage.companionToken; Companion.h builds the panel). On the control page it shares the
// page's message bar (Companion.say) and its event stream (control.js re-dispatches each state and
// cue as "companion:state" / "companion:cue" on document); anywhere else it shows its messages in
// the panel and opens a stream of its own (Companion.connect). It never polls: every tag a session
// takes, from a reader or typed in anywhere, comes as a cue carrying data.enroll, and the panel
// reads the registry again then.
//
// - per game, how many cards have a tag; "Enroll deck" walks through the deck ("Tap Red 17", with a
//   progress bar) while the table's NFC readers hand every tag to the enrollment instead of the game.
//   The virtual mat has no tags: without an NFC reader each tag's UID is typed in. During a session
//   the panel dispatches "companion:enrollment" ({running, title}) so that the page turns its mat off;
// - every unknown tag tapped meanwhile is listed with its UID, a card to choose (from the game being
//   played first) and an Enroll button; it goes once the tag is enrolled, from here or elsewhere.
"use strict";

(() => {
  const root = document.getElementById("enroll");
  if (!root) return;

  const page = Companion.say ? Companion : null; // the control page's message bar, if there is one
  const el = Companion.h;
  const state = {
    summary: null, // GET /api/cards
    session: null,
    problem: "", // why the panel cannot show anything (no token, an error)
    note: null, // {text, ok}: the last message, when there is no page message bar
    catalog: [], // [{game, title, cards: [{id, name}]}] from /api/games
    playing: null, // the game on the table, from the event stream
    unknown: new Map(), // uid -> {game, card} chosen so far
    options: new Map(), // game -> {missing, force} as ticked
    uid: "", // the UID being typed in the session box
  };
  let announced = null;

  // A control call; a tag refused for a card (409 with the result, status "refused") is an answer
  // to show, not a failure.
  async function call(method, path, body) {
    try {
      return await Companion.api(method, path, body);
    } catch (error) {
      if (error.data && error.data.status === "refused") return error.data;
      throw error;
    }
  }

  // Every message goes where it is seen: the page's message bar (fixed at the bottom; a refusal
  // stays until dismissed), else a line in the panel.
  function say(text, ok) {
    if (page) { page.say(text, ok); return; }
    state.note = {text, ok};
    render();
  }

  function unsay(text) {
    if (page && page.unsay) page.unsay(text);
    else if (state.note && state.note.text.includes(text)) { state.note = null; render(); }
  }

  async function refresh() {
    try {
      const summary = await call("GET", "/api/cards");
      state.summary = summary;
      state.session = summary.session;
      state.problem = "";
    } catch (error) {
      state.summary = null;
      state.session = null;
      state.problem = error.status === 401 ? "Save the table's token above to enroll cards." : error.message;
      if (error.status !== 401) say(error.message, false);
      render();
      announce();
      return;
    }
    // An unknown tag enrolled since (here, on another page, during a session): its notice goes.
    const known = new Set(state.summary.tags.map((tag) => tag.uid));
    for (const uid of [...state.unknown.keys()]) {
      if (known.has(uid)) { state.unknown.delete(uid); unsay(uid); }
    }
    render();
    announce();
  }

  // Tells the page whether an enrollment runs (its virtual mat is off meanwhile).
  function announce() {
    const s = state.session;
    const running = Boolean(s && !s.finished);
    const key = running ? `${s.game}` : "";
    if (key === announced) return;
    announced = key;
    document.dispatchEvent(new CustomEvent("companion:enrollment", {detail: {running,
      game: running ? s.game : null, title: running ? s.title : null,
      readers: state.summary ? state.summary.nfc_readers : 0}}));
  }

  async function act(method, path, body, done) {
    try {
      const answer = await call(method, path, body);
      if (done) done(answer);
    } catch (error) {
      say(error.message, false);
    }
    await refresh();
  }

  // A result of enrolling one tag: a warning (the card id could not be written) stays on screen.
  function sayResult(result) {
    say(result.message, result.status === "enrolled" && !result.warning);
  }

  // The parts of the panel

  const running = () => Boolean(state.session && !state.session.finished);
  const blocked = () => Boolean(state.summary && state.summary.registry !== "ok");

  // What stays in the panel: why it cannot work, and (without the page's bar) the last message.
  function notes() {
    const bad = (text) => el("p", {class: "enroll-note bad", role: "alert"}, text);
    return [
      state.problem ? bad(state.problem) : null,
      blocked() ? bad(`Enrolling is off: the card registry is ${state.summary.registry}. See docs/nfc.md.`) : null,
      state.note ? el("p", {class: `enroll-note ${state.note.ok ? "ok" : "bad"}`, role: "status"}, state.note.text) : null,
    ];
  }

  function noReaderHint() {
    if (!state.summary || state.summary.nfc_readers > 0) return null;
    return el("p", {class: "enroll-note hint"}, "No NFC reader is attached: enrolling needs one, the virtual "
      + "mat has no tags. Without one, type each tag's UID (an NFC app on a phone shows it).");
  }

  function gameRows() {
    if (!state.summary) return [];
    return state.summary.games.map((game) => {
      const options = state.options.get(game.game)
        || {missing: game.enrolled > 0 && game.enrolled < game.total, force: false};
      const missing = el("input", {type: "checkbox", checked: options.missing,
        onchange: () => { options.missing = missing.checked; state.options.set(game.game, options); }});
      const force = el("input", {type: "checkbox", checked: options.force,
        onchange: () => { options.force = force.checked; state.options.set(game.game, options); }});
      const start = () => act("POST", "/api/cards/session", {game: game.game, missing: missing.checked,
        force: force.checked}, () => say(state.summary && state.summary.nfc_readers === 0
        ? `Enrolling ${game.title}: no NFC reader, type each tag's UID.`
        : `Enrolling ${game.title}: tap each card when asked.`, true)).then(() => {
        const box = root.querySelector(".enroll-session");
        if (box) box.scrollIntoView({block: "nearest"});
      });
      return el("div", {class: "enroll-game", "data-game": game.game},
        el("strong", {class: "enroll-title"}, game.title),
        el("div", {class: "enroll-count"}, el("span", {}, `${game.enrolled}/${game.total} cards have a tag`),
          el("progress", {value: game.enrolled, max: game.total})),
        el("div", {class: "enroll-options"},
          el("label", {}, missing, "only missing"),
          el("label", {title: "take tags that belong to another card"}, force, "force")),
        el("button", {type: "button", class: "primary", onclick: start,
          disabled: running() || blocked()}, "Enroll deck"));
    });
  }

  function uidForm() {
    const input = el("input", {type: "text", name: "uid", inputmode: "text", autocomplete: "off",
      spellcheck: "false", placeholder: "04:A2:2B:…", "aria-label": "Tag UID", value: state.uid,
      oninput: () => { state.uid = input.value; }});
    const submit = (event) => {
      event.preventDefault();
      const uid = input.value.trim();
      if (!uid) { say("Type the tag's UID (hex), then Enroll.", false); return; }
      act("POST", "/api/cards/session/tap", {uid}, (answer) => {
        sayResult(answer.result);
        if (answer.result.status === "enrolled") state.uid = "";
      });
    };
    return el("form", {class: "enroll-uid", onsubmit: submit},
      el("label", {}, "Tag UID ", input),
      el("button", {type: "submit"}, "Enroll this UID"));
  }

  function sessionBox() {
    const s = state.session;
    if (!s) return null;
    const last = s.last ? el("p", {class: `enroll-last ${s.last.warning ? "warning" : s.last.status}`},
      s.last.message) : null;
    const head = s.finished
      ? el("p", {class: "prompt-text"}, `${s.title}: done, ${s.enrolled} enrolled, ${s.skipped} skipped.`)
      : el("p", {class: "prompt-text"}, state.summary && state.summary.nfc_readers === 0 ? "Type the UID of " : "Tap ",
        el("strong", {}, s.current.name));
    return el("div", {class: "enroll-session"},
      head,
      el("div", {class: "enroll-progress"}, el("progress", {value: s.position, max: s.total || 1}),
        el("span", {}, `${s.position}/${s.total}`)),
      last,
      s.finished ? null : noReaderHint(),
      s.finished ? null : uidForm(),
      el("div", {class: "enroll-buttons"},
        s.finished ? null : el("button", {type: "button", onclick: () => act("POST", "/api/cards/session/skip")},
          "Skip this card"),
        el("button", {type: "button", class: "danger", onclick: () => act("DELETE", "/api/cards/session",
          undefined, () => say(s.finished ? "Enrollment closed." : "Enrollment stopped: taps play again.", true))},
        s.finished ? "Close" : "Stop")));
  }

  // The card for an unknown tag: the game being played first (else one with cards still missing);
  // the other games are one choice away.
  function defaultGame() {
    const games = state.catalog.map((game) => game.game);
    if (state.playing && games.includes(state.playing)) return state.playing;
    const missing = state.summary && state.summary.games.find((game) => game.missing.length);
    return missing ? missing.game : games[0];
  }

  function cardPicker(uid) {
    const choice = state.unknown.get(uid);
    if (!choice.game) choice.game = defaultGame();
    const missing = new Set();
    for (const game of (state.summary ? state.summary.games : [])) {
      for (const card of game.missing) missing.add(card.id);
    }
    const data = state.catalog.find((game) => game.game === choice.game) || {cards: []};
    if (!choice.card || !data.cards.some((card) => card.id === choice.card)) {
      const first = data.cards.find((card) => missing.has(card.id)) || data.cards[0];
      choice.card = first ? first.id : "";
    }
    const games = el("select", {"aria-label": "Game", class: "enroll-pick-game",
      onchange: () => { choice.game = games.value; choice.card = ""; render(); }},
    state.catalog.map((game) => el("option", {value: game.game}, game.title)));
    games.value = choice.game;
    const cards = el("select", {"aria-label": "Card", class: "enroll-pick-card",
      onchange: () => { choice.card = cards.value; }},
    data.cards.map((card) => el("option", {value: card.id}, card.name + (missing.has(card.id) ? "" : " (has a tag)"))));
    cards.value = choice.card;
    return [games, cards];
  }

  function unknownRows() {
    return [...state.unknown.keys()].map((uid) => {
      const [games, cards] = cardPicker(uid);
      const enroll = () => act("POST", "/api/cards/enroll", {uid, card: cards.value}, (answer) => {
        if (answer.status === "enrolled") state.unknown.delete(uid);
        sayResult(answer);
      });
      return el("div", {class: "enroll-unknown", "data-uid": uid},
        el("span", {}, "Unknown tag ", el("code", {}, uid), " is"), games, cards,
        el("span", {class: "enroll-buttons"},
          el("button", {type: "button", class: "primary", onclick: enroll, disabled: blocked()}, "Enroll"),
          el("button", {type: "button", onclick: () => { state.unknown.delete(uid); unsay(uid); render(); }},
            "Dismiss")));
    });
  }

  function render() {
    // The UID being typed keeps the focus when the panel is redrawn (a tap elsewhere, a cue).
    const typing = document.activeElement && document.activeElement.name === "uid" && root.contains(document.activeElement)
      ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;
    root.replaceChildren(...[
      ...notes(),
      sessionBox(),
      running() ? null : noReaderHint(),
      el("div", {class: "enroll-games"}, gameRows()),
      el("div", {class: "enroll-unknowns"}, unknownRows()),
      el("p", {class: "hint"}, "A card's tag gets the card id written on it when it can (NTAG21x), and its "
        + "UID registered in any case. During an enrollment no tap reaches the game: the NFC readers "
        + "enroll, the virtual mat is off."),
    ].filter(Boolean));
    const input = typing && root.querySelector("input[name=uid]");
    if (input) { input.focus(); input.setSelectionRange(...typing); }
  }

  // Unknown tags arrive as refusals carrying the tag's UID; enrollment results as cues carrying data.enroll.
  // An unknown tag was tapped at the table's reader, by no device: the panel says it, to offer enrolling
  // it (the control page itself says only the refusals that answer its own requests).
  function onCue(cue) {
    if (Companion.cueStyle(cue.cue).role === "refusal" && cue.data && cue.data.uid) {
      if (!state.unknown.has(cue.data.uid)) state.unknown.set(cue.data.uid, {game: null, card: null});
      say(cue.text, false);
      render();
    } else if (cue.data && cue.data.enroll) {
      if (cue.data.enroll.warning) say(cue.text, false);
      refresh();
    }
  }

  function onState(view) {
    if ((view.game || null) === state.playing) return;
    state.playing = view.game || null;
    if (state.unknown.size) render();
  }

  if (page) {
    document.addEventListener("companion:cue", (event) => onCue(event.detail));
    document.addEventListener("companion:state", (event) => onState(event.detail));
  } else {
    Companion.connect(onState, onCue);
  }

  fetch("/api/games").then((r) => r.json()).then((data) => {
    state.catalog = data.games.map((game) => ({game: game.game, title: game.title,
      cards: game.cards.map((card) => ({id: card.id, name: card.name}))}));
    render();
  }).catch((error) => say(`The card list could not be loaded: ${error.message}`, false));
  window.addEventListener("storage", (event) => { if (event.key === "companionToken") refresh(); });
  document.addEventListener("submit", (event) => { if (event.target.id === "token-form") setTimeout(refresh, 100); });
  render();
  refresh();
})();
