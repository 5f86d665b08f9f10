// Her verdict drawn (issue 53, item 4): her level as a badge, her guess probability beside the base rate, her
// group's composition, the random-match distribution with her distance marked. Inline SVG built with the DOM (no
// markup from strings, no network); every picture says in text what its colours show. The TUI's twins are
// Textual widgets (verifier/tui/picture.py).
(() => {
  const pp = globalThis.permutedPrivacy;
  const NS = "http://www.w3.org/2000/svg";
  const INK = "#111111";
  const BAR = "#1f5fa8";  // 6.4:1 on white
  const BASE = "#5f5f5f";  // 6.4:1 on white
  const MINE = "#a8321f";  // 6.1:1 on white

  const svg = (width, height, label) => {
    const s = document.createElementNS(NS, "svg");
    for (const [k, v] of Object.entries({ viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": label })) s.setAttribute(k, v);
    s.style.maxWidth = `${width}px`;
    const title = document.createElementNS(NS, "title");
    title.textContent = label;
    s.append(title);
    return s;
  };
  const shape = (parent, name, attrs, text = null) => {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== null) e.textContent = text;
    parent.append(e);
    return e;
  };

  pp.level_badge = function level_badge(level) {
    // Her level in words, on a colour that repeats what the words say.
    const p = document.createElement("p");
    p.className = `badge badge-${level}`;
    p.textContent = level.replace("_", " ").toUpperCase();
    return p;
  };

  pp.guess_picture = function guess_picture(name, risk, prior, together = false) {
    // Two bars out of 100%: how often someone using the release (with together, all her releases) guesses her
    // value right, and anyone without it.
    const shown = pp.literal(name);
    const source = together ? "these releases" : "this release";
    const label = `Your ${shown}: guessed right ${pp.chance(risk)} of the time from ${source}, ${pp.chance(prior)} without ${together ? "them" : "it"}.`;
    const s = svg(360, 84, label);
    shape(s, "text", { x: 0, y: 14, fill: INK, "font-size": 14 }, `Your ${shown}, guessed right:`);
    [[`from ${source}`, risk, BAR], [together ? "without them" : "without it", prior, BASE]].forEach(([words, p, colour], i) => {
      const y = 26 + i * 28;
      shape(s, "text", { x: 0, y: y + 15, fill: INK, "font-size": 13 }, words);
      shape(s, "rect", { x: 120, y, width: 180, height: 20, fill: "#ffffff", stroke: INK });
      shape(s, "rect", { x: 120, y, width: Math.max(0, Math.min(1, Number(p) || 0)) * 180, height: 20, fill: colour });
      shape(s, "text", { x: 306, y: y + 15, fill: INK, "font-size": 13 }, pp.chance(p));
    });
    return s;
  };

  pp.group_picture = function group_picture(n, same, name) {
    // Her group's records as squares, those that share her value filled (at most 100 squares; past that, a bar).
    const shown = pp.literal(name);
    const label = `${same} of the ${n} records in your group share your ${shown}.`;
    if (n > 100) {
      const s = svg(360, 44, label);
      shape(s, "text", { x: 0, y: 14, fill: INK, "font-size": 13 }, label);
      shape(s, "rect", { x: 0, y: 22, width: 330, height: 18, fill: "#ffffff", stroke: INK });
      shape(s, "rect", { x: 0, y: 22, width: (330 * same) / n, height: 18, fill: MINE });
      return s;
    }
    const per = 15;
    const rows = Math.ceil(n / per);
    const s = svg(360, 24 + rows * 22, label);
    shape(s, "text", { x: 0, y: 14, fill: INK, "font-size": 13 }, label);
    for (let i = 0; i < n; i += 1) {
      const filled = i < same;
      shape(s, "rect", { x: (i % per) * 22, y: 22 + Math.floor(i / per) * 22, width: 18, height: 18,
        fill: filled ? MINE : "#ffffff", stroke: INK });
    }
    return s;
  };

  pp.match_picture = function match_picture(distribution, distance) {
    // The share of random records at each distance, her own distance's bar marked and named.
    const entries = Object.entries(distribution).map(([d, p]) => [Number(d), Number(p)]).sort((a, b) => a[0] - b[0]);
    const top = Math.max(...entries.map(([, p]) => p), 1e-12);
    const last = Math.max(distance, ...entries.map(([d]) => d));
    const width = Math.max(4, Math.min(24, Math.floor(320 / (last + 1))));
    const label = `How far random records fall from your values; yours is at distance ${distance}, marked.`;
    const s = svg(Math.max(360, 40 + (last + 1) * width), 170, label);
    shape(s, "text", { x: 0, y: 14, fill: INK, "font-size": 13 }, "Random records by distance (yours marked)");
    for (const [d, p] of entries) {
      const h = (100 * p) / top;
      shape(s, "rect", { x: 20 + d * width, y: 120 - h, width: width - 1, height: h, fill: d === distance ? MINE : BAR });
    }
    shape(s, "line", { x1: 20, x2: 20 + (last + 1) * width, y1: 121, y2: 121, stroke: INK });
    shape(s, "text", { x: 20, y: 160, fill: INK, "font-size": 12 }, `distance 0 to ${last}; taller: more random records`);
    shape(s, "line", { x1: 20 + distance * width + width / 2, x2: 20 + distance * width + width / 2, y1: 20, y2: 122,
      stroke: MINE, "stroke-width": 2, "stroke-dasharray": "4 2" });
    shape(s, "text", { x: 20 + distance * width + width / 2, y: 140, fill: INK, "font-size": 13, "text-anchor": "middle" },
      `you: ${distance}`);
    return s;
  };
})();
