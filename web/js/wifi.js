// The table's own Wi-Fi on the control page (companion/webapp/hotspot.py). GET /api/hotspot is a
// control call (it carries the password): the panel shows the Wi-Fi QR code a phone's camera joins,
// then the scoreboard's, and buttons for the hold (POST /api/hotspot, as `companion hotspot` does).
// A table without [network] answers 404 and the panel stays hidden; without the token it says so.
"use strict";

(() => {
  const panel = document.getElementById("wifi-panel");
  if (!panel) return;
  const el = Companion.h;
  const $ = (id) => document.getElementById(id);
  const MODES = {
    hotspot: (s) => `The table's own Wi-Fi is on: ${s.clients} phone(s) joined.`,
    client: () => "The table is on a known Wi-Fi; its own comes up when there is none.",
    off: (s) => s.raises_in === null ? "No Wi-Fi is up." : `No known Wi-Fi: the table's own comes up in ${s.raises_in} s.`,
  };
  const HOLDS = [["on", "Wi-Fi on"], ["auto", "Automatic"], ["off", "Wi-Fi off"]];

  function code(src, alt, ...caption) {
    return el("figure", {class: "qr"}, el("img", {src, alt, width: 240, height: 240}), el("figcaption", {}, ...caption));
  }

  function show(s) {
    panel.hidden = false;
    $("wifi-state").textContent = (MODES[s.mode] || MODES.off)(s) + (s.error ? ` NetworkManager: ${s.error}` : "");
    $("wifi-codes").replaceChildren(
      code(s.wifi_qr, `Wi-Fi QR code for ${s.ssid}`, "1. Join ", el("b", {}, s.ssid), ", password ",
        el("code", {}, s.password)),
      code(s.scoreboard_qr, "QR code of the scoreboard", "2. Open the scoreboard: ", el("code", {}, s.scoreboard)));
    $("wifi-holds").replaceChildren(...HOLDS.map(([hold, label]) => el("button", {
      type: "button", class: s.hold === hold ? "selected" : null, "aria-pressed": String(s.hold === hold),
      onclick: () => Companion.api("POST", "/api/hotspot", {hold}).then(load, problem),
    }, label)), el("button", {type: "button", class: "link", onclick: load}, "refresh"));
  }

  function problem(err) {
    if (err.status === 404) { panel.hidden = true; return; }
    panel.hidden = false;
    $("wifi-state").textContent = err.status === 401
      ? "Save the table's token (or pair this device) to see its Wi-Fi password and QR codes."
      : `The table's Wi-Fi: ${err.message}`;
  }

  function load() { return Companion.api("GET", "/api/hotspot").then(show, problem); }
  load();
  window.addEventListener("storage", load); // a token saved in another tab
  document.getElementById("token-form")?.addEventListener("submit", () => setTimeout(load, 0));
})();
