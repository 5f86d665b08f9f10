"use strict";
// Her attribute disclosure under random attribute replacement (paper 004; replacement.py's
// replacement_likelihood, replacement_risk and match_bound, models.py's replacement_model and replacement_record).

(function () {
  const pp = globalThis.permutedPrivacy;

  function comb(m, k) {
    let c = 1;
    for (let i = 1; i <= k; i++) c = (c * (m - k + i)) / i;
    return Math.round(c);
  }

  pp.replacement_likelihood = function replacement_likelihood(q, released, p, k) {
    // L_r: the likelihood that her quasi-identifiers q were published as each released row's.
    const n = released.length, m = q.length;
    const freq = Array.from({ length: m }, (_, j) => {
      const counts = new Map();
      for (const r of released) counts.set(r[j], (counts.get(r[j]) || 0) + 1);
      return counts;
    });
    const f = (r, j) => freq[j].get(released[r][j]) / Math.max(n, 1);
    return released.map((row, r) => {
      const differs = row.map((v, j) => v !== q[j]);
      const nd = differs.filter(Boolean).length;
      if (k === 1) {
        if (nd === 0) { let s = 0.0; for (let j = 0; j < m; j++) s += f(r, j) * p[j]; return s; }
        if (nd === 1) { const j = differs.indexOf(true); return f(r, j) * p[j]; }
        return 0.0;
      }
      if (nd > k) return 0.0;
      const e = new Float64Array(k + 1);
      e[0] = 1.0;
      for (let j = 0; j < m; j++) if (!differs[j]) for (let t = k; t > 0; t--) e[t] += e[t - 1] * f(r, j);
      let forced = 1.0;
      for (let j = 0; j < m; j++) if (differs[j]) forced *= f(r, j);
      return (forced * e[k - nd]) / comb(m, k);
    });
  };

  pp.replacement_model = function replacement_model(schema, params) {
    // The replaced QI columns, their published probabilities and k (models.py's replacement_model).
    const attrs = schema.attributes;
    const names = params.attributes || attrs.filter((a) => a.role === "quasi_identifier").map((a) => a.name);
    const cols = names.map((n) => attrs.findIndex((a) => a.name === n)).filter((j) => j >= 0);
    const k = Number(params.k || 1);
    const given = params.p_used || params.p;
    const p = Array.isArray(given) && given.length === cols.length ? given.map(Number) : cols.map(() => 1.0 / Math.max(cols.length, 1));
    return [cols, p, k];
  };

  pp.value_masses = function value_masses(L, keys, s) {
    // replacement.py's value_masses: each value column s publishes (ascending) and the likelihood of the rows
    // that publish it, summed in row order.
    const mass = new Map();
    keys.forEach((r, i) => mass.set(r[s], (mass.get(r[s]) || 0.0) + L[i]));
    const values = [...mass.keys()].sort((a, b) => a - b);
    return [values, values.map((v) => mass.get(v))];
  };

  function reachableGroups(L, released, keys, s) {
    // The values of column s in each group of released rows alike in their quasi-identifiers (released) that she
    // could have become (L > 0), the groups in their quasi-identifiers' sorted order (replacement.py's qi_groups).
    const groups = new Map();
    released.forEach((row, r) => {
      const g = row.join(",");
      if (!groups.has(g)) groups.set(g, { row, values: [], reachable: false });
      const group = groups.get(g);
      group.values.push(keys[r][s]);
      if (L[r] > 0) group.reachable = true;
    });
    const byRow = (a, b) => { for (let j = 0; j < a.row.length; j++) if (a.row[j] !== b.row[j]) return a.row[j] - b.row[j]; return 0; };
    return [...groups.values()].filter((g) => g.reachable).sort(byRow).map((g) => g.values);
  }

  pp.replacement_groups = function replacement_groups(keys, schema, params, record, s) {
    // models.py's replacement_groups: the values of column s in each group of released rows alike in their
    // quasi-identifiers that she could have become, the groups in their quasi-identifiers' sorted order.
    const [cols, p, k] = pp.replacement_model(schema, params);
    if (!cols.length) return [];
    const released = keys.map((r) => cols.map((j) => r[j]));
    return reachableGroups(pp.replacement_likelihood(cols.map((j) => record[j]), released, p, k), released, keys, s);
  };

  pp.replacement_shares = function replacement_shares(keys, schema, params, record, s) {
    // The attacker's posterior over her value of column s: each published value (sorted) and its probability
    // (models.py's replacement_shares).
    const [cols, p, k] = pp.replacement_model(schema, params);
    const L = pp.replacement_likelihood(cols.map((j) => record[j]), keys.map((r) => cols.map((j) => r[j])), p, k);
    const [values, mass] = pp.value_masses(L, keys, s);
    const total = mass.reduce((a, b) => a + b, 0.0);
    const out = new Map();
    if (total > 0) values.forEach((v, i) => { if (mass[i] > 0) out.set(v, mass[i] / total); });
    return out;
  };

  pp.match_bound = function match_bound(L, released, keys, s, v) {
    // replacement.py's match_bound: her value v's largest share among the groups of released rows alike in their
    // quasi-identifiers that she could have become (L > 0); 0 where she could have become none.
    let most = 0.0;
    for (const values of reachableGroups(L, released, keys, s)) {
      most = Math.max(most, values.filter((x) => x === v).length / values.length);
    }
    return most;
  };

  pp.replacement_record = function replacement_record(keys, schema, params, record) {
    // Her risk per sensitive attribute, from the release and the published parameters: the higher of paper 004's
    // posterior (paper_risk) and the named intruder's match_bound.
    const attrs = schema.attributes;
    const [cols, p, k] = pp.replacement_model(schema, params);
    const out = pp.table();
    if (!cols.length) return out;
    const released = keys.map((r) => cols.map((j) => r[j]));
    const L = pp.replacement_likelihood(cols.map((j) => record[j]), released, p, k);
    attrs.forEach((attr, s) => {
      if (attr.role !== "sensitive") return;
      const candidates = L.filter((x) => x > 0).length;
      const total = L.reduce((a, b) => a + b, 0.0);
      const bound = pp.match_bound(L, released, keys, s, record[s]);
      if (total <= 0.0) { out[attr.name] = { mode: "random_replacement", risk: bound, paper_risk: 0.0, match_bound: bound, candidates: 0, best_guess: null }; return; }
      const [values, mass] = pp.value_masses(L, keys, s);
      let top = 0;  // the first of the largest masses, in the values' order
      mass.forEach((m, i) => { if (m > mass[top]) top = i; });
      const mine = values.includes(record[s]) ? mass[values.indexOf(record[s])] : 0.0;
      const paper = Math.min(1.0, mine / total);
      out[attr.name] = { mode: "random_replacement", risk: Math.max(paper, bound), paper_risk: paper, match_bound: bound, candidates, best_guess: values[top] };
    });
    return out;
  };
})();
