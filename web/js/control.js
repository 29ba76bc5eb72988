// The host's control page: token, new game, the prompt's actions, the virtual mat, undo.
"use strict";

(() => {
  const {h, api, renderer, connect, token, setToken, gameInfo, rendererReady} = Companion;
  const $ = (id) => document.getElementById(id);
  let view = null;

  // A link like /control#token=abc (printed by the daemon) saves the token and drops it from the URL.
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) { setToken(fromHash); history.replaceState(null, "", location.pathname); }
  $("token").value = token();
  // A device paired with a code (/pair) holds an HttpOnly cookie instead of the token: ask the table.
  let paired = false;
  showTokenState();
  fetch("/api/pair").then((r) => r.json()).then((state) => { paired = !!state.paired; showTokenState(); })
    .catch(() => {});
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setToken($("token").value.trim());
    showTokenState();
  });

  // With a token saved the panel folds to one line (it is only needed again to change the token).
  function showTokenState() {
    const saved = !!token() || paired;
    $("token-state").textContent = paired && !token() ? "not needed: this device is paired"
      : saved ? "saved" : "needed for every control";
    $("token-panel").classList.toggle("folded", saved);
    lockWithoutToken();
    let change = $("token-change");
    if (!change) {
      change = h("button", {id: "token-change", type: "button", class: "link",
        onclick: () => { $("token-panel").classList.remove("folded"); $("token").focus(); }}, "change");
      $("token-panel").querySelector("h2").append(" ", h("span", {class: "token-saved"}, "✓ saved "), change);
    }
  }

  // Without a token every control would be refused: its buttons stay disabled until one is saved.
  function lockWithoutToken() {
    const locked = !token() && !paired;
    document.body.classList.toggle("no-token", locked);
    for (const button of document.querySelectorAll("#actions button, #mat button, #pad button, #undo, #start-form button")) {
      button.disabled = locked;
    }
  }

  // The message bar: stays on screen (fixed at the bottom) so a refusal is seen even while tapping the
  // mat further down; a success fades after a moment, a refusal stays until the next success or a tap.
  let sayTimer = null;
  function say(text, ok) {
    const node = $("message");
    node.textContent = text;
    node.className = `message ${ok ? "ok" : "bad"} show`;
    clearTimeout(sayTimer);
    if (ok) sayTimer = setTimeout(() => node.classList.remove("show"), 2500);
  }
  $("message").addEventListener("click", () => $("message").classList.remove("show"));
  // The enrollment panel (enroll.js) writes to the same bar; `unsay` hides it if it is about `text`.
  Companion.say = say;
  Companion.unsay = (text) => { if ($("message").textContent.includes(text)) $("message").classList.remove("show"); };

  async function send(method, path, body, done) {
    try {
      const answer = await api(method, path, body);
      say(typeof done === "function" ? done(answer) : done, true);
      return true;
    } catch (err) {
      say(err.status === 401 ? "The table did not accept this device's token: enter the table's token under Token."
        : err.message, false);
      if (err.status === 401) {
        $("token-panel").classList.remove("folded");
        $("token-panel").scrollIntoView({block: "start"});
        $("token").focus({preventScroll: true});
      }
      return false;
    }
  }

  // A guard against a mis-tap: the first tap arms the button ("Tap again to …"), a second tap within
  // a few seconds does it; otherwise the button goes back to normal.
  function guarded(button, question, action) {
    const label = button.textContent;
    let armed = null;
    function disarm() { clearTimeout(armed); armed = null; button.textContent = label; button.classList.remove("armed"); }
    button.addEventListener("click", (e) => {
      const q = typeof question === "function" ? question() : question;
      if (!q) { action(e); return; }
      if (armed) { disarm(); action(e); return; }
      e.preventDefault();
      button.textContent = q;
      button.classList.add("armed");
      armed = setTimeout(disarm, 4000);
    });
  }

  // New game: the fields are the game's options as the server declares them (seeds/<game>.toml).
  function typedNames() { return $("players").value.split(",").map((s) => s.trim()).filter(Boolean); }
  function optionDefault(opt, count) {
    if (opt.default === null || typeof opt.default !== "object") return opt.default;
    return opt.default[String(count)];  // a default by player count
  }
  function showOptions() {
    const info = gameInfo($("game").value);
    if (!info) return;
    const names = typedNames();
    const count = names.length || info.min_players;
    const seats = names.length ? names : Array.from({length: count}, (_, i) => `Player ${i + 1}`);
    // What the host chose stays while the names are typed; the rest follows the player count.
    const chosen = {};
    for (const input of $("options").querySelectorAll("[data-option][data-edited]")) {
      if (input.dataset.game === info.game) chosen[input.dataset.option] = input.value;
    }
    $("options").replaceChildren(...info.options.map((opt) => {
      const edited = opt.name in chosen;
      const value = edited ? chosen[opt.name] : optionDefault(opt, count);
      const common = {"data-option": opt.name, "data-game": info.game, "data-edited": edited || null,
        onchange: (e) => { e.target.dataset.edited = ""; }, oninput: (e) => { e.target.dataset.edited = ""; }};
      if (opt.type === "seat") {
        return h("label", {}, `${opt.label} `, h("select", {...common, "data-type": "int"},
          seats.map((n, i) => h("option", {value: i, selected: String(i) === String(value)}, n))));
      }
      return h("label", {}, `${opt.label} `, h("input", {...common, "data-type": opt.type,
        type: opt.type === "int" ? "number" : "text", value: value === undefined || value === null ? "" : value,
        size: 6}));
    }));
  }

  function startGame() {
    const players = typedNames();
    const options = {};
    for (const input of $("options").querySelectorAll("[data-option]")) {
      if (input.value === "") continue;
      options[input.dataset.option] = input.dataset.type === "int" ? Number(input.value) : input.value;
    }
    send("POST", "/api/games", {game: $("game").value, players, options}, "Game started.")
      .then((ok) => { if (ok) formEdited = false; });
  }

  $("game").addEventListener("change", showOptions);
  $("players").addEventListener("input", showOptions);
  const startButton = $("start-form").querySelector("button[type=submit]");
  // Starting over a game in progress asks for a second tap; the form's own submit (Enter) does too.
  guarded(startButton, () => (view && view.game && view.status !== "game-over" && $("start-form").reportValidity()
    ? "Tap again: end this game and start" : null), () => {});
  $("start-form").addEventListener("submit", (e) => {
    e.preventDefault();
    if (startButton.classList.contains("armed")) return;
    startGame();
  });

  // The prompt: one button per legal action, exactly as the engine listed it; a game's renderer may
  // group them (Spy Team: one group per team, showing what the team has chosen). An action the engine
  // marks `confirm` (one that puts a player out) takes two taps, like Undo: a mis-tap there would end
  // someone's game. The action is posted as listed: the server keeps only the keys it declares.
  function actionButton(action, text, selected) {
    const label = action.label;
    const run = () => send("POST", "/api/actions", action, `Done: ${label}`);
    const guard = action.confirm === true;
    const classes = [selected ? "selected" : "", guard ? "danger" : "", action.primary ? "primary" : ""].join(" ").trim();
    const button = h("button", {type: "button", class: classes || null, "aria-label": label,
      "aria-pressed": selected ? "true" : null, onclick: guard ? null : run}, text || label);
    if (guard) guarded(button, `Tap again: ${label}`, run);
    return button;
  }

  function showPrompt() {
    const prompt = view.prompt || {};
    const seat = prompt.seat;
    $("prompt").textContent = prompt.text || "";
    $("prompt").className = `prompt-text${seat !== null && seat !== undefined ? " turn" : ""}`;
    // An action marked `tablet: false` is a button's own step (show the next choice): the pad has it.
    const actions = (prompt.actions || []).filter((a) => a.tablet !== false);
    if (view.status === "game-over" && view.game) {
      $("actions").replaceChildren(h("button", {type: "button", class: "primary", onclick: playAgain},
        "Play again (same players)"));
      return;
    }
    const grouper = view.game && renderer(view.game).groupActions;
    const groups = grouper ? grouper(view, actions) : null;
    if (!groups) {
      $("actions").replaceChildren(...actions.map((a) => actionButton(a)));
      return;
    }
    $("actions").replaceChildren(...groups.map((g) => h("div", {class: `action-group${g.done ? " done" : ""}`},
      h("h3", {}, g.title, " ", h("span", {class: "status"}, g.status)),
      h("div", {class: "buttons"}, g.actions.map((a) => {
        const button = actionButton(a.action, a.text, a.selected);
        if (a.tile) button.prepend(h("b", {class: "tile-label"}, a.tile));
        return button;
      })))));
  }

  // The virtual mat: every card of the current game (as the game's renderer narrows it for this table:
  // SPY offers only the colours and bombs in play), grouped by colour or role. Cards already played
  // this round are dimmed, and so are those the public view places somewhere else (a Role, a face-up
  // discard: the renderer's `matKnown`), with where; the cards of the trick on the table are marked
  // with who played them. Dimmed cards can still be tapped (a Handler takes back a discarded card).
  let matKey = null;
  // During an enrollment (enroll.js says so) the mat is off: it has no tags to enroll, and the game
  // takes no tap meanwhile (the daemon refuses them too).
  let enrolling = null;
  document.addEventListener("companion:enrollment", (e) => {
    enrolling = e.detail && e.detail.running ? e.detail : null;
    matKey = null;
    if (view) showMat();
  });

  // Short labels inside a group: the number for Spy Team, else the name without the group's word
  // ("Green Safe 1" under Green is "Safe 1"), with the copy's number where copies share a name.
  function matLabels(group, cards) {
    const word = new RegExp(`^${group.replace(/-/g, " ")}\\s+`, "i");
    const labels = cards.map((c) => (c.number !== undefined && c.colour && !c.kind ? String(c.number)
      : c.name.replace(word, "")));
    return cards.map((c, i) => {
      const shared = labels.filter((l) => l === labels[i]).length > 1;
      return [c, shared ? `${labels[i]} #${c.id.split("-").pop()}` : labels[i]];
    });
  }
  // A double click is one tap: the same card again within 600 ms is not sent (a real reader debounces too).
  let lastTap = {card: null, at: 0};
  function tapOnce(card) {
    const now = Date.now();
    if (lastTap.card === card && now - lastTap.at < 600) return;
    lastTap = {card, at: now};
    send("POST", "/api/taps", {card}, "Tap sent.");
  }

  function showMat() {
    if (enrolling) {
      $("mat").replaceChildren(h("p", {class: "mat-off"}, `Off while ${enrolling.title} is being enrolled: `
        + `the mat has no tags, and no tap reaches the game meanwhile. ${enrolling.readers
          ? "Tap each card on the NFC reader" : "Type each tag's UID in Cards and tags"}; `
        + "Stop there to play again."));
      $("mat").dataset.turn = "";
      matKey = null;
      return;
    }
    if (!view.game || !gameInfo(view.game)) { $("mat").replaceChildren(h("p", {}, "Start a game first.")); matKey = null; return; }
    const game = renderer(view.game);
    const cards = game.matCards ? game.matCards(view, gameInfo(view.game)) : gameInfo(view.game).cards;
    const wanted = `${view.game}:${cards.map((c) => c.id).join(",")}`;
    if (matKey !== wanted) {
      matKey = wanted;
      const groups = new Map();
      for (const c of cards) {
        const key = c.colour || c.role || "cards";
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(c);
      }
      // The message names no card: on a hidden-information game the host's screen may be in view.
      $("mat").replaceChildren(...[...groups].map(([key, cards]) => h("div", {class: "mat-group"},
        h("h3", {}, key.replace(/-/g, " ")),
        h("div", {class: game.matNumbers ? "mat" : "mat words"}, matLabels(key, cards).map(([c, label]) =>
          h("button", {type: "button", class: c.colour || "", title: c.id, "aria-label": c.name,
            dataset: {card: c.id}, onclick: () => tapOnce(c.id)}, label))))));
    }
    const used = new Set(view.played || []);
    const onTable = new Map((Array.isArray(view.trick) ? view.trick : []).map((p) => [p.card, p.seat]));
    const known = game.matKnown ? game.matKnown(view) : new Map();
    for (const button of $("mat").querySelectorAll("button")) {
      const card = button.dataset.card;
      button.classList.toggle("used", used.has(card));
      button.classList.toggle("on-table", onTable.has(card));
      button.classList.toggle("known", known.has(card));
      const seat = onTable.get(card);
      if (seat !== undefined && view.players && view.players[seat]) button.dataset.by = view.players[seat].name;
      else if (known.has(card)) button.dataset.by = known.get(card);
      else delete button.dataset.by;
    }
    const turn = view.prompt && view.prompt.tap && view.prompt.seat !== null && view.players
      ? view.players[view.prompt.seat] : null;
    $("mat").dataset.turn = turn ? `Next card: ${turn.name}` : "";
  }

  // The virtual buttons (POST /api/buttons): a seat button per player, Next and Undo, pushed through
  // the very path of the table's GPIO buttons. Click (or Enter) presses; keeping it pressed for
  // PAD_HOLD ms holds it (the table then holds it for its own hold time). Under each button, what it
  // does now, read from the prompt's actions the way the buttons read them (companion/pins/buttons.py).
  const PAD_HOLD = 600;
  const TABLE_BUTTONS = {next: "Next", undo: "Undo"};  // the buttons beside the seats, by their API names
  let padOff = false;
  fetch("/healthz").then((r) => r.json()).then((health) => {
    padOff = health.gpio !== undefined && health.gpio !== "mock";
    if (view) showPad();
  }).catch(() => {});

  function padMeaning(actions, seat) {
    // The seat button that gives an action is its `button_seat` where the input names another seat.
    const mine = actions.filter((a) => (a.button_seat !== undefined ? a.button_seat : a.seat) === seat
      && a.button !== false);
    const presses = mine.filter((a) => !a.hold && !a.confirm);
    const holds = mine.filter((a) => a.hold);
    return {press: presses.length === 1 ? presses[0].label : "", hold: holds.length === 1 ? holds[0].label : ""};
  }

  function push(name, hold) {
    return send("POST", "/api/buttons", {button: name, hold}, `${hold ? "Held" : "Pressed"}: ${padName(name)}`);
  }
  function padName(name) {
    if (!name.startsWith("seat-")) return TABLE_BUTTONS[name];
    const player = view && view.players && view.players[Number(name.slice(5))];
    return player ? `${player.name}'s button` : name;
  }

  function padButton(name, text) {
    // Named by the button alone: what it does now is its description (the captions), so a search for
    // an action's label finds the tablet's button, not this one.
    const button = h("button", {type: "button", class: "pad-button", dataset: {button: name}},
      h("span", {class: "pad-name"}, text), h("span", {class: "pad-press", "aria-hidden": "true"}),
      h("span", {class: "pad-hold", "aria-hidden": "true"}));
    let timer = null;
    const release = () => { button.classList.remove("down"); };
    button.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || button.disabled) return;
      button.classList.add("down");
      clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        button.classList.add("held");
        push(name, true).finally(() => { button.classList.remove("held"); release(); });
      }, PAD_HOLD);
    });
    button.addEventListener("pointerup", () => {
      if (timer) { clearTimeout(timer); timer = null; release(); push(name, false); }
    });
    button.addEventListener("pointercancel", () => { clearTimeout(timer); timer = null; release(); });
    button.addEventListener("pointerleave", () => { if (timer) { clearTimeout(timer); timer = null; release(); } });
    button.addEventListener("contextmenu", (e) => e.preventDefault());  // a long touch is a hold, not a menu
    button.addEventListener("click", (e) => { if (e.detail === 0) push(name, false); });  // the keyboard's press
    return button;
  }

  let padKey = null;
  function showPad() {
    const playing = view.game && view.status !== "game-over" && !enrolling;
    if (padOff || !playing) {
      $("pad").replaceChildren(padOff ? h("p", {class: "hint"}, "This table has real buttons: press them there.") : "");
      padKey = null;
      return;
    }
    const names = view.players.map((p) => p.name);
    const key = `${view.game}:${names.join(",")}`;
    if (padKey !== key) {
      padKey = key;
      $("pad").replaceChildren(
        h("div", {class: "pad-seats"}, names.map((n, seat) => padButton(`seat-${seat}`, n))),
        h("div", {class: "pad-table"}, Object.entries(TABLE_BUTTONS).map(([name, text]) => padButton(name, text))));
    }
    const actions = (view.prompt && view.prompt.actions) || [];
    const next = actions.find((a) => a.primary && a.button !== false && !a.confirm && !a.hold);
    for (const button of $("pad").querySelectorAll("button")) {
      const name = button.dataset.button;
      let meaning = {press: "", hold: ""};
      if (name.startsWith("seat-")) meaning = padMeaning(actions, Number(name.slice(5)));
      else if (name === Object.keys(TABLE_BUTTONS)[0]) meaning = {press: next ? next.label : "", hold: ""};
      else meaning = {press: "", hold: "take back the last input"};
      button.querySelector(".pad-press").textContent = meaning.press ? `press: ${meaning.press}` : "";
      button.querySelector(".pad-hold").textContent = meaning.hold ? `hold: ${meaning.hold}` : "";
      button.classList.toggle("live", !!(meaning.press || meaning.hold));
      button.setAttribute("aria-label", `${padName(name)} (virtual)`);
      button.title = [meaning.press && `press: ${meaning.press}`, meaning.hold && `hold: ${meaning.hold}`]
        .filter(Boolean).join("; ");
    }
  }

  function show(next) {
    view = next;
    // The game's renderer loads the first time the game is seen; the page waits for it.
    if (!rendererReady(view.game, () => { if (view === next) show(next); })) return;
    document.body.dataset.game = view.game || "";
    document.body.dataset.status = view.status || "";
    showPrompt();
    showPad();
    showMat();
    followForm();
    lockWithoutToken();
    if (view.game) renderer(view.game).render(view, $("board"));
    else $("board").replaceChildren(h("p", {}, "No game yet."));
  }

  // The new-game form follows the game being played, on every device, until the host edits it.
  let formEdited = false;
  $("start-form").addEventListener("input", () => { formEdited = true; });
  function followForm() {
    if (formEdited || !view.game || !gameInfo(view.game)) return;
    const names = view.players.map((p) => p.name).join(", ");
    if ($("game").value === view.game && $("players").value === names) return;
    $("game").value = view.game;
    $("players").value = names;
    showOptions();
  }

  // "Play again": the same game with the same players, in the same seats.
  function playAgain() {
    send("POST", "/api/games", {game: view.game, players: view.players.map((p) => p.name)}, "Game started.");
  }

  // The cues of one input arrive together (a trick, its mission, the round...): only the newest of
  // those within a short window sounds, cutting a sound still playing, so tunes never pile up.
  const SOUND_WINDOW = 150; // ms
  let soundTimer = null;
  let nextSound = null;
  // A refusal is said only by the device whose request it answers (send() shows the HTTP answer): one
  // from another device, or from the reader, is that device's (and the scoreboard's) to show.
  function cue(c) {
    if (!Sounds.has(c.cue)) return;
    nextSound = c.cue;
    if (!soundTimer) {
      soundTimer = setTimeout(() => { soundTimer = null; Sounds.play(nextSound, {cut: true}); }, SOUND_WINDOW);
    }
  }

  // Undo after the game is over brings it back: the second tap says so.
  guarded($("undo"), () => (view && view.status === "game-over" ? "Tap again: undo brings the finished game back"
    : "Tap again to undo"), () => send("POST", "/api/undo", undefined,
    (answer) => answer.taken_back || "Took back the last input."));
  document.addEventListener("click", () => Sounds.enable(), {once: true});

  const ready = Companion.loadCatalog();
  ready.then((data) => {
    $("game").replaceChildren(...data.games.map((g) => h("option", {value: g.game}, `${g.title} (${g.min_players === g.max_players ? g.min_players : `${g.min_players}–${g.max_players}`} players)`)));
    showOptions();
  });
  // The stream opens at once; what it brings waits (in order) for the games and cues.
  // Every state and cue also goes to the page's other parts (enroll.js) as a DOM event: one stream.
  connect((v) => ready.then(() => { show(v); document.dispatchEvent(new CustomEvent("companion:state", {detail: v})); }),
    (c) => ready.then(() => { cue(c); document.dispatchEvent(new CustomEvent("companion:cue", {detail: c})); }));
})();
