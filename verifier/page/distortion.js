"use strict";
// The distortion matrix of a randomized attribute (distortion.py's twins): a keep probability (Eq. 1) or a
// published transition matrix (sdcMicro's pram), rows[v][u] = Pr(published = u | true = v), each row summing to 1.
// Matrices are arrays of rows; a distortion matrix is column-stochastic, P[u][v] = Pr(published = u | true = v).

(function () {
  const pp = globalThis.permutedPrivacy;
  const ROW_SUM_TOLERANCE = 1e-9, SINGULAR = 1e-12;

  pp.transition_of = function transition_of(rows) {
    // distortion.py's Transition.of: a square list of rows of probabilities in [0, 1], each row summing to 1.
    const bad = () => new pp.ReleaseError("PARAMETER_INVALID", "release", "a transition matrix is a square list of rows of probabilities, each row summing to 1");
    if (!Array.isArray(rows) || !rows.length) throw bad();
    for (const row of rows) {
      if (!Array.isArray(row) || row.length !== rows.length || row.some((x) => typeof x !== "number" || !(x >= 0.0 && x <= 1.0))) throw bad();
      let total = 0.0;
      for (const x of row) total += x;
      if (Math.abs(total - 1.0) > ROW_SUM_TOLERANCE) throw bad();
    }
    return { rows: rows.map((row) => row.slice()) };
  };

  const isTransition = (spec) => spec !== null && typeof spec === "object";

  pp.distortion = function distortion(value) {
    // A published distortion: a keep probability (a number) or a transition matrix (a list of rows).
    if (isTransition(value) && !Array.isArray(value)) return value;
    return Array.isArray(value) ? pp.transition_of(value) : Number(value);
  };

  pp.unchanged = function unchanged(spec) {
    // Whether the distortion publishes every value as it is (keep probability 1, or the identity).
    if (!isTransition(spec)) return spec === 1.0;
    return spec.rows.every((row, v) => row.every((x, u) => x === (u === v ? 1.0 : 0.0)));
  };

  pp.distortion_matrix = function distortion_matrix(d, spec) {
    // The column-stochastic P[u][v] of a keep probability (Eq. 1) or of a published transition matrix.
    if (!isTransition(spec)) return pp.keep_matrix(d, spec);
    if (spec.rows.length !== d) throw new pp.ReleaseError("PARAMETER_INVALID", "release", `a transition matrix of ${spec.rows.length} rows for an attribute of ${d} categories`);
    return spec.rows[0].map((_, u) => spec.rows.map((row) => row[u]));
  };

  pp.matrix_inverse = function matrix_inverse(m) {
    // Gauss-Jordan elimination with partial pivoting, each float operation in distortion.py's order; null where a
    // pivot falls below SINGULAR.
    const d = m.length;
    const a = m.map((row, i) => [...row.map(Number), ...Array.from({ length: d }, (_, j) => (i === j ? 1.0 : 0.0))]);
    for (let col = 0; col < d; col++) {
      let pivot = col;
      for (let r = col + 1; r < d; r++) if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) pivot = r;
      if (Math.abs(a[pivot][col]) < SINGULAR) return null;
      [a[col], a[pivot]] = [a[pivot], a[col]];
      const lead = a[col][col];
      a[col] = a[col].map((x) => x / lead);
      for (let r = 0; r < d; r++) {
        if (r !== col && a[r][col] !== 0.0) {
          const factor = a[r][col];
          a[r] = a[r].map((x, j) => x - factor * a[col][j]);
        }
      }
    }
    return a.map((row) => row.slice(d));
  };

  pp.invertible = function invertible(d, spec) {
    // Whether Eq. 2 can estimate through this distortion (a keep probability above 1/d, a regular matrix).
    if (isTransition(spec)) return pp.matrix_inverse(pp.distortion_matrix(d, spec)) !== null;
    return spec > 1 / d + 1e-9;
  };

  pp.distortion_inverse = function distortion_inverse(d, spec) {
    // P^-1 (Lemma 4 for a keep probability, Gauss-Jordan for a transition matrix); refused where singular.
    if (!isTransition(spec)) return pp.keep_matrix_inverse(d, spec);
    const inverse = pp.matrix_inverse(pp.distortion_matrix(d, spec));
    if (inverse === null) throw new pp.ReleaseError("PARAMETER_INVALID", "release", "the published transition matrix is singular: nothing can be estimated");
    return inverse;
  };

  pp.is_transition = isTransition;

  pp.transition_value_bounds = function transition_value_bounds(shares, P) {
    // Per true value v, the most Bayes' rule gives v on any one published row: max over u of
    // shares[v] P[u][v] / sum_w shares[w] P[u][w] (the denominator added in w's order); 0 for a value no one holds.
    const best = shares.map(() => 0.0);
    for (const row of P) {
      let total = 0.0;
      for (let w = 0; w < shares.length; w++) total += shares[w] * row[w];
      if (!(total > 0.0)) continue;
      for (let v = 0; v < shares.length; v++) {
        if (shares[v] > 0.0 && row[v] > 0.0) best[v] = Math.max(best[v], shares[v] * row[v] / total);
      }
    }
    return best;
  };
})();
