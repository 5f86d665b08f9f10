"use strict";
// Her attribute disclosure under randomized response (paper 000's closed form; disclosure.py's keep_matrix,
// keep_matrix_inverse, kron_matvec, eta_qi, rho_s, rr_risk, estimate_distribution and models.py's rr_record).
// A tensor is {data: Float64Array, dims: [d_1, ..., d_k]} in row-major order.

(function () {
  const pp = globalThis.permutedPrivacy;

  pp.keep_matrix = function keep_matrix(d, p) {
    // Eq. (1): keep a value with probability p, else move to each other value with (1-p)/(d-1).
    if (d === 1) return [[1.0]];
    const q = (1.0 - p) / (d - 1);
    return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? q + (p - q) : q)));
  };

  pp.keep_matrix_inverse = function keep_matrix_inverse(d, p) {
    // Lemma 4: ((d-1) I - (1-p) 1 1^T) / (d p - 1).
    return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => ((i === j ? d - 1 : 0) - (1.0 - p)) / (d * p - 1.0)));
  };

  pp.kron_matvec = function kron_matvec(mats, t) {
    // (M_1 (x) ... (x) M_k) x, each factor applied along its own axis.
    let data = Float64Array.from(t.data);
    const dims = t.dims;
    mats.forEach((m, axis) => {
      if (!m) return;
      const d = dims[axis];
      const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
      const outer = data.length / (d * inner);
      const out = new Float64Array(data.length);
      for (let o = 0; o < outer; o++) {
        for (let i = 0; i < d; i++) {
          for (let r = 0; r < inner; r++) {
            let s = 0.0;
            for (let j = 0; j < d; j++) s += m[i][j] * data[(o * d + j) * inner + r];
            out[(o * d + i) * inner + r] = s;
          }
        }
      }
      data = out;
    });
    return { data, dims };
  };

  const safeInverse = (v) => v.map((x) => (x > 0 ? 1.0 / x : 0.0));

  pp.eta_qi = function eta_qi(piQi, pQi) {
    // Eq. (7) by Eq. (9): Pr(QI^ = a | QI = a) for every QI combination a.
    if (pQi.every((p) => p === 1.0)) return piQi.data.map(() => 1.0);
    const mats = piQi.dims.map((d, k) => pp.keep_matrix(d, pQi[k]));
    const lam = pp.kron_matvec(mats, piQi);
    const squares = mats.map((m) => m[0].map((_, j) => m.map((row) => row[j] * row[j])));  // (m ** 2).T
    const back = pp.kron_matvec(squares, { data: safeInverse(lam.data), dims: piQi.dims });
    return piQi.data.map((x, i) => x * back.data[i]);
  };

  pp.rho_s = function rho_s(pi, pS) {
    // Eq. (8): Pr(S^ = u | S = u, QI = a) for every cell (a, u).
    const ds = pi.dims[pi.dims.length - 1];
    if (pS === 1.0) return pi.data.map(() => 1.0);
    const P = pp.keep_matrix(ds, pS);
    const out = new Float64Array(pi.data.length);
    for (let a = 0; a < pi.data.length / ds; a++) {
      const row = pi.data.subarray(a * ds, (a + 1) * ds);
      const inv = Array.from({ length: ds }, (_, v) => { let s = 0.0; for (let w = 0; w < ds; w++) s += P[v][w] * row[w]; return s > 0 ? 1.0 / s : 0.0; });
      for (let u = 0; u < ds; u++) {
        let s = 0.0;
        for (let v = 0; v < ds; v++) s += inv[v] * P[v][u] * P[v][u];
        out[a * ds + u] = row[u] * s;
      }
    }
    return out;
  };

  pp.rr_risk = function rr_risk(pi, pQi, pS) {
    // Result 1, Eq. (6): c[a, u] eta_QI(a) rho_S(a, u), clipped at 1; empty cells 0.
    const ds = pi.dims[pi.dims.length - 1];
    const cells = pi.data.length / ds;
    const piQi = { data: new Float64Array(cells), dims: pi.dims.slice(0, -1) };
    for (let a = 0; a < cells; a++) { let s = 0.0; for (let u = 0; u < ds; u++) s += pi.data[a * ds + u]; piQi.data[a] = s; }
    const eta = pp.eta_qi(piQi, pQi), rho = pp.rho_s(pi, pS);
    return pi.data.map((x, i) => {
      const a = Math.floor(i / ds);
      if (x <= 0) return 0.0;
      const c = piQi.data[a] > 0 ? x / piQi.data[a] : 0.0;
      return Math.min(c * eta[a] * rho[i], 1.0);
    });
  };

  pp.estimate_distribution = function estimate_distribution(lam, ps) {
    // Eq. (2): P^-1 lambda, clipped at 0 and renormalized.
    const est = pp.kron_matvec(lam.dims.map((d, k) => pp.keep_matrix_inverse(d, ps[k])), lam);
    const data = est.data.map((x) => Math.max(x, 0.0));
    const total = data.reduce((a, b) => a + b, 0.0);
    return { data: total > 0 ? data.map((x) => x / total) : data, dims: lam.dims };
  };

  pp.rr_record = function rr_record(keys, schema, keep, record) {
    // Her closed-form risk at her cell, the records published with her QIs, the attacker's best guess.
    const attrs = schema.attributes;
    const qi = attrs.map((a, j) => j).filter((j) => attrs[j].role === "quasi_identifier" && attrs[j].kind !== "numeric" && attrs[j].name in keep);
    const s = attrs.findIndex((a) => a.role === "sensitive" && a.kind !== "numeric" && a.name in keep);
    if (s < 0) return {};
    const cols = [...qi, s];
    const ps = cols.map((j) => Number(keep[attrs[j].name]));
    const dims = cols.map((j) => attrs[j].categories.length);
    const lam = { data: new Float64Array(dims.reduce((a, b) => a * b, 1)), dims };
    for (const r of keys) lam.data[cols.reduce((index, j, k) => index * dims[k] + r[j], 0)] += 1;
    lam.data = lam.data.map((c) => c / Math.max(keys.length, 1));
    const invertible = ps.every((p, k) => p > 1 / dims[k] + 1e-9);
    const pi = invertible ? pp.estimate_distribution(lam, ps) : lam;
    const risk = pp.rr_risk(pi, ps.slice(0, -1), ps[ps.length - 1]);
    const ds = dims[dims.length - 1];
    const cell = qi.reduce((index, j, k) => index * dims[k] + record[j], 0);
    const share = pi.data.subarray(cell * ds, (cell + 1) * ds);
    const candidates = qi.length ? keys.filter((r) => qi.every((j) => r[j] === record[j])).length : keys.length;
    const total = share.reduce((a, b) => a + b, 0.0);
    let guess = null;
    if (total > 0) { guess = 0; for (let u = 1; u < ds; u++) if (share[u] > share[guess]) guess = u; }
    return { [attrs[s].name]: { mode: "randomized_response", risk: risk[cell * ds + record[s]], candidates, best_guess: guess } };
  };
})();
