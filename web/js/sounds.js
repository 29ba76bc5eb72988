// The page's sounds for the cues, made with WebAudio (no sound files): tunes, a real noise hiss for
// the lit bomb, a noise burst for BOOM. Browsers only allow sound after a tap on the page.
"use strict";

const Sounds = (() => {
  let ctx = null;
  let muted = false;
  let bus = null; // the gain every note of the latest sound goes through
  const playing = new Set(); // the buses of the sounds that may still be heard (a newer one can cut them)

  function enable() {
    if (!ctx) ctx = new (window.AudioContext || window.webkitAudioContext)();
    if (ctx.state === "suspended") ctx.resume();
    return ctx;
  }

  function tone(freq, start, length, type = "triangle", gain = 0.2) {
    const osc = ctx.createOscillator();
    const amp = ctx.createGain();
    osc.type = type;
    osc.frequency.value = freq;
    amp.gain.setValueAtTime(gain, ctx.currentTime + start);
    amp.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + start + length);
    osc.connect(amp).connect(bus);
    osc.start(ctx.currentTime + start);
    osc.stop(ctx.currentTime + start + length + 0.05);
  }

  function noise(length, {from = 6000, to = 2000, gain = 0.4, type = "highpass"} = {}) {
    const buffer = ctx.createBuffer(1, Math.floor(ctx.sampleRate * length), ctx.sampleRate);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
    const src = ctx.createBufferSource();
    src.buffer = buffer;
    const filter = ctx.createBiquadFilter();
    filter.type = type;
    filter.frequency.setValueAtTime(from, ctx.currentTime);
    filter.frequency.linearRampToValueAtTime(to, ctx.currentTime + length);
    const amp = ctx.createGain();
    amp.gain.setValueAtTime(gain, ctx.currentTime);
    amp.gain.linearRampToValueAtTime(0.001, ctx.currentTime + length);
    src.connect(filter).connect(amp).connect(bus);
    src.start();
  }

  const tunes = {
    "card-accepted": () => tone(880, 0, 0.08),
    "error": () => { tone(247, 0, 0.15, "square", 0.12); tone(220, 0.2, 0.3, "square", 0.12); },
    "unknown-card": () => { tone(330, 0, 0.1, "square", 0.1); tone(330, 0.15, 0.1, "square", 0.1); tone(220, 0.3, 0.25, "square", 0.1); },
    "trick-won": () => [523, 659, 784].forEach((f, i) => tone(f, i * 0.1, 0.2)),
    "camouflage": () => [784, 659, 523, 392].forEach((f, i) => tone(f, i * 0.08, 0.2, "sine")),
    "mission-accomplished": () => [523, 659, 784, 1047].forEach((f, i) => tone(f, i * 0.12, 0.4)),
    "mission-sabotaged": () => [440, 392, 349, 262].forEach((f, i) => tone(f, i * 0.15, 0.4, "sawtooth", 0.1)),
    "round-won": () => [523, 784, 1047].forEach((f, i) => tone(f, i * 0.12, 0.3)),
    "game-won": () => [523, 523, 784, 880, 1047].forEach((f, i) => tone(f, i * 0.15, 0.5)),
    "bomb-lit": () => noise(1.5, {from: 7000, to: 3000, gain: 0.35}),        // TSSSsss
    "boom": () => { noise(1.2, {from: 800, to: 60, gain: 0.9, type: "lowpass"}); tone(60, 0, 0.8, "sine", 0.6); },
    "spied": () => tone(660, 0, 0.12, "sine"),
    "card-revealed": () => [660, 880].forEach((f, i) => tone(f, i * 0.1, 0.2)),
    "player-eliminated": () => [392, 330, 262].forEach((f, i) => tone(f, i * 0.15, 0.3, "square", 0.1)),
    "family-found": () => [523, 659, 784, 1047, 1319].forEach((f, i) => tone(f, i * 0.1, 0.4)),
    "extra-turn": () => [660, 660].forEach((f, i) => tone(f, i * 0.12, 0.1)),
    "shuffle-in": () => noise(0.4, {from: 3000, to: 1500, gain: 0.15, type: "bandpass"}),
    "reader-lost": () => [440, 220].forEach((f, i) => tone(f, i * 0.2, 0.3, "square", 0.1)),
    "undo": () => [660, 440].forEach((f, i) => tone(f, i * 0.08, 0.12, "sine")),
  };

  // Plays a cue's sound; with `cut`, a sound still playing fades out at once (the newer news wins,
  // and two tunes never sound over each other).
  function play(name, {cut = false} = {}) {
    if (muted || !ctx || ctx.state !== "running" || !tunes[name]) return false;
    if (cut) {
      for (const old of playing) {
        old.gain.setTargetAtTime(0, ctx.currentTime, 0.03);
        playing.delete(old);
        setTimeout(() => old.disconnect(), 500);
      }
    }
    const mine = bus = ctx.createGain();
    bus.connect(ctx.destination);
    playing.add(mine);
    setTimeout(() => playing.delete(mine), 2500); // every tune is over by then
    tunes[name]();
    return true;
  }

  return {enable, play, has: (name) => !!tunes[name], setMuted: (value) => { muted = value; },
    get enabled() { return !!ctx && ctx.state === "running"; }};
})();
