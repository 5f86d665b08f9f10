"use strict";
// Her check against several releases of the same people at once (composition.py's joint_candidates,
// stacked_keep_matrix, joint_rr_risk and joint_draws, models.py's rr_joint_record, joint.py's candidate_shares
// and check_jointly): the object `verifier joint --json` prints.

(function () {
  const pp = globalThis.permutedPrivacy;
  const JOINT_RR_CELLS = 5000000;
  const EXHAUSTIVE_LIMIT = 1e6;
  const LEVELS = ["protected", "at_risk", "exposed", "not_verifiable"];
  const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const words = (level) => level.replaceAll("_", " ");
  pp.PROPAGATION = "An intruder who knows everyone's quasi-identifiers knows who shares your groups: once these releases " +
    "pin your group-mates' values, a group's published counts can pin yours. This check cannot see that " +
    "without their records, so your joint figures may understate what he learns (docs/methods.md, " +
    "\"Propagation across people\").";

  pp.joint_candidates = function joint_candidates(shares, prior = null) {
    // Her candidate values left in every release (Maps of value to share), each with its joint probability: the
    // product of its shares over their total (with `prior`, a Map of base rates, each product over prior^(m-1):
    // Bayes' rule with that prior), largest first, then by value.
    if (!shares.length) return new Map();
    let left = [...shares[0].keys()];
    for (const each of shares.slice(1)) left = left.filter((v) => (each.get(v) || 0) > 0);
    const weight = (v) => {
      const product = shares.reduce((p, each) => p * each.get(v), 1.0);
      const base = prior === null ? 1.0 : prior.get(v) || 0.0;
      return base > 0 ? product / base ** (shares.length - 1) : 0.0;
    };
    const product = left.sort(byText).filter((v) => shares[0].get(v) > 0)
      .map((v) => [v, weight(v)]).filter(([, w]) => w > 0);
    const total = product.reduce((a, [, p]) => a + p, 0.0);
    if (!(total > 0)) return new Map();
    return new Map(product.map(([v, p]) => [v, p / total]).sort((a, b) => b[1] - a[1] || byText(a[0], b[0])));
  };

  pp.stacked_keep_matrix = function stacked_keep_matrix(d, ps) {
    // One attribute's keep matrices in several releases stacked: rows (v_1..v_m) row-major, column u; the
    // identity where a release publishes it as it is.
    if (ps.some((p) => pp.unchanged(pp.distortion(p)))) return Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1.0 : 0.0)));
    let out = [new Array(d).fill(1.0)];
    for (const p of ps) {
      const P = pp.distortion_matrix(d, pp.distortion(p)), next = [];
      for (const row of out) for (const keep of P) next.push(row.map((x, u) => x * keep[u]));
      out = next;
    }
    return out;
  };

  pp.joint_rr_risk = function joint_rr_risk(pi, pQi, pS) {
    // Result 1 over several randomized-response releases: Eq. (6)-(9) on each attribute's stacked keep matrices;
    // null past JOINT_RR_CELLS cells of the joint distribution.
    const ds = pi.dims[pi.dims.length - 1];
    const qiStacks = pi.dims.slice(0, -1).map((d, k) => pp.stacked_keep_matrix(d, pQi[k]));
    const sStack = pp.stacked_keep_matrix(ds, pS);
    const qiRows = qiStacks.reduce((a, m) => a * m.length, 1);
    if (Math.max(qiRows, (pi.data.length / ds) * sStack.length) > JOINT_RR_CELLS) return null;
    return pp.cell_risk(pi, pp.eta_of_matrices(pp.qi_margin(pi), qiStacks), pp.rho_of_matrix(pi, sStack));
  };

  pp.rr_joint_record = function rr_joint_record(keysList, schema, keeps, record, shares = null) {
    // Her risk when the intruder links her in several randomized-response releases, on the mean of their
    // Eq. 2 estimates; {} without a sensitive attribute randomized in every release. With the signed shares,
    // each release's risk with them, and the named intruder's joint bound where it is higher.
    const models = keeps.map((keep) => pp.rr_model(schema, keep));
    const s = models[0][1];
    if (s === null || models.some((m) => m[1] !== s)) return {};
    const qi = [...new Set(models.flatMap((m) => m[0]))].sort((a, b) => a - b);
    const cols = [...qi, s], names = cols.map((j) => schema.attributes[j].name);
    const ps = keeps.map((keep) => names.map((n) => pp.distortion(pp.own(keep, n) ?? 1.0)));
    const estimates = keysList.map((keys, r) => pp.rr_estimate(keys, schema, cols, ps[r]));
    const data = new Float64Array(estimates[0].data.length);
    for (const e of estimates) e.data.forEach((x, i) => { data[i] += x; });
    const pi = { data: data.map((x) => x / estimates.length), dims: estimates[0].dims };
    const joint = pp.joint_rr_risk(pi, qi.map((_, k) => ps.map((p) => p[k])), ps.map((p) => p[p.length - 1]));
    const ds = pi.dims[pi.dims.length - 1];
    const cell = qi.reduce((index, j, k) => index * pi.dims[k] + record[j], 0);
    const name = schema.attributes[s].name;
    const entry = { mode: "randomized_response", risk: joint === null ? null : joint[cell * ds + record[s]],
      each: keysList.map((keys, r) => pp.rr_record(keys, schema, keeps[r], record, shares)[name].risk),
      best_guess: pp.best_share(pi.data.subarray(cell * ds, (cell + 1) * ds)), conditioned_on: names.slice(0, -1) };
    if (shares && entry.risk !== null) {
      const d = (schema.attributes[s].categories || []).length, piV = shares[record[s]];
      const bound = jointValueBound(shares, ps.map((p) => p[p.length - 1]), d, record[s]);
      Object.assign(entry, { risk: Math.max(entry.risk, bound), paper_risk: entry.risk, value_bound: bound, prior: piV });
    }
    return { [name]: entry };
  };

  function jointValueBound(shares, each, d, value) {
    // models.py's _joint_value_bound: Bayes' rule on rows that all show her value (keep probabilities), or on the
    // published values that give hers the most over the stacked matrices (a transition matrix among them).
    if (each.some((p) => pp.is_transition(p))) return pp.transition_value_bounds(shares, pp.stacked_keep_matrix(d, each))[value];
    const piV = shares[value];
    return pp.rr_bayes_bound(piV, each.reduce((a, p) => a * p, 1.0), each.reduce((a, p) => a * (d > 1 ? (1.0 - p) / (d - 1) : 0.0), 1.0));
  }

  pp.joint_draws = function joint_draws(parts, { samples = 10000, seed = 0 } = {}) {
    // The joint test's random records and each one's distance in each release with ranks: every position tuple
    // when the releases share n and n^m <= 1e6, else Monte Carlo draws of u in [0, 1)^m (the page's generator:
    // the command line's p-value within its interval, not its bits).
    const m = parts[0].r.columns.length, sizes = new Set(parts.map((p) => p.keys.length));
    const trees = parts.map((p) => pp.rank_tree(p.r.blocks));
    const exhaustive = sizes.size === 1 && Math.pow(parts[0].keys.length, m) <= EXHAUSTIVE_LIMIT;
    const total = exhaustive ? Math.pow(parts[0].keys.length, m) : samples;
    const distances = parts.map(() => new Int32Array(total));
    const random = pp.mulberry32(seed), at = new Array(m).fill(0);
    for (let t = 0; t < total; t++) {
      const u = exhaustive ? null : at.map(() => random());
      parts.forEach((part, j) => {
        const n = part.keys.length;
        const blocks = part.r.columns.map((col, k) => pp.blocks_of(col, col.sorted[exhaustive ? at[k] : Math.min(Math.floor(u[k] * n), n - 1)]));
        distances[j][t] = trees[j](blocks.map((b) => b[0]), blocks.map((b) => b[1]));
      });
      if (exhaustive) for (let k = m - 1; k >= 0 && ++at[k] === parts[0].keys.length; k--) at[k] = 0;
    }
    return { distances, method: exhaustive ? "exhaustive" : "monte_carlo", total };
  };

  pp.joint_test = function joint_test(draws, mine) {
    // JointDraws.test: the share of random records within her distance in every release, and in each alone.
    let all = 0;
    const each = mine.map(() => 0);
    for (let t = 0; t < draws.total; t++) {
      let every = true;
      mine.forEach((d, j) => { if (draws.distances[j][t] <= d) each[j] += 1; else every = false; });
      if (every) all += 1;
    }
    return { p_joint: all / draws.total, p_each: each.map((c) => c / draws.total), total: draws.total, method: draws.method };
  };

  const valueName = (part, s, value) => {
    const attr = part.predicate.schema.attributes[s];
    return attr.categories ? String(attr.categories[Math.trunc(value)]) : String(value);
  };

  function shareOf(values) {
    const counts = new Map();
    for (const v of [...values].sort(byText)) counts.set(v, (counts.get(v) || 0) + 1);
    return new Map([...counts].map(([v, c]) => [v, c / values.length]));
  }

  pp.candidate_shares = function candidate_shares(part, name) {
    // Her candidate values of one sensitive attribute in one release and their shares (the attacker's posterior in
    // a random-replacement release); null where the release gives no candidate set for it.
    const schema = part.predicate.schema, s = schema.attributes.findIndex((a) => a.name === name);
    if (schema.attributes[s].kind === "numeric" || part.family === "randomized_response") return null;
    if (part.family === "random_replacement") {
      const params = (part.predicate.methods.find((step) => step.method === "random_attribute_replacement") || {}).parameters || {};
      const shares = pp.replacement_shares(part.keys, schema, params, part.mine, s);
      return new Map([...shares].map(([v, p]) => [valueName(part, s, v), p]));
    }
    if (part.family === "generalized") {
      const at = part.rows[0].indexOf(name);
      return part.out.class_rows.length ? shareOf(part.out.class_rows.map((r) => part.rows[r][at])) : new Map();
    }
    const [members] = pp.candidate_rows(part.keys, schema, part.mine);
    return members.length ? shareOf(members.map((i) => valueName(part, s, part.keys[i][s]))) : new Map();
  };

  pp.possible_shares = function possible_shares(part, name) {
    // joint.py's possible_shares: her candidate values' shares in each published class she could be in (a
    // generalized release; a random-replacement release, in each group of rows alike in what they show that she
    // could have become), else her one candidate set's; null where the release gives none.
    const whole = pp.candidate_shares(part, name);
    if (whole !== null && part.family === "random_replacement") {
      const s = part.predicate.schema.attributes.findIndex((a) => a.name === name);
      const params = (part.predicate.methods.find((step) => step.method === "random_attribute_replacement") || {}).parameters || {};
      const groups = pp.replacement_groups(part.keys, part.predicate.schema, params, part.mine, s);
      return groups.length ? groups.map((values) => shareOf(values.map((v) => valueName(part, s, v)))) : [whole];
    }
    if (whole === null || part.family !== "generalized" || !part.out.class_rows.length) return whole === null ? null : [whole];
    const at = part.rows[0].indexOf(name);
    const possible = pp.possible_classes(part.rows, part.predicate.schema, part.out.class_rows.map((r) => r - 1), part.predicate.methods);
    return possible.rows.map((members) => shareOf(members.map((i) => part.rows[i + 1][at])));
  };

  pp.base_shares = function base_shares(part, name) {
    // joint.py's base_shares: every value's share among all records of one release.
    const s = part.predicate.schema.attributes.findIndex((a) => a.name === name);
    if (part.family === "generalized") {
      const at = part.rows[0].indexOf(name);
      return shareOf(part.rows.slice(1).map((r) => r[at]));
    }
    return shareOf(part.keys.map((r) => valueName(part, s, r[s])));
  };

  const MOST_COMBINATIONS = 20000;

  function worstJoint(options, prior, mine) {
    // joint.py's _worst_joint: the combination of possible classes giving her value the largest joint probability.
    if (options.reduce((a, o) => a * o.length, 1) > MOST_COMBINATIONS) return [new Map(), false];
    let worst = null;
    const at = options.map(() => 0);
    for (;;) {
      const left = pp.joint_candidates(options.map((o, j) => o[at[j]]), prior);
      if (worst === null || (left.get(mine) || 0.0) > (worst.get(mine) || 0.0)) worst = left;
      let k = options.length - 1;
      while (k >= 0 && ++at[k] === options[k].length) { at[k] = 0; k -= 1; }
      if (k < 0) break;
    }
    return [worst || new Map(), true];
  }

  function jointEntry(parts, name, mine) {
    // joint.py's _joint_entry: Bayes' rule with the first release's base rates, for the worst combination of the
    // classes she could be in, beside the same over her whole candidate sets.
    const prior = pp.base_shares(parts[0], name);
    const options = parts.map((p) => pp.possible_shares(p, name));
    const weaker = pp.joint_candidates(parts.map((p) => pp.candidate_shares(p, name)), prior);
    const [left, weighed] = worstJoint(options, prior, mine);
    return { mode: "joint", left, risk: weighed ? left.get(mine) || 0.0 : 1.0, candidates: left.size,
      each: options.map((o) => Math.max(...o.map((e) => e.get(mine) || 0.0))),
      best_guess: left.size ? left.keys().next().value : null,
      bound: options.some((o) => o.length > 1) ? "worst_class" : "own_class",
      candidate_set: { left: weaker, risk: weaker.get(mine) || 0.0 } };
  }

  function prior(part, name, mine) {
    // joint.py's _prior: her value's share among all records of one release; of a generalized release, her own
    // check's (the least share of its people the release shows holding it).
    const s = part.predicate.schema.attributes.findIndex((a) => a.name === name);
    if (part.family === "generalized") return pp.own(part.out.attribute_disclosure, name).prior;
    return part.keys.length ? part.keys.filter((r) => r[s] === part.mine[s]).length / part.keys.length : 0.0;
  }

  function randomized(parts, name) {
    // Her joint entry when every release publishes `name` by randomized response, or why there is none.
    const first = parts[0], schema = first.predicate.schema;
    if (parts.some((p) => JSON.stringify(p.predicate.schema.attributes) !== JSON.stringify(schema.attributes))) {
      return "its releases do not share one schema's categories, which the joint randomized-response model needs";
    }
    const keeps = parts.map((p) => pp.rr_distortions(p.predicate.methods));
    if (!keeps.every((k) => k !== null)) return "a release does not publish its keep probabilities";
    const shares = pp.rr_shares(first.predicate.claims, schema, keeps[0]);
    const entry = pp.rr_joint_record(parts.map((p) => p.keys), schema, keeps, first.mine, shares)[name];
    if (!entry) return "it is not randomized in every release";
    if (entry.risk === null) return `its joint randomized distribution has more than ${JOINT_RR_CELLS.toLocaleString("en-US")} cells`;
    const s = schema.attributes.findIndex((a) => a.name === name);
    return { ...entry, left: null, candidates: null, best_guess: entry.best_guess === null ? null : valueName(first, s, entry.best_guess) };
  }

  function candidatesLine(name, entry) {
    // JointCheck._candidates_line
    if (entry.mode === "randomized_response") {
      return `Your ${name} is published by randomized response in every release: an intruder who links you in all of them reconstructs it with probability ${pp.number(entry.risk, true)}, against ${entry.each.map((r) => pp.number(r, true)).join(", ")} from each alone (paper 000's Result 1 on their stacked keep matrices).`;
    }
    if (!entry.left.size) return `Your ${name} is a candidate in no release's group and match set at once: check your record, or these are not releases of you.`;
    const shown = [...entry.left].map(([v, p]) => `${v} (${pp.number(p, true)})`).join(", ");
    return `Your ${name}: ${pp.plural(entry.left.size, "candidate value")} left in every release, ${shown}; your value is guessed right with probability ${pp.number(entry.risk, true)} from all of them together, against ${entry.each.map((r) => pp.number(r, true)).join(", ")} from each alone.`;
  }

  function ownFigures(part, p) {
    // JointCheck._own: her figures in one release alone, its p-value from the joint test's draws, no notice.
    if (part.family === "generalized") {
      const out = part.out;
      return pp.group_figures(out.attribute_disclosure, out.smallest_class,
        pp.group_broken(out.class_size, out.claimed.k, out.attribute_disclosure, part.predicate.claims, out.classes,
          out.smallest_class), part.predicate, null, out.counterfeits, out.classes);
    }
    const { p_value: _, ...untested } = part.out;
    return { ...pp.record_figures(untested, part.predicate, part.unchanged, null), p_value: p };
  }

  function jointVerdict(policy, figures, details, own, parts, alone) {
    // JointCheck.verdict: the policy's on the joint figures, its sentences about these releases together, the
    // headline saying when they expose more than any one alone, or naming the release that alone says worse
    // (JointCheck._decided_alone).
    const fix = (text) => text.replaceAll("from this release", "from these releases together");
    const v = pp.policy_verdict(policy, figures, details);
    const joint = { ...v, headline: fix(v.headline), findings: v.findings.map((f) => ({ ...f, text: fix(f.text) })), lines: v.lines.map(fix) };
    let worst = 0;
    own.forEach((level, j) => { if (LEVELS.indexOf(level) > LEVELS.indexOf(own[worst])) worst = j; });
    if (LEVELS.indexOf(joint.level) < LEVELS.indexOf(own[worst])) {
      const a = alone(worst);
      const head = `${parts[worst].name} alone makes you ${words(own[worst])}, whatever the others add: ${a.headline}`;
      const together = `Their joint figures alone would say ${words(joint.level)}: ${joint.headline}`;
      return { level: own[worst], headline: head, rule: a.rule, policy: joint.policy,
        findings: [...a.findings, ...joint.findings.filter((f) => f.severity !== "notice"), ...joint.findings.filter((f) => f.severity === "notice")],
        lines: [head, ...a.findings.slice(1).map((f) => f.text), together, ...joint.lines.slice(1)] };
    }
    if (LEVELS.indexOf(joint.level) <= LEVELS.indexOf(own[worst])) return joint;
    const head = `Together these ${parts.length} releases tell more about you than any one of them (${own.map(words).join(", ")} alone): ${joint.headline}`;
    return { ...joint, headline: head, lines: [head, ...joint.lines.slice(1)] };
  }

  pp.check_jointly = function check_jointly(given, policy, { samples = 10000, seed = 0 } = {}) {
    // Her joint check over her checks in each release (release_check's parts): verifier joint --json's object. A
    // release given again (the same manifest digest) counts once (joint.py's _once_each).
    const seen = new Set(), parts = [], repeated = [];
    for (const p of given) {
      if (seen.has(p.release.manifestSha256) || seen.has(p.release.contentKey)) { repeated.push(p.name); continue; }
      seen.add(p.release.manifestSha256);
      seen.add(p.release.contentKey);
      parts.push(p);
    }
    const first = parts[0], schema = first.predicate.schema;
    const families = new Set(parts.map((p) => p.family));
    const candidates = pp.table(), leftOut = pp.table();
    schema.attributes.forEach((attr, s) => {
      if (attr.role !== "sensitive") return;
      if (attr.kind === "numeric") { leftOut[attr.name] = "it is numeric, and a joint check intersects categorical values"; return; }
      const mine = valueName(first, s, first.mine[s]);
      let entry;
      if (families.has("randomized_response")) {
        entry = families.size === 1 ? randomized(parts, attr.name)
          : "it is published by randomized response in some of these releases only, and no joint model of the mix is derived";
        if (typeof entry === "string") { leftOut[attr.name] = entry; return; }
      } else {
        entry = jointEntry(parts, attr.name, mine);
      }
      candidates[attr.name] = pp.with_base_rate(entry, "value_bound" in entry ? entry.prior : prior(first, attr.name, mine));
    });
    const ranked = parts.filter((p) => p.family !== "generalized");
    const match = ranked.length >= 2 ? pp.joint_test(pp.joint_draws(ranked, { samples, seed }), ranked.map((p) => p.r.distance)) : null;
    const own = parts.map((p) => pp.policy_verdict(policy, ownFigures(p, match && p.family !== "generalized" ? match.p_each[ranked.indexOf(p)] : null), []).level);
    const grouped = parts.filter((p) => p.family === "generalized");
    const smallest = grouped.reduce((best, p) => (best === null || p.out.smallest_class < best.out.smallest_class ? p : best), null);
    const figures = { sensitive: Object.fromEntries(Object.entries(candidates).filter(([, e]) => e.risk !== null)),
      class_size: smallest ? smallest.out.smallest_class : null, classes: smallest ? smallest.out.classes : null, counterfeits: smallest ? smallest.out.counterfeits : 0, distance: ranked.length ? Math.min(...ranked.map((p) => p.r.distance)) : null,
      p_value: match ? match.p_joint : null, unchanged: false, broken: [], unwitnessed: pp.NO_PROOF };
    const details = Object.entries(candidates).map(([name, entry]) => candidatesLine(name, entry));
    if (match) details.push(`A random record matches you as closely as you are matched in every release at once ${pp.number(match.p_joint, true)} of the time (each release alone: ${match.p_each.map((p) => pp.number(p, true)).join(", ")}).`);
    for (const [name, why] of Object.entries(leftOut)) details.push(`${name} is left out: ${why}.`);
    for (const path of repeated) details.push(`${path} is a release given before, or the same data signed again: it counts once.`);
    // JointCheck._propagates: two releases of groups or more, and a value left more than one candidate
    if (grouped.length >= 2 && Object.values(candidates).some((e) => e.mode === "joint" && e.left && (e.left.size ?? Object.keys(e.left).length) > 1)) details.push(pp.PROPAGATION);
    const signed = (p) => new Set((((p.predicate.claims || {}).composition || {}).earlier || []).map((e) => e.manifest_sha256));
    return {
      releases: parts.map((p, j) => ({ release: p.name, dataset_id: p.predicate.datasetId, release_version: p.predicate.releaseVersion,
        fingerprint: p.release.fingerprint, level_alone: own[j], class_size: p.family === "generalized" ? p.out.class_size : null,
        distance: p.family === "generalized" ? null : p.r.distance,
        checked_with: parts.filter((o) => o !== p && signed(p).has(o.release.manifestSha256)).map((o) => o.name),
        log: null })),
      attribute_disclosure: Object.fromEntries(Object.entries(candidates).map(([name, e]) => [name, { ...e, left: e.left && Object.fromEntries(e.left),
        ...(e.candidate_set ? { candidate_set: { ...e.candidate_set, left: Object.fromEntries(e.candidate_set.left) } } : {}) }])),
      left_out: leftOut, repeated, p_joint: match ? match.p_joint : null, p_each: match ? match.p_each : null,
      random_method: match ? match.method : null, random_records: match ? match.total : null,
      verdict: jointVerdict(policy, figures, details, own, parts,
        (j) => pp.policy_verdict(policy, ownFigures(parts[j], match && parts[j].family !== "generalized" ? match.p_each[ranked.indexOf(parts[j])] : null), [])),
    };
  };
})();
