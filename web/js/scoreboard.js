//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// The public scoreboard: follows the table live over /api/events; shows only the public view.
"use strict";

(() => {
  const {h, renderer, connect, banner, boardMoved, titleOf, cueStyle, gameReady} = Companion;
  const board = document.getElementById("board");
  let view = null;

  function show(next) {
    view = next;
    // A game not in the first look loads (its presentation, its renderer) when first seen; the board waits.
    if (!gameReady(view.game, () => { if (view === next) show(next); })) return;
    boardMoved();
    document.body.dataset.game = view.game || "idle";
    document.body.dataset.status = view.status;
    document.getElementById("title").textContent = titleOf(view.game);
    document.getElementById("round").textContent =
      view.status === "game-over" ? "Game over"
        : view.round && renderer(view.game).showRound !== false ? `Round ${view.round}` : "";
    document.getElementById("prompt").textContent = view.prompt ? view.prompt.text : "";
    showStory(view);
    showLastRound(view);
    if (!view.game) {
      board.replaceChildren(h("div", {class: "idle"}, h("p", {}, "No game yet."),
        h("p", {class: "hint"}, "Open /control on the host's device to start one.")));
      fit();
      return;
    }
    renderer(view.game).render(view, board);
    fit();
  }

  // The game's story (the view's public log): its latest line in the top bar, the whole of it (and the
  // game-over summary) one tap away, newest last, in a panel over the side of the board (so the board
  // keeps its place). Opened, it shows its newest line and follows the new ones, unless the reader
  // scrolled up to read an older one.
  const story = document.getElementById("story");
  const storyPanel = story.querySelector(".story-panel");
  const list = story.querySelector("ol");
  // Whether the reader is at the newest line (as far down as the list goes): then it follows.
  const atEnd = () => list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
  function toEnd() { list.scrollTop = list.scrollHeight; }
  function showStory(next) {
    const log = next.log || [];
    const summary = next.summary || [];
    story.hidden = !next.game || (!log.length && !summary.length);
    story.querySelector("summary").textContent =
      summary.length ? `Game over: ${summary[0]}` : `Story: ${log[log.length - 1] || ""}`;
    story.querySelector(".summary").replaceChildren(...summary.map((line) => h("p", {}, line)));
    const follow = !story.open || atEnd();
    list.replaceChildren(...log.map((line) => h("li", {}, line)));
    if (story.open) { placeStory(); if (follow) toEnd(); }
  }
  // Between the top bar and the prompt: the board's own space, which the panel lies over.
  function placeStory() {
    const top = document.querySelector(".topbar").getBoundingClientRect().bottom;
    const prompt = document.getElementById("prompt").getBoundingClientRect();
    const phone = innerWidth <= 700;
    storyPanel.style.top = `${phone ? Math.max(top, innerHeight * 0.45) : top}px`;
    storyPanel.style.bottom = `${Math.max(0, innerHeight - prompt.top)}px`;
  }
  story.addEventListener("toggle", () => {
    if (!story.open) return;
    placeStory();
    toEnd();
  });

  // The last round's result one tap away ("Last round" in the top bar; the board shows it by itself
  // right after the round): the latest of the renderer's `results(view)`, over the board until tapped.
  const lastButton = document.getElementById("last-round-button");
  const lastPanel = document.getElementById("last-round");
  let lastOpen = false;
  function showLastRound(next) {
    const r = next.game ? renderer(next.game) : null;
    const cards = r && r.results ? r.results(next) : [];
    if (!cards.length) lastOpen = false;
    lastButton.hidden = !cards.length;
    lastButton.textContent = (r && r.resultsLabel) || "Last round";
    lastButton.setAttribute("aria-expanded", String(lastOpen));
    lastPanel.hidden = !lastOpen;
    lastPanel.replaceChildren(...cards.slice(-1));
  }
  lastButton.addEventListener("click", () => { lastOpen = !lastOpen; if (view) showLastRound(view); });
  lastPanel.addEventListener("click", () => { lastOpen = false; if (view) showLastRound(view); });

  // Everything on the board must be seen from across the table, without scrolling. Each game's layout
  // is made to fit the screen; when a board still holds more (long discard piles, long names), the type
  // of the whole page steps down (every size is in rem) until it fits, and back up when it can.
  const root = document.documentElement;
  const SMALLEST = 10; // px: the least the type may shrink to
  function overflows() {
    if (board.scrollHeight > board.clientHeight + 1 || board.scrollWidth > board.clientWidth + 1) return true;
    // A panel that clips what does not fit in it (SPY's) must not be hiding anything either.
    return [...board.querySelectorAll(".seat")].some((node) =>
      getComputedStyle(node).overflowY !== "visible" && node.scrollHeight > node.clientHeight + 1);
  }
  function fit() {
    root.style.removeProperty("font-size");
    if (!view || !view.game || !renderer(view.game).fitsScreen || !overflows()) return;
    let fits = SMALLEST;
    let tooBig = parseFloat(getComputedStyle(root).fontSize);
    root.style.fontSize = `${fits}px`;
    if (overflows()) return;  // as small as it may go: the board scrolls
    while (tooBig - fits > 0.25) {
      const size = (fits + tooBig) / 2;
      root.style.fontSize = `${size}px`;
      if (overflows()) tooBig = size; else fits = size;
    }
    root.style.fontSize = `${fits}px`;
  }
  let resizing = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { fit(); if (story.open) placeStory(); }, 100);
  });

  // A cue with a banner sounds when its banner appears (banners queue up: Camouflage, then the trick,
  // then the mission...), cutting the sound before it, so the tunes do not play over each other; a
  // banner dropped to keep up with the board makes no sound, nor does one shown late (a page that was
  // hidden). Any other cue sounds at once.
  const LATE_SOUND = 2500; // ms
  function cue(c) {
    const hasBanner = banner(c, (shown, late) => {
      if (late < LATE_SOUND) Sounds.play(shown.cue, {cut: true});
      speak(shown.text);
    });
    if (!hasBanner) Sounds.play(c.cue);
    const {role} = cueStyle(c.cue);
    if (role === "reader-down") setHealth("Reader lost", false);
    if (role === "reader-up") setHealth("Live", true);
    document.body.dataset.lastCue = c.cue;
  }

  function setHealth(text, ok) {
    const node = document.getElementById("health");
    const changed = node.textContent !== text;
    node.textContent = text;
    node.className = `health ${ok ? "ok" : "bad"}`;
    // The top bar may wrap to another line and take the board's room: fit it again (the board is
    // drawn from the first look before the stream says "Live").
    if (changed) fit();
  }

  // Voice (optional): the scoreboard reads its announcements aloud with the browser's speech
  // synthesis; the choice is kept on this device.
  const voice = document.getElementById("voice");
  const canSpeak = "speechSynthesis" in window;
  let speaking = canSpeak && localStorage.getItem("companionVoice") === "on";
  function showVoice() {
    voice.hidden = !canSpeak;
    voice.textContent = speaking ? "Voice on" : "Voice off";
    voice.setAttribute("aria-pressed", String(speaking));
  }
  function speak(text) {
    if (!speaking || !text) return;
    speechSynthesis.cancel(); // the newest news only
    speechSynthesis.speak(new SpeechSynthesisUtterance(text));
  }
  voice.addEventListener("click", () => {
    speaking = !speaking;
    localStorage.setItem("companionVoice", speaking ? "on" : "off");
    showVoice();
    if (speaking) speak("Voice on");
  });
  showVoice();

  document.getElementById("sound").addEventListener("click", (e) => {
    Sounds.enable();
    e.target.textContent = "Sound on";
    e.target.disabled = true;
  });

  // The page arrived with its first look (the server's view, the game's presentation, the cues; its
  // renderer loaded before this script): the board is drawn now, then follows the stream. Without it
  // (`?first-look=0`) the stream's messages wait, in order, for the whole catalogue.
  const firstLook = document.getElementById("first-look");
  const first = firstLook ? JSON.parse(firstLook.textContent) : null;
  const ready = first ? Promise.resolve(Companion.useCatalog(first)) : Companion.loadCatalog();
  if (first) show(first.view);
  // The stream starts with the table's state: drawn already if nothing changed since the page was made.
  let drawn = first ? JSON.stringify(first.view) : null;
  function onState(v) {
    const same = drawn !== null && JSON.stringify(v) === drawn;
    drawn = null;
    if (!same) ready.then(() => show(v));
  }
  // The reader's health and the stream start after the first frame: the board is drawn first (or
  // after FOLLOW_AFTER at the latest: a hidden page runs no animation frames).
  const FOLLOW_AFTER = 300; // ms
  let following = false;
  function follow() {
    if (following) return;
    following = true;
    fetch("/healthz").then((r) => r.json()).then((s) => {
      if (s.reader === "lost") setHealth("Reader lost", false);
    }).catch(() => {});
    connect(onState, (c) => ready.then(() => cue(c)), linked);
  }
  if (first) {
    requestAnimationFrame(() => setTimeout(follow, 0));
    setTimeout(follow, FOLLOW_AFTER);
  } else follow();

  // Offline must be obvious: after OFFLINE_AFTER without the table the board dims and says so (what
  // it shows may be out of date); the stream's return brings the current state and clears it.
  const OFFLINE_AFTER = 3000; // ms
  let offlineTimer = null;
  function linked(open) {
    setHealth(open ? "Live" : "Reconnecting…", open);
    if (open) {
      clearTimeout(offlineTimer);
      offlineTimer = null;
      document.body.classList.remove("offline");
    } else if (!offlineTimer && !document.body.classList.contains("offline")) {
      offlineTimer = setTimeout(() => { offlineTimer = null; document.body.classList.add("offline"); }, OFFLINE_AFTER);
    }
  }
  document.body.append(h("div", {id: "offline", role: "alert"},
    h("strong", {}, "No connection to the table"), h("span", {}, "The board may be out of date. Reconnecting…")));
})();
