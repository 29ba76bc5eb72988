// Measures a page for tests/test_layout.py: its scroll width, and every pair of visible text boxes that
// overlap (each clipped by its scrolling or clipping ancestors; a block's own line box, not the taller
// glyph area of big type), and each visible text's computed font size (tests/test_layout.py's
// readability test). The banner is left out: it is meant to lie over the board.
(KEY) => {
  // Visible text boxes (clipped by scrolling/overflow ancestors), and pairs of them that overlap.
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const el = node.parentElement;
    if (!el || el.closest("#banner, script, style, option, select, [hidden]")) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || +style.opacity === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    let r = range.getBoundingClientRect();
    let box = {l: r.left, t: r.top, r: r.right, b: r.bottom};
    // A block's own box (its line height) rather than the taller glyph area of big type.
    let block = el;
    while (block.parentElement && getComputedStyle(block).display === "inline") block = block.parentElement;
    const own = block.getBoundingClientRect();
    box.t = Math.max(box.t, own.top); box.b = Math.min(box.b, own.bottom);
    for (let a = el; a && a !== document.documentElement; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.display === "none") { box = null; break; }
      if (+s.opacity === 0) { box = null; break; }
      if (s.overflowX !== "visible" || s.overflowY !== "visible") {
        const c = a.getBoundingClientRect();
        box = {l: Math.max(box.l, c.left), t: Math.max(box.t, c.top), r: Math.min(box.r, c.right), b: Math.min(box.b, c.bottom)};
      }
    }
    if (!box || box.r - box.l < 1 || box.b - box.t < 1) continue;
    const path = [];
    for (let a = el; a && a !== document.body && path.length < 3; a = a.parentElement) {
      const classes = typeof a.className === "string" && a.className.trim() ? `.${a.className.trim().split(/\s+/).join(".")}` : "";
      path.unshift(a.tagName.toLowerCase() + classes);
    }
    boxes.push({...box, text: node.textContent.trim().slice(0, 30), path: path.join(" > "), el,
      size: parseFloat(style.fontSize)});
  }
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
    const w = Math.min(a.r, b.r) - Math.max(a.l, b.l), hgt = Math.min(a.b, b.b) - Math.max(a.t, b.t);
    if (w > 2 && hgt > 2) overlaps.push(`${a.path} "${a.text}" x ${b.path} "${b.text}"`);
  }
  // Key text: inside an element of the KEY selector (a score's small "/ 3" target is not the score).
  const key = (el) => Boolean(KEY && el.closest(KEY)) && el.tagName !== "SMALL";
  const texts = boxes.map((b) => ({text: b.text, path: b.path, size: b.size, key: key(b.el)}));
  return {scrollWidth: document.documentElement.scrollWidth, innerWidth, overlaps, texts};
}
