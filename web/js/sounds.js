//# allFunctionsCalledOnLoad
// (A hint to V8: compile all of this file's functions as it loads, off the page's thread; most of
// them draw the first frame. docs/performance.md, "Compiled while it loads".)
// The page's sounds for the cues, made with WebAudio (no sound files) from the cue catalogue's notes
// and noise bursts (a hiss for the lit bomb, a burst for BOOM). Browsers only allow sound after a tap
// on the page.
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

  // A cue's sound is data in the cue catalogue (companion/core/cues.py): notes and noise bursts.
  function tuneOf(name) { return Companion.cueStyle(name).sound || []; }
  function perform(parts) {
    for (const part of parts) {
      if (part.noise !== undefined) noise(part.noise, {from: part.from, to: part.to, gain: part.gain, type: part.filter});
      else tone(part.hz, part.at, part.for, part.wave, part.gain);
    }
  }

  // Plays a cue's sound; with `cut`, a sound still playing fades out at once (the newer news wins,
  // and two tunes never sound over each other).
  function play(name, {cut = false} = {}) {
    if (muted || !ctx || ctx.state !== "running" || !tuneOf(name).length) return false;
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
    perform(tuneOf(name));
    return true;
  }

  return {enable, play, has: (name) => tuneOf(name).length > 0, setMuted: (value) => { muted = value; },
    get enabled() { return !!ctx && ctx.state === "running"; }};
})();
