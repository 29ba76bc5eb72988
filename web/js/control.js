// The host's control page: token, new game, the prompt's actions, the virtual mat, undo.
"use strict";

(() => {
  const {h, api, renderer, connect, token, setToken} = Companion;
  const $ = (id) => document.getElementById(id);
  let catalog = {};
  let view = null;

  // A link like /control#token=abc (printed by the daemon) saves the token and drops it from the URL.
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) { setToken(fromHash); history.replaceState(null, "", location.pathname); }
  $("token").value = token();
  $("token-state").textContent = token() ? "saved" : "needed for every control";
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setToken($("token").value.trim());
    $("token-state").textContent = "saved";
  });

  function say(text, ok) {
    $("message").textContent = text;
    $("message").className = `message ${ok ? "ok" : "bad"}`;
  }

  async function send(method, path, body, done) {
    try {
      await api(method, path, body);
      say(done, true);
    } catch (err) {
      say(err.status === 401 ? `${err.message} Enter it above.` : err.message, false);
    }
  }

  // New game
  function showOptions() {
    const game = $("game").value;
    const spec = (renderer(game).startOptions) || [{name: "start", label: "Start player", type: "seat"}];
    const names = $("players").value.split(",").map((s) => s.trim()).filter(Boolean);
    $("options").replaceChildren(...spec.map((opt) => {
      if (opt.type === "seat") {
        return h("label", {}, `${opt.label} `, h("select", {"data-option": opt.name, "data-type": "int"},
          (names.length ? names : ["seat 0"]).map((n, i) => h("option", {value: i}, n))));
      }
      return h("label", {}, `${opt.label} `, h("input", {"data-option": opt.name, "data-type": opt.type,
        type: opt.type === "int" ? "number" : "text", placeholder: opt.placeholder || "", size: 6}));
    }));
  }

  $("game").addEventListener("change", showOptions);
  $("players").addEventListener("input", showOptions);
  $("start-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const players = $("players").value.split(",").map((s) => s.trim()).filter(Boolean);
    const options = {};
    for (const input of $("options").querySelectorAll("[data-option]")) {
      if (input.value === "") continue;
      options[input.dataset.option] = input.dataset.type === "int" ? Number(input.value) : input.value;
    }
    send("POST", "/api/games", {game: $("game").value, players, options}, "Game started.");
  });

  // The prompt: one button per legal action, exactly as the engine listed it.
  function showPrompt() {
    $("prompt").textContent = view.prompt.text;
    $("actions").replaceChildren(...(view.prompt.actions || []).map((action) => {
      const {label, ...body} = action;
      return h("button", {type: "button", onclick: () => send("POST", "/api/actions", body, `Done: ${label}`)}, label);
    }));
  }

  // The virtual mat: every card of the current game, grouped by colour or role.
  let matGame = null;
  function showMat() {
    if (!view.game || !catalog[view.game]) { $("mat").replaceChildren(h("p", {}, "Start a game first.")); matGame = null; return; }
    if (matGame !== view.game) {
      matGame = view.game;
      const groups = new Map();
      for (const c of catalog[view.game].cards) {
        const key = c.colour || c.role || "cards";
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(c);
      }
      $("mat").replaceChildren(...[...groups].map(([key, cards]) => h("div", {class: "mat-group"},
        h("h3", {}, key),
        h("div", {class: "mat"}, cards.map((c) => h("button", {type: "button", class: c.colour || "", title: c.id,
          dataset: {card: c.id}, onclick: () => send("POST", "/api/taps", {card: c.id}, `Tapped ${c.name}.`)},
          view.game === "spy-team" ? String(c.number) : c.name))))));
    }
    const used = new Set(view.played || []);
    for (const button of $("mat").querySelectorAll("button")) button.classList.toggle("used", used.has(button.dataset.card));
  }

  function show(next) {
    view = next;
    showPrompt();
    showMat();
    if (view.game) renderer(view.game).render(view, $("board"));
    else $("board").replaceChildren(h("p", {}, "No game yet."));
  }

  function cue(c) {
    if (c.cue === "error" || c.cue === "unknown-card") say(c.text, false);
    Sounds.play(c.cue);
  }

  $("undo").addEventListener("click", () => send("POST", "/api/undo", undefined, "Took back the last input."));
  document.addEventListener("click", () => Sounds.enable(), {once: true});

  fetch("/api/games").then((r) => r.json()).then((data) => {
    for (const g of data.games) catalog[g.game] = g;
    $("game").replaceChildren(...data.games.map((g) => h("option", {value: g.game}, `${g.title} (${g.min_players === g.max_players ? g.min_players : `${g.min_players}–${g.max_players}`} players)`)));
    showOptions();
    connect(show, cue);
  });
})();
