//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// SPY on the scoreboard: one panel per player in their colour, with the exposure track (which cards
// are face up, which is the next target), the lit bombs as a count (never which bomb) and the latest
// outcome. Everything shown comes from the public view; the view holds no hidden card, so neither can this.
"use strict";

(() => {
  const {h} = Companion;
  // The colours in the order the game data lists them (seeds/spy.toml), for the setup strip.
  const COLOURS = ["green", "red", "purple", "blue"];
  // Every card of a colour (an extra Bomb 2 too, where the mat offers it).
  const KINDS = ["spy", "safe-1", "safe-2", "top-secret-1", "top-secret-2", "bomb-1", "bomb-2", "bomb-2-extra"];
  const OUTCOME_CLASS = {
    "spied": "spied", "revealed": "revealed", "bomb-lit": "lit", "boom": "boom",
    "already-exposed": "spied", "pass": "pass", "dropped": "boom",
  };

  // Colour-blind safe: each colour also has its own shape, beside the name and on the mat.
  const SYMBOLS = {green: "▲", red: "■", purple: "◆", blue: "●"};

  function capital(word) { return word ? word[0].toUpperCase() + word.slice(1) : ""; }

  // One exposure slot: "Safe 1" is a fixed position on every player's track, not a secret.
  // `next` is the index of the current Exposure Target (null when none is: out, or the game is over).
  function slot(entry, index, next) {
    const [kind, number] = splitLabel(entry.card);
    const isNext = !entry.revealed && next === index;
    const classes = ["slot", entry.revealed ? "up" : "down"];
    if (isNext) classes.push("next");
    return h("li", {class: classes.join(" "),
      title: `${entry.card}: ${entry.revealed ? "face up" : isNext ? "the next target" : "hidden"}`},
      h("span", {class: "kind"}, kind),
      h("span", {class: "num"}, number),
      h("span", {class: "state"}, entry.revealed ? "✓ face up" : isNext ? "next" : "hidden"));
  }

  function splitLabel(label) {
    const cut = label.lastIndexOf(" ");
    return cut < 0 ? [label, ""] : [label.slice(0, cut), label.slice(cut + 1)];
  }

  // Bombs as fuses: how many are lit out of how many, lit ones first; which bomb is never known.
  function bombs(player) {
    const icons = [];
    for (let i = 0; i < player.bombs; i++) {
      icons.push(h("span", {class: `bomb ${i < player.bombs_lit ? "lit" : ""}`, "aria-hidden": "true"},
        h("span", {class: "fuse"})));
    }
    return h("div", {class: "bombs", title: `${player.bombs_lit} of ${player.bombs} bombs lit`},
      h("span", {class: "label"}, "Bombs lit"),
      h("span", {class: "icons"}, icons),
      h("span", {class: `count ${player.bombs_lit ? "hot" : ""}`}, `${player.bombs_lit} / ${player.bombs}`));
  }

  function outcome(o, cls = "outcome") {
    if (!o) return h("p", {class: `${cls} none`}, "—");
    return h("p", {class: `${cls} ${OUTCOME_CLASS[o.kind] || ""}`}, o.text);
  }

  function panel(view, player) {
    const won = (view.winners || []).includes(player.seat);
    const classes = ["seat", "player", player.colour || "unclaimed"];
    if (view.turn === player.seat) classes.push("active");
    if (view.status === "setup" && view.prompt && view.prompt.seat === player.seat) classes.push("active");
    if (player.eliminated) classes.push("out");
    if (won) classes.push("winner");

    let state;
    if (won) state = h("span", {class: "tag win"}, "WINNER");
    else if (player.eliminated) state = h("span", {class: "tag out"}, "OUT");
    else if (view.status === "setup") state = h("span", {class: "tag"}, player.colour ? capital(player.colour) : "choosing…");
    else if (view.turn === player.seat) state = h("span", {class: "tag turn"}, "SPYING");
    else state = h("span", {class: "tag in"}, "in play");

    // A player who is out: why, where their latest outcome was (it is the one that put them out).
    const last = player.eliminated && player.out_reason
      ? h("p", {class: "outcome out-why"}, h("b", {}, "Out: "), player.out_reason)
      : outcome(player.last_outcome);
    const body = view.status === "setup"
      ? [h("p", {class: "waiting"}, player.colour ? `plays ${player.colour}` : "taps the Spy card of a colour")]
      : [h("ol", {class: "track", "aria-label": "exposure track"}, player.exposure.map((e, i) => slot(e, i, view.status === "playing" ? player.next : null))),
         bombs(player),
         last];

    return h("section", {class: classes.join(" "), dataset: {seat: player.seat}},
      h("header", {},
        player.colour ? h("span", {class: "colour-mark", title: capital(player.colour), "aria-hidden": "true"},
          SYMBOLS[player.colour] || "") : null,
        h("span", {class: "name"}, player.name),
        view.start === player.seat ? h("span", {class: "badge", title: "starts (the youngest player)"}, "★") : null,
        state),
      ...body);
  }

  // During setup: which colours are taken (and by whom) and which the prompt still offers.
  function colourStrip(view) {
    const free = new Set((view.prompt.actions || []).filter((a) => a.type === "claim").map((a) => a.colour));
    const chips = [];
    for (const colour of COLOURS) {
      const owner = view.players.find((p) => p.colour === colour);
      if (owner) chips.push(h("li", {class: `chip ${colour} taken`}, h("b", {}, capital(colour)), ` ${owner.name}`));
      else if (free.has(colour)) chips.push(h("li", {class: `chip ${colour} free`}, h("b", {}, capital(colour)), " free"));
    }
    return h("ul", {class: "colours", "aria-label": "colours"}, chips);
  }

  // Until the next input: who the latest outcome put out, and why.
  function outNews(view) {
    const out = view.last_out;
    return out ? h("p", {class: "latest out-news"}, h("b", {}, `${out.name} is out`), `: ${out.reason}`) : null;
  }

  // Who is out and why (the "Who is out" panel, the history page): SPY is one long round.
  function results(view) {
    if (!view.players.some((p) => p.eliminated)) return [];
    const over = view.status === "game-over";
    const rows = view.players.map((p) => {
      if (p.eliminated) return {seat: p.seat, name: p.name, fig: "OUT", note: p.out_reason || "", cls: "out"};
      if ((view.winners || []).includes(p.seat)) return {seat: p.seat, name: p.name, fig: "WINNER", note: "the last spy standing", cls: "win"};
      return {seat: p.seat, name: p.name, fig: "in", note: "still in the game", cls: ""};
    });
    const out = view.players.filter((p) => p.eliminated).map((p) => p.name);
    return [Companion.roundCard({kicker: over ? "The game" : "So far", head: `Out: ${out.join(", ")}`, rows, outcome: "out"})];
  }

  function headline(view) {
    if (view.status === "game-over") {
      const names = view.winners.map((s) => view.players[s].name).join(" and ");
      return h("div", {class: "headline over"}, h("p", {class: "big"}, `${names} wins!`), outNews(view), outcome(view.last_outcome, "latest"));
    }
    if (view.last_out) return h("div", {class: "headline"}, outNews(view), outcome(view.last_outcome, "latest"));
    if (view.status === "setup") return h("div", {class: "headline"}, h("p", {class: "lead"}, "Claim your colours"), colourStrip(view));
    return h("div", {class: "headline"}, outcome(view.last_outcome, "latest"));
  }

  // The card id of an exposure slot of a colour: "Top Secret 2" of red is spy/red-top-secret-2.
  const slotCard = (colour, label) => `spy/${colour}-${label.toLowerCase().replace(/\s+/g, "-")}`;

  Companion.registerGame("spy", {
    showRound: false, // SPY is one long round
    results,
    resultsLabel: "Who is out",
    fitsScreen: true, // the scoreboard shrinks the type if a board ever holds more than fits
    // The control page's mat offers only what this table plays with: two players use green and red,
    // both with their extra Bomb 2; three or four use every colour, without the extra bombs.
    matCards(view, data) {
      if (view.players.length === 2) {
        const colours = data.two_player_colours || ["green", "red"];
        return data.cards.filter((c) => colours.includes(c.colour));
      }
      return data.cards.filter((c) => !c.extra);
    },
    // What the table can see on the mat (all public): the colours taken at setup; in play, the cards
    // face up, the cards of a player who is out and the colours nobody plays.
    matKnown(view) {
      const known = new Map();
      const claimed = view.players.filter((p) => p.colour);
      if (view.status === "setup") {
        for (const p of claimed) known.set(`spy/${p.colour}-spy`, `${p.name}'s colour`);
        return known;
      }
      const all = (colour, text) => { for (const kind of KINDS) known.set(`spy/${colour}-${kind}`, text); };
      for (const p of claimed) {
        if (p.eliminated) all(p.colour, `${p.name} is out`);
        else for (const e of p.exposure) if (e.revealed) known.set(slotCard(p.colour, e.card), "face up");
      }
      for (const colour of COLOURS) if (!claimed.some((p) => p.colour === colour)) all(colour, "not in play");
      return known;
    },
    render(view, root) {
      root.replaceChildren(
        h("div", {class: `spy ${view.status}`, dataset: {players: view.players.length}},
          headline(view),
          h("div", {class: "players"}, view.players.map((p) => panel(view, p)))));
    },
  });
})();
