"use strict";
// Her attribute disclosure risk from the release alone, for the permutation family (disclosure.py's
// record_disclosure, family.py's family_of and rr_distortions).

(function () {
  const pp = globalThis.permutedPrivacy;
  const GENERALIZING = ["sd_k_anonymity", "multi_sensitive_generalization", "m_invariant"];

  pp.family_of = function family_of(methods) {
    const names = methods.map((m) => m && m.method);
    // another tool's output names the family its cells fit (family.py's _external_generalized)
    const external = methods.some((m) => m && m.method === "external" && m.parameters && m.parameters.model === "generalized");
    if (external || names.some((n) => GENERALIZING.includes(n))) return "generalized";
    const randomized = methods.some((m) => m && m.method === "external" && m.parameters && m.parameters.model === "randomized_response");
    if (randomized || names.includes("randomized_response")) return "randomized_response";
    if (names.includes("random_attribute_replacement")) return "random_replacement";
    return "permutation";
  };

  function lastStep(methods, name) {
    // family.py's step_parameters: the parameters of the chain's last step named `name`, or null.
    let found = null;
    for (const m of methods) if (m && m.method === name && m.parameters && typeof m.parameters === "object") found = m.parameters;
    return found;
  }

  pp.rr_distortions = function rr_distortions(methods) {
    // family.py's rr_distortions: each randomized attribute's published distortion (keep probabilities, or another
    // tool's transition matrices with the columns it kept at 1), or null where the chain publishes neither.
    const own = lastStep(methods, "randomized_response");
    if (own !== null) {
      const keep = own.keep_probabilities;
      return keep && typeof keep === "object" && !Array.isArray(keep) ? Object.assign(pp.table(), keep) : null;
    }
    const params = lastStep(methods, "external");
    if (params === null || params.model !== "randomized_response") return null;
    const matrices = params.transition_matrices;
    if (!matrices || typeof matrices !== "object" || Array.isArray(matrices)) return null;
    const out = pp.table();
    for (const name of params.kept_as_is || []) out[String(name)] = 1.0;
    return Object.assign(out, matrices);
  };

  function mostFrequent(values) {
    // The most frequent value; among equally frequent ones the smallest (np.unique's order, argmax's first).
    const counts = new Map();
    for (const v of values) counts.set(v, (counts.get(v) || 0) + 1);
    let best = null, top = -1;
    for (const v of [...counts.keys()].sort((a, b) => a - b)) {
      if (counts.get(v) > top) { best = v; top = counts.get(v); }
    }
    return best;
  }

  pp.candidate_rows = function candidate_rows(keys, schema, record) {
    // Her candidate records (0-based) and how they were found: every record without a quasi-identifier (none),
    // those with exactly her categorical quasi-identifiers (group), else her match set on them (permutation).
    const attrs = schema.attributes;
    const qi = attrs.map((a, j) => (a.role === "quasi_identifier" ? j : -1)).filter((j) => j >= 0);
    if (!qi.length) return [keys.map((_, i) => i), "none"];
    if (qi.every((j) => attrs[j].kind !== "numeric")) {
      return [keys.map((_, i) => i).filter((i) => qi.every((j) => keys[i][j] === record[j])), "group"];
    }
    return [pp.compute_record_distance(keys.map((r) => qi.map((j) => r[j])), qi.map((j) => record[j])).matches, "permutation"];
  };

  pp.record_disclosure = function record_disclosure(keys, schema, record, tolerance = 0.05) {
    // Per sensitive attribute: her candidates (her match set on the quasi-identifiers, or the records with
    // exactly her categorical quasi-identifiers), the share whose released value is hers (within 5% of the
    // range for a number), their most frequent value.
    const attrs = schema.attributes;
    const out = pp.table();
    attrs.forEach((attr, s) => {
      if (attr.role !== "sensitive") return;
      const [members, mode] = pp.candidate_rows(keys, schema, record);
      const theirs = members.map((i) => keys[i][s]);
      let tol = null, hits;
      if (attr.kind === "numeric") {
        const column = keys.map((r) => r[s]);
        // a loop, not Math.max(...column): a census's column is more arguments than a call may take
        let top = -Infinity, bottom = Infinity;
        for (const v of column) { if (v > top) top = v; if (v < bottom) bottom = v; }
        tol = keys.length ? tolerance * (top - bottom) : 0.0;
        hits = theirs.filter((v) => Math.abs(v - record[s]) <= tol).length;
      } else {
        hits = theirs.filter((v) => v === record[s]).length;
      }
      out[attr.name] = { mode, risk: members.length ? hits / members.length : 0.0, candidates: members.length,
        best_guess: members.length ? mostFrequent(theirs) : null, ...(tol !== null ? { tolerance: tol } : {}) };
    });
    return out;
  };
})();
