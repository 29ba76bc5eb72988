//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// SPY x FAMILY: Mission for Peanuts on the scoreboard: one panel per seat with the Role (face up), what
// it protects from, the cards in hand (as a count), the discard pile in order (face-down cards as
// backs), the Peanut Points and who is out; above them the deck, the target, the set-aside Assassin,
// a claim in progress (how many cards, never which) and, when a round ends, why the winner won.
// Everything shown comes from the public view, which names no face-down card and no hand card that
// has not been shown at the showdown: so neither can this.
"use strict";

(() => {
  const {h} = Companion;
  const ROLES = ["spy", "telepath", "assassin", "seer", "informant", "handler", "agent", "secret-police"];
  // What each threat in `protected_from` means, as the table says it.
  const SHIELDS = {
    "assassin": "Assassin can't eliminate",
    "trade": "can't be made to trade",
    "discard": "can't be made to discard",
    "secret-police": "Secret Police can't pick",
  };
  // What the prompt asks of a player whose turn it is not.
  const ASKED = {"eliminate": "IS OUT", "assassin-check": "ASSASSIN?", "agent-discard": "DISCARDS"};
  const names = (view, seats) => {
    const list = seats.map((s) => view.players[s].name);
    return list.length < 2 ? list.join("") : `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
  };
  const role = (card) => (ROLES.includes(card.role) ? card.role : "unknown");

  // The notches printed on the card's edge: as many marks as copies of its Role.
  function notchMarks(count) {
    const marks = [];
    for (let i = 0; i < count; i++) marks.push(h("i", {}));
    const text = `${count} notch${count === 1 ? "" : "es"}`;
    return h("span", {class: "notches", title: text, "aria-label": text}, marks);
  }

  // A face-up card: its Role's colour, its name, its notches.
  function face(card, size, label) {
    return h("div", {class: `pcard ${size} r-${role(card)}`, title: `${card.name} (${card.notches} notches)`},
      h("span", {class: "band"}, notchMarks(card.notches)),
      h("span", {class: "cname"}, card.name),
      label ? h("span", {class: "clabel"}, label) : null);
  }

  // A discarded card lying sideways in its pile: the band with its notches, and its name.
  function chip(card) {
    return h("div", {class: `chip r-${role(card)}`, title: `${card.name} (${card.notches} notches)`},
      h("span", {class: "band"}, notchMarks(card.notches)), h("span", {class: "cname"}, card.name));
  }

  // A card whose face nobody may see: a back, and nothing else.
  function back(size, label) {
    return h("div", {class: `pcard ${size} back`, "aria-label": "face-down card"},
      label ? h("span", {class: "clabel"}, label) : null);
  }

  function placeholder(size, text) {
    return h("div", {class: `pcard ${size} empty`}, h("span", {class: "clabel"}, text));
  }

  // Peanut Points: one peanut per point up to the target, the earned ones filled.
  function points(player, target) {
    const nuts = [];
    for (let i = 0; i < Math.max(target, player.score); i++) {
      nuts.push(h("span", {class: `nut ${i < player.score ? "got" : ""}`, "aria-hidden": "true"}));
    }
    return h("div", {class: "points"},
      h("span", {class: "nuts", title: `${player.score} of ${target} Peanut Points`}, nuts),
      h("span", {class: "score"}, player.score));
  }

  // The round just won, from the next round's deal until its first input (a Role shown): the news says
  // who won it and how, each panel that player's part of it (the point, the hand shown, out).
  function justFinished(view) {
    const last = lastRound(view);
    if (!last || !last.how || view.status !== "setup" || last.round !== view.round - 1) return null;
    return view.players.every((p) => !p.role) ? last : null;
  }

  // One player's part of a finished round: their figure (the point, out) and what they showed.
  function partIn(r, player) {
    const won = r.winners.includes(player.seat);
    const shown = (r.hands || []).find((x) => x.seat === player.seat);
    let note = "";
    if (shown) {
      note = `${shown.role.name} + ${shown.hand.name}: ${shown.combination || "no combination"}, ${shown.notches} notches`;
    } else if (won && r.how === "family") {
      note = `found the family: ${(r.cards || []).map((c) => c.name).join(", ")}`;
    } else if (won && r.how === "last-standing") {
      note = "last player standing";
    }
    if (won) return {fig: "★ +1 point", note, cls: "win"};
    if ((r.out || []).includes(player.seat)) return {fig: "out", note: note || "out of the round", cls: "out"};
    return {fig: "no point", note, cls: ""};
  }

  const HOW = {family: "Finding the Family", "last-standing": "Last player standing", showdown: "Showdown"};

  // The round's reason says how it was won ("... found the family", "... the last player standing",
  // "... wins the showdown with ..."), except a showdown decided by notches: that one says it.
  function howWon(r) {
    return r.how === "showdown" && !/showdown/i.test(r.reason) ? `Showdown: ${r.reason}` : r.reason;
  }

  function wonLine(view, r) {
    const who = names(view, r.winners);
    return r.winners.length > 1 ? `${who} share round ${r.round}` : `${who} won round ${r.round}`;
  }

  // Each finished round (the "Last round" panel, the history page): who won, how, every player's part.
  function results(view) {
    return view.rounds.map((r) => Companion.roundCard({
      kicker: `Round ${r.round}${r.how ? ` · ${HOW[r.how] || r.how}` : ""}`,
      head: wonLine(view, r),
      why: howWon(r),
      rows: r.how ? view.players.map((p) => ({seat: p.seat, name: p.name, ...partIn(r, p)})) : [],
    }));
  }

  function roundOver(view) {
    return view.status === "game-over" || (view.prompt && view.prompt.step === "round-over");
  }

  function lastRound(view) {
    return view.rounds.length ? view.rounds[view.rounds.length - 1] : null;
  }

  // The seats still to show a hand at the showdown (any order is accepted).
  function toShow(view) {
    if (!view.prompt || view.prompt.step !== "showdown") return new Set();
    const shown = new Set(((view.showdown || {}).hands || []).map((x) => x.seat));
    return new Set(view.players.filter((p) => !p.eliminated && !shown.has(p.seat)).map((p) => p.seat));
  }

  function tagFor(view, player, pending) {
    const over = roundOver(view);
    const tag = (kind, text) => h("span", {class: `tag ${kind}`}, text);
    if (view.status === "game-over" && view.winners.includes(player.seat)) return tag("win", "WINNER");
    if (over && lastRound(view) && lastRound(view).winners.includes(player.seat)) return tag("win", "+1 POINT");
    if (player.eliminated) return tag("out", "OUT");
    if (over) return null;
    if (view.status === "setup") return player.role ? null : tag("ask", "SHOW ROLE");
    if (pending.has(player.seat)) return tag("ask", "SHOW HAND");
    if (view.claim && view.claim.seat === player.seat) return tag("claim", "CLAIMS");
    if (view.turn === player.seat) return tag("turn", view.extra_turn ? "TURN +1" : "TURN");
    if (view.prompt && view.prompt.seat === player.seat) return tag("ask", ASKED[view.prompt.step] || "ANSWERS");
    return null;
  }

  function shields(player) {
    const from = player.protected_from;
    const both = from.includes("trade") && from.includes("discard");  // the Assassin Role: one line
    const lines = from.filter((t) => !(both && t === "discard"))
      .map((t) => (both && t === "trade" ? "can't be made to trade or discard" : SHIELDS[t] || t));
    if (!lines.length) return null;
    return h("ul", {class: "shields", "aria-label": "protections"}, lines.map((line) => h("li", {}, line)));
  }

  // The hand: backs for the count, or at the showdown the card shown and what it makes with the Role.
  function hand(player, shownHand) {
    if (shownHand) return face(shownHand.hand, "big", "hand");
    const count = player.hand_count;
    if (!count) return placeholder("big", player.eliminated ? "no hand" : "hand empty");
    const shown = Math.min(count, 3);  // a few backs, the top one labelled with the count
    const stack = [];
    for (let i = 0; i < shown; i++) stack.push(back("big", i === shown - 1 ? `${count} in hand` : ""));
    return h("div", {class: "hand", title: `${count} card${count === 1 ? "" : "s"} in hand`}, stack);
  }

  // Which line of the verdict the round was decided on (a shared round: the last count, the discards).
  const KEY_LINE = {combination: "combo", notches: "sum", discards: "disc", tie: "disc"};

  function verdict(shownHand, showdown) {
    if (!shownHand) return null;
    const key = showdown.winners.includes(shownHand.seat) ? KEY_LINE[showdown.decided_by] : null;
    const part = (kind, text, extra = "", title = null) =>
      h("span", {class: `${kind} ${extra} ${key === kind ? "key" : ""}`, title}, text);
    const counted = shownHand.discard_notches !== null && shownHand.discard_notches !== undefined;
    return h("div", {class: "verdict"},
      part("combo", shownHand.combination || "no combination", shownHand.combination ? "yes" : "no"),
      h("p", {class: "counts"},
        part("sum", `${shownHand.notches} notches`, "", "Role + hand"),
        counted ? part("disc", `pile: ${shownHand.discard_notches} notches`) : null));
  }

  function pile(player) {
    // A face-down card shows its place in the pile: the number the Handler's take-back buttons use.
    const cards = player.discards.map((d, i) => (d.face_up ? chip(d)
      : h("div", {class: "chip back", title: `face-down card #${i + 1}`}, `#${i + 1}`)));
    const down = player.discards.filter((d) => !d.face_up).length;
    return h("div", {class: "pile"},
      h("span", {class: "label"}, "Discards", down ? h("span", {class: "down"}, ` · ${down} face down`) : null),
      cards.length ? h("div", {class: "cards"}, cards) : h("span", {class: "none"}, "none yet"));
  }

  function panel(view, player, pending) {
    const showdown = view.showdown;
    const shownHand = showdown ? showdown.hands.find((x) => x.seat === player.seat) : null;
    const over = roundOver(view);
    const classes = ["seat", "player"];
    const showing = view.prompt && view.prompt.step === "showdown";
    if (!over && !showing && view.status === "playing" && view.turn === player.seat) classes.push("turn");
    if (!over && view.prompt && view.prompt.seat === player.seat) classes.push("asked");
    if (player.eliminated) classes.push("out");
    if (over && lastRound(view) && lastRound(view).winners.includes(player.seat)) classes.push("won");
    if (view.status === "game-over" && view.winners.includes(player.seat)) classes.push("winner");
    const claiming = view.claim && view.claim.seat === player.seat;

    // Protections matter while the round is played; once hands are shown they would only crowd it.
    const guarded = player.protected_from.length && !showdown && !over;
    return h("section", {class: classes.join(" "), dataset: {seat: player.seat}},
      h("header", {}, h("span", {class: "name"}, player.name), tagFor(view, player, pending)),
      h("div", {class: "front"},
        player.role ? face(player.role, "big", "Role") : placeholder("big", "Role?"),
        hand(player, shownHand)),
      h("div", {class: "info"},
        points(player, view.target),
        roundLine(view, player),
        verdict(shownHand, showdown),
        claiming || guarded
          ? h("div", {class: "marks"}, claiming ? claimTrack(view.claim) : null, guarded ? shields(player) : null)
          : null),
      pile(player));
  }

  // Right after a round: the player's part of it, in their own panel.
  function roundLine(view, player) {
    const r = justFinished(view);
    if (!r) return null;
    const part = partIn(r, player);
    return h("div", {class: `round-line ${part.cls}`},
      h("span", {class: "rl-kicker"}, `Round ${r.round}`), h("b", {class: "rl-fig"}, part.fig),
      part.note ? h("span", {class: "rl-note"}, part.note) : null);
  }

  // A claim in progress: how many of the three cards are tapped, never which.
  function claimTrack(claim) {
    const slots = [];
    for (let i = 0; i < 3; i++) slots.push(h("span", {class: `slot ${i < claim.tapped ? "on" : ""}`}));
    return h("div", {class: "claim", title: `${claim.tapped} of 3 cards tapped`},
      h("span", {class: "slots"}, slots), h("span", {}, `${claim.tapped} of 3`));
  }

  function deck(view) {
    const count = view.deck_count;
    const state = count === 0 ? "empty" : count <= 3 ? "low" : "";
    return h("div", {class: `deck ${state}`, title: `${count} cards in the deck`},
      h("div", {class: "stack"}, count ? [back("mid"), back("mid")] : placeholder("mid", "")),
      h("div", {class: "what"}, h("span", {class: "num"}, count),
        h("span", {class: "label"}, count === 0 ? "deck empty" : "in the deck")));
  }

  function news(view) {
    const last = lastRound(view);
    if (view.status === "game-over") {
      const verb = view.winners.length > 1 ? "win" : "wins";
      return [h("p", {class: "big win"}, `${names(view, view.winners)} ${verb} the game!`),
        last ? h("p", {class: "why"}, last.reason) : null];
    }
    if (roundOver(view)) {
      const who = names(view, last.winners);
      const headline = last.winners.length > 1 ? `${who} share round ${last.round}` : `${who} wins round ${last.round}`;
      return [h("p", {class: "big win"}, headline),
        h("p", {class: "why"}, last.reason)];
    }
    if (view.claim) {
      const who = view.players[view.claim.seat].name;
      return [h("p", {class: "big claiming"}, `${who} claims Finding the Family!`),
        h("p", {class: "why"}, `Spy, Telepath, Assassin: ${view.claim.tapped} of 3 tapped`)];
    }
    if (view.prompt && view.prompt.step === "showdown") {
      return [h("p", {class: "big"}, "Showdown!"),
        h("p", {class: "why"}, "The deck is empty: everyone still in shows their hand.")];
    }
    const finished = justFinished(view);
    if (finished) {
      return [h("p", {class: "big win"}, wonLine(view, finished)),
        h("p", {class: "why"}, howWon(finished)),
        h("p", {class: "why next"}, `Round ${view.round}: show your Roles`)];
    }
    if (view.status === "setup") return [h("p", {class: "big"}, "Show your Roles")];
    const who = view.players[view.turn].name;
    return [h("p", {class: "big"}, `${who}'s turn`),
      view.extra_turn ? h("p", {class: "why extra"}, `${who} plays again after this turn`) : null];
  }

  function headline(view) {
    return h("div", {class: "headline"},
      deck(view),
      h("div", {class: "news"}, news(view)),
      h("div", {class: "meta"},
        h("p", {class: "target"}, h("span", {class: "nut got", "aria-hidden": "true"}), ` First to ${view.target}`),
        view.set_aside ? h("div", {class: "aside", title: `${view.set_aside.name} set aside for the round`},
          chip(view.set_aside), h("span", {}, "set aside")) : null));
  }

  // The cards the public view places somewhere (never a face-down one: the view names none), with
  // where: the control page's mat dims them.
  function known(view) {
    const where = new Map();
    const add = (card, text) => { if (card && card.card && !where.has(card.card)) where.set(card.card, text); };
    for (const p of view.players) {
      add(p.role, `${p.name}: Role`);
      for (const d of p.discards) if (d.face_up) add(d, `${p.name}: discard`);
    }
    add(view.set_aside, "set aside");
    for (const shown of (view.showdown || {}).hands || []) add(shown.hand, `${view.players[shown.seat].name}: hand`);
    return where;
  }

  Companion.registerGame("peanuts", {
    fitsScreen: true, // the scoreboard shrinks the type if a board ever holds more than fits
    matKnown: known,
    results,
    render(view, root) {
      const pending = toShow(view);
      root.replaceChildren(
        h("div", {class: `peanuts ${view.status}`, dataset: {players: view.players.length}},
          headline(view),
          h("div", {class: "players"}, view.players.map((p) => panel(view, p, pending)))));
    },
  });
})();
