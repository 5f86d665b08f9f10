"use strict";
// The nearest-record index of the random-match test (verifier/core/kdtree.py's RankTree, distances only):
// median splits on the attribute of widest spread, each node's box in block space, and a depth-first search
// that skips a node whose box is no nearer than the best record found.

(function () {
  const pp = globalThis.permutedPrivacy;
  const LEAF = 16;

  pp.rank_tree = function rank_tree(blocks) {
    // blocks[r][j] = [lo, hi]; returns distance(qlo, qhi), the least over records of the largest block gap.
    const n = blocks.length, m = n ? blocks[0].length : 0;
    const lo = new Int32Array(n * m), hi = new Int32Array(n * m);
    blocks.forEach((bs, r) => bs.forEach(([a, b], j) => { lo[r * m + j] = a; hi[r * m + j] = b; }));
    const idx = Int32Array.from({ length: n }, (_, i) => i);
    const nodes = [];  // [start, end, left, right, box lo (m), box hi (m)]
    function build(start, end) {
      const boxLo = new Int32Array(m).fill(2 ** 31 - 1), boxHi = new Int32Array(m).fill(-(2 ** 31));
      for (let t = start; t < end; t++) {
        const r = idx[t];
        for (let j = 0; j < m; j++) {
          if (lo[r * m + j] < boxLo[j]) boxLo[j] = lo[r * m + j];
          if (hi[r * m + j] > boxHi[j]) boxHi[j] = hi[r * m + j];
        }
      }
      const node = { start, end, left: -1, right: -1, boxLo, boxHi };
      const at = nodes.push(node) - 1;
      if (end - start > LEAF) {
        let axis = 0;
        for (let j = 1; j < m; j++) if (boxHi[j] - boxLo[j] > boxHi[axis] - boxLo[axis]) axis = j;
        const part = Array.from(idx.subarray(start, end)).sort((x, y) => lo[x * m + axis] - lo[y * m + axis]);
        idx.set(part, start);
        const mid = (start + end) >> 1;
        node.left = build(start, mid);
        node.right = build(mid, end);
      }
      return at;
    }
    if (n) build(0, n);
    const bound = (node, qlo, qhi, limit) => {
      let worst = 0;
      for (let j = 0; j < m && worst < limit; j++) worst = Math.max(worst, node.boxLo[j] - qhi[j], qlo[j] - node.boxHi[j]);
      return worst;
    };
    return function distance(qlo, qhi) {
      let best = Infinity;
      const stack = [0];
      while (stack.length && best > 0) {
        const node = nodes[stack.pop()];
        if (bound(node, qlo, qhi, best) >= best) continue;
        if (node.left < 0) {
          for (let t = node.start; t < node.end; t++) {
            const r = idx[t];
            let worst = 0;
            for (let j = 0; j < m && worst < best; j++) worst = Math.max(worst, lo[r * m + j] - qhi[j], qlo[j] - hi[r * m + j]);
            if (worst < best) best = worst;
          }
          continue;
        }
        const a = nodes[node.left], b = nodes[node.right];
        const da = bound(a, qlo, qhi, best), db = bound(b, qlo, qhi, best);
        // the nearer child last, so that it is searched first
        if (da <= db) { stack.push(node.right, node.left); } else { stack.push(node.left, node.right); }
      }
      return best;
    };
  };
})();
