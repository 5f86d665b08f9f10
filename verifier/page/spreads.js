"use strict";
// The spread of the released values around her record, and the publisher's claimed (D, v) (permutation.py,
// subject.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;

  pp.fsum = function fsum(values) {
    // Neumaier's compensated sum: accurate to a few units in the last place, as numpy's pairwise sum is close to.
    let s = 0.0, c = 0.0;
    for (const x of values) {
      const t = s + x;
      c += Math.abs(s) >= Math.abs(x) ? (s - t) + x : (x - t) + s;
      s = t;
    }
    return s + c;
  };

  pp._single_spread = function _single_spread(window, kind) {
    // Population variance of a sorted window, or its Gini-Simpson index for a nominal column.
    if (window[0] === window[window.length - 1]) return 0.0;
    const k = window.length;
    if (kind === "nominal") {
      const counts = new Map();
      for (const v of window) counts.set(v, (counts.get(v) || 0) + 1);
      return 1.0 - pp.fsum([...counts.values()].map((c) => (c / k) * (c / k)));
    }
    const mean = pp.fsum(window) / k;
    return pp.fsum(window.map((x) => (x - mean) * (x - mean))) / k;
  };

  pp.spread_kind = function spread_kind(kind) {
    return kind === "nominal" ? "gini_simpson" : "variance";
  };

  pp.spread_at = function spread_at(columns, query, kinds, d) {
    // var_j(x, d): the spread of each sorted column over her query block widened by d ranks on each side.
    return columns.map((col, j) => {
      const n = col.sorted.length;
      const lo = Math.max(1, query[j][0] - d), hi = Math.min(n, query[j][1] + d);
      return pp._single_spread(col.sorted.slice(lo - 1, hi), kinds[j]);
    });
  };

  pp._claimed = function _claimed(claims) {
    // The claimed (D, v), each null where the manifest does not state it well-formed.
    const p = (claims || {}).permuted_privacy || {};
    const d = Number.isInteger(p.distance) && p.distance >= 0 ? p.distance : null;
    const v = Array.isArray(p.variances) && p.variances.every((t) => typeof t === "number") ? p.variances : null;
    return [d, v];
  };

  pp.claim_holds = function claim_holds(distance, claimedD, claimedV, atClaimed, m) {
    // d >= D, and var_j at D >= v_j (to 1e-9 relative); null without a claimed D.
    if (claimedD === null) return null;
    let ok = distance >= claimedD;
    if (claimedV !== null && atClaimed !== null && claimedV.length === m) {
      ok = ok && atClaimed.every((s, j) => s >= claimedV[j] - 1e-9 * Math.max(1.0, Math.abs(claimedV[j])));
    }
    return ok;
  };
})();
