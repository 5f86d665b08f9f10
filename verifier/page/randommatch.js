"use strict";
// The random-match test of her record (intruder.py's random_match_distribution and subject_test): random
// records drawn from the release's own columns, exactly over every combination where there are at most
// EXHAUSTIVE_LIMIT of them, else by Monte Carlo.

(function () {
  const pp = globalThis.permutedPrivacy;
  const EXHAUSTIVE_LIMIT = 1e6;

  pp.distance_by_scan = function distance_by_scan(blocks, qlo, qhi) {
    // The permutation distance of one query block row to the released records, by the plain scan.
    let best = Infinity;
    for (const bs of blocks) {
      let worst = 0;
      for (let j = 0; j < bs.length && worst < best; j++) {
        worst = Math.max(worst, bs[j][0] - qhi[j], qlo[j] - bs[j][1]);
      }
      if (worst < best) best = worst;
      if (best === 0) break;
    }
    return best;
  };

  pp.mulberry32 = function mulberry32(seed) {
    // The page's own generator for Monte Carlo draws (numpy's stream cannot be had here; the test holds the
    // p-value to the command line's interval, not to its bits).
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  };

  pp.random_match_distribution = function random_match_distribution(keys, columns, blocks, { samples = 10000,
                                                                                           seed = 0, progress = null } = {}) {
    // blocks[r][j]: released record r's block on attribute j (compute_record_distance has them already)
    const n = keys.length, m = columns.length;
    const distance_to = pp.rank_tree(blocks);
    const counts = [];
    const add = (d, w) => { while (counts.length <= d) counts.push(0); counts[d] += w; };
    if (Math.pow(n, m) <= EXHAUSTIVE_LIMIT) {
      // each combination of distinct column values once, weighted by how often it can be drawn
      const at = new Array(m).fill(0);
      const distinct = columns.reduce((t, col) => t * col.unique.length, 1);
      for (let done = 1; ; done++) {
        if (progress && done % 1000 === 0) progress(done, distinct);
        const qlo = at.map((k, j) => columns[j].lo[k]), qhi = at.map((k, j) => columns[j].hi[k]);
        add(distance_to(qlo, qhi), qhi.reduce((w, h, j) => w * (h - qlo[j] + 1), 1));
        let j = m - 1;
        while (j >= 0 && ++at[j] === columns[j].unique.length) at[j--] = 0;
        if (j < 0) break;
      }
      return { method: "exhaustive", counts, total: Math.pow(n, m) };
    }
    const random = pp.mulberry32(seed);
    for (let s = 0; s < samples; s++) {
      if (progress && s % 1000 === 0) progress(s, samples);
      const q = columns.map((col, j) => pp.blocks_of(col, keys[Math.floor(random() * n)][j]));
      add(distance_to(q.map((b) => b[0]), q.map((b) => b[1])), 1);
    }
    return { method: "monte_carlo", counts, total: samples };
  };

  pp.subject_test = function subject_test(keys, columns, blocks, distance, { alpha = 0.01, samples = 10000,
                                                                             seed = 0, progress = null } = {}) {
    // Her p-value F_rand(d): the share of random records at a distance no larger than hers.
    const random = pp.random_match_distribution(keys, columns, blocks, { samples, seed, progress });
    const below = random.counts.slice(0, distance + 1).reduce((a, b) => a + b, 0);
    const p = below / random.total;
    const distribution = {};
    random.counts.forEach((c, d) => { if (c > 0) distribution[String(d)] = c / random.total; });
    return { p_value: p, p_value_interval: random.method === "exhaustive" ? [p, p] : null,
      confidently_linked: p < alpha, alpha, random_method: random.method, random_records: random.total,
      random_distribution: distribution };
  };
})();
