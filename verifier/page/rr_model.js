"use strict";
// Her attribute disclosure under randomized response (paper 000's closed form, with each attribute's distortion:
// distortion.js; disclosure.py's keep_matrix,
// keep_matrix_inverse, kron_matvec, eta_qi, eta_of_matrices, rho_s, rho_of_matrix, rr_risk, cell_risk,
// estimate_distribution and models.py's rr_model, _estimate (rr_estimate) and rr_record).
// A tensor is {data: Float64Array, dims: [d_1, ..., d_k]} in row-major order.

(function () {
  const pp = globalThis.permutedPrivacy;

  function checkP(d, p) {
    // disclosure.py's _check_p: a keep probability for d categories lies in [1/d, 1] (PARAMETER_INVALID otherwise)
    if (d < 1 || !(1.0 / d - 1e-12 <= p && p <= 1.0)) {
      throw new pp.ReleaseError("PARAMETER_INVALID", "release", `a keep probability for ${d} categories lies in [1/${d}, 1]. Got ${p} instead.`);
    }
  }

  pp.keep_matrix = function keep_matrix(d, p) {
    // Eq. (1): keep a value with probability p, else move to each other value with (1-p)/(d-1).
    checkP(d, p);
    if (d === 1) return [[1.0]];
    const q = (1.0 - p) / (d - 1);
    return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? q + (p - q) : q)));
  };

  pp.keep_matrix_inverse = function keep_matrix_inverse(d, p) {
    // Lemma 4: ((d-1) I - (1-p) 1 1^T) / (d p - 1); refused at p = 1/d.
    checkP(d, p);
    if (Math.abs(d * p - 1.0) < 1e-12) throw new pp.ReleaseError("PARAMETER_INVALID", "release", `the distortion matrix is singular at p = 1/${d}: nothing can be estimated`);
    return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => ((i === j ? d - 1 : 0) - (1.0 - p)) / (d * p - 1.0)));
  };

  pp.kron_matvec = function kron_matvec(mats, t) {
    // (M_1 (x) ... (x) M_k) x, each factor applied along its own axis; a factor of r rows and d columns turns
    // that axis's d into r (a stack of keep matrices, composition.py).
    let data = Float64Array.from(t.data);
    const dims = t.dims.slice();
    mats.forEach((m, axis) => {
      if (!m) return;
      const d = dims[axis], rows = m.length;
      const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
      const outer = data.length / (d * inner);
      const out = new Float64Array(outer * rows * inner);
      for (let o = 0; o < outer; o++) {
        for (let i = 0; i < rows; i++) {
          for (let r = 0; r < inner; r++) {
            let s = 0.0;
            for (let j = 0; j < d; j++) s += m[i][j] * data[(o * d + j) * inner + r];
            out[(o * rows + i) * inner + r] = s;
          }
        }
      }
      data = out;
      dims[axis] = rows;
    });
    return { data, dims };
  };

  const safeInverse = (v) => v.map((x) => (x > 0 ? 1.0 / x : 0.0));

  pp.eta_qi = function eta_qi(piQi, pQi) {
    // Eq. (7) by Eq. (9): Pr(QI^ = a | QI = a) for every QI combination a.
    if (pQi.every((p) => pp.unchanged(p))) return piQi.data.map(() => 1.0);
    return pp.eta_of_matrices(piQi, piQi.dims.map((d, k) => pp.distortion_matrix(d, pQi[k])));
  };

  pp.eta_of_matrices = function eta_of_matrices(piQi, mats) {
    // Eq. (9) for any column-stochastic factors (keep matrices, or their stacks over several releases).
    const lam = pp.kron_matvec(mats, piQi);
    const squares = mats.map((m) => m[0].map((_, j) => m.map((row) => row[j] * row[j])));  // (m ** 2).T
    const back = pp.kron_matvec(squares, { data: safeInverse(lam.data), dims: lam.dims });
    return piQi.data.map((x, i) => x * back.data[i]);
  };

  pp.rho_s = function rho_s(pi, pS) {
    // Eq. (8): Pr(S^ = u | S = u, QI = a) for every cell (a, u).
    if (pp.unchanged(pS)) return pi.data.map(() => 1.0);
    return pp.rho_of_matrix(pi, pp.distortion_matrix(pi.dims[pi.dims.length - 1], pS));
  };

  pp.rho_of_matrix = function rho_of_matrix(pi, P) {
    // Eq. (8) for any column-stochastic P of rows x d_s: one keep matrix, or a stack of them.
    const ds = pi.dims[pi.dims.length - 1];
    const out = new Float64Array(pi.data.length);
    for (let a = 0; a < pi.data.length / ds; a++) {
      const row = pi.data.subarray(a * ds, (a + 1) * ds);
      const inv = P.map((weights) => { let s = 0.0; for (let w = 0; w < ds; w++) s += weights[w] * row[w]; return s > 0 ? 1.0 / s : 0.0; });
      for (let u = 0; u < ds; u++) {
        let s = 0.0;
        for (let v = 0; v < P.length; v++) s += inv[v] * P[v][u] * P[v][u];
        out[a * ds + u] = row[u] * s;
      }
    }
    return out;
  };

  pp.rr_risk = function rr_risk(pi, pQi, pS) {
    // Result 1, Eq. (6): c[a, u] eta_QI(a) rho_S(a, u), clipped at 1; empty cells 0.
    return pp.cell_risk(pi, pp.eta_qi(qiMargin(pi), pQi), pp.rho_s(pi, pS));
  };

  function qiMargin(pi) {
    const ds = pi.dims[pi.dims.length - 1];
    const cells = pi.data.length / ds;
    const piQi = { data: new Float64Array(cells), dims: pi.dims.slice(0, -1) };
    for (let a = 0; a < cells; a++) { let s = 0.0; for (let u = 0; u < ds; u++) s += pi.data[a * ds + u]; piQi.data[a] = s; }
    return piQi;
  }
  pp.qi_margin = qiMargin;

  pp.cell_risk = function cell_risk(pi, eta, rho) {
    // Eq. (6) from its factors: c[a, u] eta(a) rho(a, u) for every cell, 0 where no record is.
    const ds = pi.dims[pi.dims.length - 1];
    const piQi = qiMargin(pi);
    return pi.data.map((x, i) => {
      const a = Math.floor(i / ds);
      if (x <= 0) return 0.0;
      const c = piQi.data[a] > 0 ? x / piQi.data[a] : 0.0;
      return Math.min(c * eta[a] * rho[i], 1.0);
    });
  };

  pp.estimate_distribution = function estimate_distribution(lam, ps) {
    // Eq. (2): P^-1 lambda, clipped at 0 and renormalized.
    const est = pp.kron_matvec(lam.dims.map((d, k) => pp.distortion_inverse(d, ps[k])), lam);
    const data = est.data.map((x) => Math.max(x, 0.0));
    const total = data.reduce((a, b) => a + b, 0.0);
    return { data: total > 0 ? data.map((x) => x / total) : data, dims: lam.dims };
  };

  pp.rr_model = function rr_model(schema, keep) {
    // models.py's rr_model: the categorical QIs with a published distortion, the sensitive one, their distortions.
    const attrs = schema.attributes;
    const has = (name) => pp.own(keep, name) !== undefined;  // the published names alone, never an inherited one
    const qi = attrs.map((a, j) => j).filter((j) => attrs[j].role === "quasi_identifier" && attrs[j].kind !== "numeric" && has(attrs[j].name));
    const s = attrs.findIndex((a) => a.role === "sensitive" && a.kind !== "numeric" && has(a.name));
    const ps = (s >= 0 ? [...qi, s] : qi).map((j) => pp.distortion(pp.own(keep, attrs[j].name) ?? 1.0));
    return [qi, s >= 0 ? s : null, ps];
  };

  pp.rr_frequencies = function rr_frequencies(keys, schema, cols) {
    // models.py's _frequencies: the release's share of each modelled cell.
    const attrs = schema.attributes;
    const dims = cols.map((j) => attrs[j].categories.length);
    const lam = { data: new Float64Array(dims.reduce((a, b) => a * b, 1)), dims };
    for (const r of keys) lam.data[cols.reduce((index, j, k) => index * dims[k] + r[j], 0)] += 1;
    lam.data = lam.data.map((c) => c / Math.max(keys.length, 1));
    return lam;
  };

  pp.rr_estimate = function rr_estimate(keys, schema, cols, ps) {
    // models.py's _estimate: Eq. 2 on the release's frequencies (clipped), where the keep matrices invert.
    const lam = pp.rr_frequencies(keys, schema, cols);
    return ps.every((p, k) => pp.invertible(lam.dims[k], p)) ? pp.estimate_distribution(lam, ps) : lam;
  };

  // sampling_error.py's twins: the one-sided 99% sampling error of her estimated risk (delta method).
  pp.CONFIDENCE = 0.99;
  const Z_ONE_SIDED = 2.3263478740408408;
  const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));

  function piGradient(pi, ps, cell) {
    // sampling_error.py's _pi_gradient: the gradient of her raw risk A B C with respect to pi at her cell.
    const dims = pi.dims, ds = dims[dims.length - 1];
    const grad = new Float64Array(pi.data.length);
    const pQi = ps.slice(0, -1), pS = ps[ps.length - 1];
    const a = cell.slice(0, -1), u = cell[cell.length - 1];
    const at = a.reduce((index, x, i) => index * dims[i] + x, 0);
    const A = pi.data[at * ds + u];
    if (!(A > 0)) return grad;
    const mats = dims.slice(0, -1).map((d, i) => pp.distortion_matrix(d, pQi[i]));
    const piQi = qiMargin(pi);
    let B, gradQi;
    if (pQi.every((p) => pp.unchanged(p))) {
      B = 1.0 / piQi.data[at];
      gradQi = new Float64Array(piQi.data.length);
      gradQi[at] = -B * B;
    } else {
      const inv = safeInverse(pp.kron_matvec(mats, piQi).data);
      let row = Float64Array.of(1.0);
      mats.forEach((m, i) => {
        const col = m.map((r) => r[a[i]] ** 2);
        const next = new Float64Array(row.length * col.length);
        for (let x = 0; x < row.length; x++) for (let y = 0; y < col.length; y++) next[x * col.length + y] = row[x] * col[y];
        row = next;
      });
      B = 0.0;
      for (let i = 0; i < row.length; i++) B += row[i] * inv[i];
      const back = pp.kron_matvec(mats.map(transpose), { data: row.map((x, i) => x * inv[i] * inv[i]), dims: piQi.dims });
      gradQi = back.data.map((x) => -x);
    }
    let C = 1.0;
    const gradC = new Float64Array(ds);
    if (!pp.unchanged(pS)) {
      const P = pp.distortion_matrix(ds, pS);
      const invS = P.map((weights) => { let t = 0.0; for (let w = 0; w < ds; w++) t += weights[w] * pi.data[at * ds + w]; return t > 0 ? 1.0 / t : 0.0; });
      const weights = P.map((r) => r[u] ** 2);
      let sum = 0.0;
      for (let v = 0; v < ds; v++) sum += weights[v] * invS[v];
      C = A * sum;
      for (let w = 0; w < ds; w++) {
        let t = 0.0;
        for (let v = 0; v < ds; v++) t += weights[v] * invS[v] * invS[v] * P[v][w];
        gradC[w] = -A * t;
      }
      gradC[u] += sum;
    }
    if (A * B * C >= 1.0) return grad;
    for (let i = 0; i < grad.length; i++) grad[i] += (A * C) * gradQi[Math.floor(i / ds)];
    for (let w = 0; w < ds; w++) grad[at * ds + w] += (A * B) * gradC[w];
    grad[at * ds + u] += B * C;
    return grad;
  }

  pp.risk_gradient = function risk_gradient(lam, ps, cell) {
    // sampling_error.py's risk_gradient: through Eq. 2 (clipped, renormalised) where the keep matrices invert.
    if (!ps.every((p, k) => pp.invertible(lam.dims[k], p))) return piGradient(lam, ps, cell);
    const mats = lam.dims.map((d, k) => pp.distortion_inverse(d, ps[k]));
    const raw = pp.kron_matvec(mats, lam);
    const kept = raw.data.map((x) => Math.max(x, 0.0));
    const total = kept.reduce((x, y) => x + y, 0.0);
    if (!(total > 0)) return new Float64Array(lam.data.length);
    const g = piGradient({ data: kept.map((x) => x / total), dims: lam.dims }, ps, cell);
    return pp.kron_matvec(mats.map(transpose), { data: g.map((x, i) => (raw.data[i] > 0 ? x / total : 0.0)), dims: lam.dims }).data;
  };

  pp.rr_sampling_error = function rr_sampling_error(lam, ps, cell, n) {
    // sampling_error.py's rr_sampling_error: z_0.99 times the delta-method standard error (multinomial covariance).
    if (n <= 0) return 0.0;
    const g = pp.risk_gradient(lam, ps, cell);
    let second = 0.0, first = 0.0;
    for (let i = 0; i < g.length; i++) { second += lam.data[i] * g[i] * g[i]; first += lam.data[i] * g[i]; }
    return Z_ONE_SIDED * Math.sqrt(Math.max((second - first * first) / n, 0.0));
  };

  pp.rr_bayes_bound = function rr_bayes_bound(share, keep, move) {
    // models.py's rr_bayes_bound: Bayes' rule for a value on released rows that all show it.
    const kept = share * keep, moved = (1.0 - share) * move;
    return kept > 0 ? kept / (kept + moved) : 0.0;
  };

  pp.rr_value_bound = function rr_value_bound(share, p, d) {
    // models.py's rr_value_bound: the named intruder's posterior of a value, at the most, whatever row is hers.
    if (d <= 1) return share > 0 ? 1.0 : 0.0;
    return pp.rr_bayes_bound(share, p, (1.0 - p) / (d - 1));
  };

  pp.rr_bound_at = function rr_bound_at(shares, value, p, d) {
    // models.py's _bounded for one value: the named intruder's bound, Bayes' rule on the published value that
    // gives hers the most (her own under a keep probability).
    if (pp.is_transition(p)) return pp.transition_value_bounds(shares, pp.distortion_matrix(d, p))[value];
    return pp.rr_value_bound(shares[value], p, d);
  };

  pp.rr_shares = function rr_shares(claims, schema, keep) {
    // exposure.py's rr_shares: the randomized sensitive attribute's signed shares, or null where none is signed.
    const s = pp.rr_model(schema, keep)[1];
    const claimed = claims && typeof claims === "object" ? claims.attribute_disclosure : undefined;
    if (s === null || !claimed || typeof claimed !== "object") return null;
    const attr = schema.attributes[s];
    return pp.rr_marginal_shares(pp.own(claimed, attr.name), attr.categories || []);
  };

  pp.rr_marginal_shares = function rr_marginal_shares(entry, categories) {
    // models.py's rr_marginal_shares: each category's share in the claim's signed marginal, or null.
    const marginal = entry && typeof entry === "object" ? entry.marginal : undefined;
    if (!marginal || typeof marginal !== "object" || Array.isArray(marginal)) return null;
    const counts = categories.map((c) => (Object.prototype.hasOwnProperty.call(marginal, c) ? Number(marginal[c]) : 0));
    const total = counts.reduce((a, b) => a + b, 0.0);
    return total > 0 ? counts.map((c) => c / total) : null;
  };

  pp.rr_record = function rr_record(keys, schema, keep, record, shares = null) {
    // Her closed-form risk at her cell, the records published with her QIs, the attacker's best guess; with the
    // signed shares, the named intruder's bound where it is higher, and her value's signed share as her prior.
    const attrs = schema.attributes;
    const [qi, s, ps] = pp.rr_model(schema, keep);
    if (s === null) return {};
    const pi = pp.rr_estimate(keys, schema, [...qi, s], ps);
    const risk = pp.rr_risk(pi, ps.slice(0, -1), ps[ps.length - 1]);
    const ds = pi.dims[pi.dims.length - 1];
    const cell = qi.reduce((index, j, k) => index * pi.dims[k] + record[j], 0);
    const candidates = qi.length ? keys.filter((r) => qi.every((j) => r[j] === record[j])).length : keys.length;
    const mine = risk[cell * ds + record[s]];
    const error = pp.rr_sampling_error(pp.rr_frequencies(keys, schema, [...qi, s]), ps,
      [...qi.map((j) => record[j]), record[s]], keys.length);
    const entry = { mode: "randomized_response", risk: mine, candidates,
      best_guess: pp.best_share(pi.data.subarray(cell * ds, (cell + 1) * ds)), sampling_error: error,
      interval: [Math.max(0.0, mine - error), Math.min(1.0, mine + error)], confidence: pp.CONFIDENCE };
    if (shares) {
      const bound = pp.rr_bound_at(shares, record[s], ps[ps.length - 1], (attrs[s].categories || []).length);
      Object.assign(entry, { risk: Math.max(mine, bound), paper_risk: mine, value_bound: bound, prior: shares[record[s]] });
    }
    return { [attrs[s].name]: entry };
  };

  pp.best_share = function best_share(share) {
    // The position of the largest share (the first of equals), or null when every share is 0.
    const total = share.reduce((a, b) => a + b, 0.0);
    if (!(total > 0)) return null;
    let guess = 0;
    for (let u = 1; u < share.length; u++) if (share[u] > share[guess]) guess = u;
    return guess;
  };
})();
