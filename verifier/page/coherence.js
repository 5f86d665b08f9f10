"use strict";
// Manifests no run of the published methods can produce, refused with MANIFEST_INCOHERENT (coherence.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;
  const MAX_RELATIVE_SD = 1000;
  const MAX_SAMPLES = 10000000;
  const MODEL_METHODS = ["sd_k_anonymity", "multi_sensitive_generalization", "m_invariant", "randomized_response", "random_attribute_replacement"];
  const SLACK = 1e-9;

  pp.chain_problem = function chain_problem(methods) {
    // Why no run can chain these methods in this order, as [the step's index, what is wrong], or null.
    for (const [i, name] of methods.entries()) {
      if (name === "external" && methods.length > 1) return [i, "an external step is another tool's whole output: it is the only method of its release"];
      if (name === "reverse_mapping" && i === 0) return [i, "reverse_mapping follows another method; it cannot be the first"];
      if (name === "reverse_mapping" && methods.slice(0, i).includes("reverse_mapping")) return [i, "reverse_mapping is applied once"];
      if (MODEL_METHODS.includes(name) && i !== methods.length - 1) return [i, `${name} is the last method`];
    }
    const models = methods.filter((m) => MODEL_METHODS.includes(m));
    if (models.length > 1) return [methods.indexOf(models[1]), `${models[0]} and ${models[1]} are two models; a release has one`];
    return null;
  };

  const values = (v) => (v !== null && typeof v === "object" ? Object.values(v) : [v]);
  const num = (v) => (typeof v === "number" ? v : null);

  function parameter_problem(i, step, n) {
    const where = `$.predicate.methods[${i}].parameters`, params = step.parameters;
    if (step.method === "additive_noise") {
      const sds = values(params.relative_sd);
      if (sds.every((s) => s === 0)) return `${where}.relative_sd: 0 adds no noise`;
      if (sds.some((s) => s > MAX_RELATIVE_SD)) return `${where}.relative_sd: above ${MAX_RELATIVE_SD} times a column's standard deviation`;
    }
    if (step.method === "randomized_response" && values(params.keep_probabilities).every((p) => p === 1)) {
      return `${where}.keep_probabilities: every one is 1, so nothing is randomized`;
    }
    if (step.method === "rank_swapping" && params.p === 0) return `${where}.p: 0 swaps nothing`;
    if (step.method === "external" && params.suppressed_records > n) return `${where}.suppressed_records: ${params.suppressed_records} is more than the ${n} records`;
    const k = num(params.k);
    if (k !== null && k > n) return `${where}.k: ${k} is more than the ${n} records`;
    return null;
  }

  function at_most_power(x, n, m) {
    // x <= n^m without computing a power of millions of digits (coherence.py's _at_most_power)
    if (n <= 1 || m === 0) return x <= 1;
    if (m * Math.log2(n) > Math.log2(x) + 2) return true;
    return BigInt(Math.round(x)) <= BigInt(n) ** BigInt(m);
  }

  pp.released_people = function released_people(predicate) {
    // The real records: claims.n_records less the counterfeits an m_invariant step added (coherence.py's twin).
    const fakes = predicate.methods.filter((s) => s.method === "m_invariant").reduce((a, s) => a + s.parameters.counterfeit_records, 0);
    return predicate.claims.n_records - fakes;
  };

  function counterfeits_problem(predicate) {
    // What no m-invariant run publishes as its counterfeit counts (coherence.py's _counterfeits_problem).
    const qi = predicate.schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => a.name).sort();
    for (const [i, step] of predicate.methods.entries()) {
      if (step.method !== "m_invariant") continue;
      const where = `$.predicate.methods[${i}].parameters`, params = step.parameters;
      for (const [j, entry] of params.counterfeits.entries()) {
        const names = Object.keys(entry.cells).sort();
        if (names.length !== qi.length || names.some((n, t) => n !== qi[t])) return `${where}.counterfeits[${j}].cells: a group is named by its quasi-identifiers' cells, each once`;
      }
      if (params.counterfeits.reduce((a, e) => a + e.count, 0) !== params.counterfeit_records) return `${where}.counterfeit_records: ${params.counterfeit_records} is not the sum of the groups' counts`;
      if (params.counterfeit_records >= predicate.claims.n_records) return `${where}.counterfeit_records: a release of counterfeits alone holds nobody`;
    }
    return null;
  }

  function claims_problem(predicate, m, current) {
    const claims = predicate.claims;
    const n = claims.n_records;
    const p = claims.permuted_privacy;
    if (p && p.distance > n - 1) return `$.predicate.claims.permuted_privacy.distance: ${p.distance} is above n - 1 = ${n - 1}`;
    const it = claims.intruder;
    if (it) {
      if (it.random_method === "exhaustive" && !(it.random_records >= 1 && at_most_power(it.random_records, n, m))) {
        return `$.predicate.claims.intruder.random_records: an exhaustive test enumerates 1 to n^m = ${n}^${m} records`;
      }
      if (it.random_method === "monte_carlo" && !(it.random_records >= 1 && it.random_records <= MAX_SAMPLES)) {
        return `$.predicate.claims.intruder.random_records: a Monte Carlo test draws 1 to ${MAX_SAMPLES} records`;
      }
    }
    const l = claims.policy_levels;
    if (l && (l.exposed + l.at_risk + l.protected !== l.checked || l.checked > l.records || l.records !== pp.released_people(predicate))) {
      return "$.predicate.claims.policy_levels: exposed, at risk and protected add up to the records checked, at most the records released";
    }
    return l ? pp.levels_problem(l, "$.predicate.claims.policy_levels", current) : null;
  }

  pp.levels_problem = function levels_problem(levels, where, every = false, rules = true) {
    // coherence.py's levels_problem: level counts that contradict themselves.
    const checked = levels.checked;
    if (every && checked !== levels.records && !(checked === pp.MOST_CHECKED && pp.MOST_CHECKED < levels.records)) return `${where}.checked: ${checked} of ${levels.records} records; a manifest of this format counts every record (or, signed before it did, a public draw of ${pp.MOST_CHECKED})`;
    for (const [key, count] of [["at_risk_share", "at_risk"], ["exposed_share", "exposed"]]) {
      if (Object.prototype.hasOwnProperty.call(levels, key) && levels[key] !== (checked ? levels[count] / checked : 0.0)) {
        return `${where}.${key}: not ${count} / checked = ${levels[count]} / ${checked}`;
      }
    }
    const policy = levels.policy, text = pp.DEFAULT_POLICY_TEXT, sha = pp.DEFAULT_POLICY_SHA256;
    if (pp.same_name(policy.name, "permuted-privacy default") && policy.sha256 !== sha) {
      return `${where}.policy: it names the verifier's default policy, whose SHA-256 is ${sha}, with another (${policy.sha256})`;
    }
    const decided = levels.by_rule;
    if (!rules || decided === undefined || decided === null) return null;
    const entries = Object.entries(decided), sum = entries.reduce((a, [, c]) => a + c, 0);
    if (sum !== levels.exposed + levels.at_risk) return `${where}.by_rule: its counts add up to ${sum}, not the ${levels.exposed + levels.at_risk} records exposed or at risk that a rule decided`;
    if (policy.sha256 !== sha) return null;
    const levelOf = new Map(JSON.parse(text).rules.map((r) => [r.id, r.level]));
    const unknown = entries.find(([r]) => !levelOf.has(r));
    if (unknown) return `${where}.by_rule: '${pp.literal(unknown[0])}' is not a rule of the policy the counts name`;
    for (const level of ["exposed", "at_risk"]) {
      if (entries.filter(([r]) => levelOf.get(r) === level).reduce((a, [, c]) => a + c, 0) !== levels[level]) return `${where}.by_rule: the rules of level ${level} add up to another count than ${level}'s`;
    }
    return null;
  };

  function marginal_problem(predicate) {
    // coherence.py's _marginal_problem: a signed marginal no randomized-response or two-step run writes: beside another model, with a category the schema does
    // not list, or counts that do not add up to the records released.
    const categories = new Map(predicate.schema.attributes.map((a) => [a.name, a.categories || []]));
    for (const [name, entry] of Object.entries(predicate.claims.attribute_disclosure || {})) {
      const marginal = entry.marginal;
      if (marginal === undefined || marginal === null) continue;
      const where = `$.predicate.claims.attribute_disclosure: the marginal of '${pp.literal(name)}'`;
      const masks = pp.mask_probability(predicate.methods || []) > 0 || (predicate.methods || []).some((step) => step && step.method === "multi_sensitive_generalization");
      if (entry.mode !== (masks ? "group" : "randomized_response")) return `${where} is signed under another model than randomized response or two-step generalization`;
      const listed = categories.get(name) || [];
      if (Object.keys(marginal).some((c) => !listed.includes(c))) return `${where} counts a category the schema does not list`;
      const total = Object.values(marginal).reduce((a, b) => a + b, 0);
      if (total !== predicate.claims.n_records) return `${where} adds up to ${total} records, not the ${predicate.claims.n_records} released`;
    }
    return null;
  }

  pp.target_misses = function target_misses(targets, claims) {
    // The names of the targets the claims miss (targets.py's target_misses), in its order.
    const out = [];
    targets = targets || {};
    const disclosure = claims.attribute_disclosure || {};
    const ls = Object.values(disclosure).flatMap((e) => [num(e && e.distinct_l), num(e && e.l)]).filter((v) => v !== null);
    const lows = { min_distance: num((claims.permuted_privacy || {}).distance), min_k: num(claims.k), min_l: ls.length ? Math.min(...ls) : null };
    for (const [name, value] of Object.entries(lows)) {
      const bound = num(pp.own(targets, name));
      if (bound !== null && value !== null && value < bound - SLACK) out.push(name);
    }
    const linked = num((claims.intruder || {}).confidently_linked_share), bound = num(targets.max_linked_share);
    if (linked !== null && bound !== null && linked > bound + SLACK) out.push("max_linked_share");
    for (const [attr, b] of Object.entries(targets.max_attribute_risk || {})) {
      const risk = num((disclosure[attr] || {}).max);
      if (risk !== null && risk > b + SLACK) out.push(`max_attribute_risk.${attr}`);
    }
    const levels = claims.policy_levels || {};
    for (const [name, figure] of [["max_exposed", "exposed"], ["max_at_risk_share", "at_risk_share"]]) {
      const value = num(levels[figure]), b = num(pp.own(targets, name));
      if (value !== null && b !== null && value > b + SLACK) out.push(name);
    }
    return out;
  };

  pp.composition_problem = function composition_problem(together, n, predicate) {
    // What no check of a release with earlier ones gives (coherence.py's composition_problem).
    const levels = together.policy_levels, linked = together.linked, shared = together.earlier.map((e) => e.linked);
    const where = "$.predicate.claims.composition";
    if (!(Math.max(...shared) <= linked && linked <= Math.min(n, shared.reduce((a, b) => a + b, 0)))) {
      return `${where}.linked: the people released before are at least those of the earlier release that shares the most, at most those of all of them and at most the records released`;
    }
    if (levels.exposed + levels.at_risk + levels.protected !== levels.checked || levels.checked > levels.records || levels.records !== linked) {
      return `${where}.policy_levels: exposed, at risk and protected add up to the people checked, at most the people released before`;
    }
    const counted = pp.levels_problem(levels, `${where}.policy_levels`, false, false);
    if (counted) return counted;
    if (together.newly_exposed > levels.exposed) return `${where}.newly_exposed: more than the people exposed together`;
    if (new Set(together.earlier.map((e) => e.manifest_sha256)).size !== shared.length) return `${where}.earlier: an earlier release is listed twice`;
    const sensitive = new Set(predicate.schema.attributes.filter((a) => a.role === "sensitive").map((a) => a.name));
    for (const name of Object.keys(together.attribute_disclosure)) {
      if (!sensitive.has(name)) return `${where}.attribute_disclosure: '${pp.literal(name)}' is not a sensitive attribute of the schema`;
    }
    const misses = pp.target_misses(predicate.targets, { attribute_disclosure: together.attribute_disclosure, policy_levels: together.policy_levels });
    if (misses.length) return `$.predicate.targets.${misses[0]}: the joint figures of claims.composition miss the manifest's own target`;
    return null;
  };

  pp.coherence_problem = function coherence_problem(predicate, current = false) {
    // What no run of the published methods produces, as "<json path>: <what>", or null.
    const names = predicate.schema.attributes.map((a) => a.name);
    const chain = pp.chain_problem(predicate.methods.map((s) => s.method));
    if (chain) return `$.predicate.methods[${chain[0]}].method: ${chain[1]}`;
    for (const [i, step] of predicate.methods.entries()) {
      const problem = parameter_problem(i, step, predicate.claims.n_records);
      if (problem) return problem;
    }
    const problem = counterfeits_problem(predicate) || claims_problem(predicate, names.length, current) || marginal_problem(predicate)
      || (predicate.claims.composition ? pp.composition_problem(predicate.claims.composition, pp.released_people(predicate), predicate) : null);
    if (problem) return problem;
    for (const [i, name] of (predicate.dropped_identifiers || []).entries()) {
      if (names.includes(name)) return `$.predicate.dropped_identifiers[${i}]: '${pp.literal(name)}' is dropped, yet it is a released column`;
    }
    const weights = predicate.sampling_weights;
    if (weights && names.includes(weights.column)) return `$.predicate.sampling_weights.column: '${pp.literal(weights.column)}' is published in weights.csv, not as a released column`;
    const misses = pp.target_misses(predicate.targets, predicate.claims);
    if (misses.length) return `$.predicate.targets.${misses[0]}: the claims miss the manifest's own target`;
    return null;
  };

  pp.rows_problem = function rows_problem(rows, predicate) {
    const n = predicate.claims.n_records;
    return rows === n ? null : `$.predicate.claims.n_records: ${n}, but the data holds ${rows} rows`;
  };
})();
