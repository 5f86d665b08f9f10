"use strict";
// A generalized release (SD k-anonymity): her group, her risks in it and her verdict (classes.py's
// published_cell and subject_class, generalized.py's parse_cell, group_check.py's GroupCheck).

(function () {
  const pp = globalThis.permutedPrivacy;
  const INTERVAL = /^\[\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])$/;
  const NO_RANKS = "This release's cells are generalized (intervals, sets of categories, hierarchy nodes) and have no " +
    "ranks, so the permutation distance and the random-match test do not apply to it; what protects a record " +
    "is the size and diversity of the group of released records its values fall in.";

  pp.number_label = function number_label(v) {
    // How a number is written: an integer without ".0", else the shortest form that reads back.
    return Number.isInteger(v) && Math.abs(v) < 2 ** 53 ? String(v) : String(v);
  };

  pp.column_hierarchy = function column_hierarchy(attr, spec) {
    // A categorical column's published tree, as {label: its leaves}; values it lacks hang from the root
    // (hierarchy.py's _categorical with on_unknown="attach_root"). Numeric interval labels read themselves: no
    // tree; a labelled tree over the numbers (ARX's 20-24) is read as a categorical tree of their labels.
    if (!spec || (attr.kind === "numeric" && spec.type !== "categorical")) return null;
    const [[root, kids]] = Object.entries(spec.tree);
    const children = new Map([[root, []]]);
    const walk = (node, parent) => {
      const [label, sub] = typeof node === "string" ? [node, []] : Object.entries(node)[0];
      children.set(label, []);
      children.get(parent).push(label);
      for (const child of sub) walk(child, label);
    };
    for (const child of kids) walk(child, root);
    const leaves = (label) => (children.get(label).length ? children.get(label).flatMap(leaves) : [label]);
    const known = new Set(leaves(root));
    for (const v of attr.kind === "numeric" ? [] : [...new Set((attr.categories || []).map(String))].sort()) {
      if (!known.has(v)) { children.set(v, []); children.get(root).push(v); }
    }
    return new Map([...children.keys()].map((label) => [label, leaves(label)]));
  };

  pp.parse_cell = function parse_cell(text, attr, hierarchy = null) {
    // What one published cell covers: {lo, hi, openHi} for a number, {values} for categories or a hierarchy
    // node's leaves; "*" everything.
    text = pp.strip(text);
    const numeric = attr.kind === "numeric";
    if (text === "*" && numeric) return { lo: -Infinity, hi: Infinity, openHi: false };  // every number, tree or not
    if (hierarchy && hierarchy.has(text)) return { values: new Set(hierarchy.get(text)) };
    if (text === "*") return numeric ? { lo: -Infinity, hi: Infinity, openHi: false } : { values: new Set(attr.categories) };
    if (numeric) {
      const m = INTERVAL.exec(text);
      // each bound by the table reader's rule, as generalized.py's parse_cell reads it (no 0x10, inf or 1e-400)
      const [lo, whyLo] = pp.numeric_cell(m ? m[1] : text), [hi, whyHi] = pp.numeric_cell(m ? m[2] : text);
      if (whyLo !== null || whyHi !== null) throw new pp.ReleaseError("DATA_MALFORMED", "release", `${JSON.stringify(text)} is neither a number nor an interval [a,b]`);  // the command line's reason for a cell it cannot read
      return { lo, hi, openHi: Boolean(m) && m[3] === ")" };
    }
    if (text.startsWith("{") && text.endsWith("}")) return { values: new Set(text.slice(1, -1).split(",").map((t) => pp.strip(t))) };
    return { values: new Set([text]) };
  };

  const contains = (cell, value) => (cell.values
    ? cell.values.has(String(value)) || (typeof value === "number" && cell.values.has(pp.number_label(value)))
    : cell.lo <= value && (cell.openHi ? value < cell.hi : value <= cell.hi));

  const sharesOver = (column, members, weights = null) => {
    // classes.py's _shares: a cell covering N values gives 1/N to each (under masks drawn whatever the value,
    // each value's bound), summed in row order
    const shares = new Map();
    for (const i of members) {
      const values = column[i].values || new Set();
      for (const v of values) shares.set(v, (shares.get(v) || 0.0) + (weights === null || values.size === 1 ? 1.0 / values.size : weights.get(v) || 0.0));
    }
    return shares;
  };

  pp.mask_probability = function mask_probability(methods) {
    // classes.py's mask_probability: sd_k_anonymity's probability of masking a cell whatever its value, or 0.
    let q = 0.0;
    for (const step of methods || []) {
      if (step && step.method === "sd_k_anonymity" && step.parameters && typeof step.parameters === "object") {
        const value = step.parameters.mask_probability;
        q = typeof value === "number" ? value : 0.0;
      }
    }
    return q;
  };

  pp.mask_weights = function mask_weights(column, attr, methods) {
    // classes.py's mask_weights: what a cell masked whatever its value stands for, each value's share of the
    // people at the most as the release proves it; null where no cell is masked that way.
    if (!(pp.mask_probability(methods) > 0.0)) return null;
    let masked = 0;
    const shown = new Map();
    for (const c of column) {
      if (!c.values || c.values.size !== 1) { masked += 1; continue; }
      const v = [...c.values][0];
      shown.set(v, (shown.get(v) || 0) + 1);
    }
    const n = Math.max(column.length, 1);
    const categories = attr.categories && attr.categories.length ? attr.categories : [...shown.keys()].sort();
    return new Map(categories.map((v) => [v, Math.min(1.0, ((shown.get(v) || 0) + masked) / n)]));
  };

  pp.cell_share = function cell_share(cell, value, weights = null) {
    // classes.py's cell_share: the share of a value a published cell gives.
    if (!cell.values || !cell.values.has(value)) return 0.0;
    if (cell.values.size === 1) return 1.0;
    return weights !== null ? weights.get(value) || 0.0 : 1.0 / cell.values.size;
  };

  const guessOf = (shares) => {
    // classes.py's _guess: the value of the largest share, the last in text order among equals
    let guess = null;
    for (const [v, share] of shares) if (guess === null || share > shares.get(guess) || (share === shares.get(guess) && v > guess)) guess = v;
    return guess;
  };

  pp.possible_classes = function possible_classes(rows, schema, inside, methods = []) {
    // possible_classes.py's twin: the published classes (identical quasi-identifier cells) among her candidates
    // `inside` (indices from 0, ascending), as they first appear, each with its rows and its people (rows less
    // the counterfeits `methods` publish for it).
    const keys = qi_keys(rows, schema, inside);
    const where = new Map(), members = [];
    inside.forEach((i, t) => {
      if (!where.has(keys[t])) { where.set(keys[t], members.length); members.push([]); }
      members[where.get(keys[t])].push(i);
    });
    const names = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => a.name);
    const entries = pp.counterfeit_entries(methods, names);
    const people = [...where.keys()].map((key, c) => members[c].length - (entries.get(key) || 0));
    return { rows: members, people, smallest: people.length ? Math.min(...people) : 0 };
  };

  pp.worst_share = function worst_share(possible, rowShare) {
    // PossibleClasses.worst_share: the largest share of her value in one possible class (added in row order),
    // and that class (the first of the largest).
    let best = 0.0, which = null;
    possible.rows.forEach((members, c) => {
      let total = 0.0;
      for (const i of members) total += rowShare[i];
      const risk = Math.min(1.0, total / Math.max(possible.people[c], 1)); // counterfeits may carry other values
      if (which === null || risk > best) { best = risk; which = c; }
    });
    return [best, which];
  };

  pp.base_rate_bounds = function base_rate_bounds(rows, schema, column, methods = []) {
    // classes.py's base_rate_bounds: each value's least share of the table's people the release shows holding it
    // (a cell naming one value counts for it, a masked one for none; a class's counterfeits taken from its rows of
    // the value first), by value.
    const all = rows.slice(1).map((_, i) => i);
    const classes = pp.possible_classes(rows, schema, all, methods);
    const people = classes.people.reduce((a, p) => a + p, 0);
    const held = new Map();
    classes.rows.forEach((members, c) => {
      const counts = new Map();
      for (const i of members) {
        const values = column[i].values;
        if (values && values.size === 1) { const v = [...values][0]; counts.set(v, (counts.get(v) || 0) + 1); }
      }
      const fakes = members.length - classes.people[c];
      for (const [v, n] of counts) held.set(v, (held.get(v) || 0) + Math.max(n - fakes, 0));
    });
    const out = new Map();
    for (const [v, n] of held) out.set(v, people > 0 ? n / people : 0.0);
    return out;
  };

  pp.read_published = function read_published(rows, schema, hierarchies = {}) {
    // classes.py's read_published: every quasi-identifier and sensitive cell parsed, a category the signed schema
    // does not list refused (DATA_MALFORMED, as prepare says it).
    const header = rows[0], body = rows.slice(1);
    const cells = pp.table();
    for (const a of schema.attributes) {
      if (a.role === "other") continue;
      const tree = pp.column_hierarchy(a, pp.own(hierarchies, a.name));
      const at = header.indexOf(a.name);
      cells[a.name] = body.map((r) => pp.parse_cell(r[at], a, tree));
      if (a.kind !== "numeric" && Array.isArray(a.categories)) {
        const known = new Set(a.categories.map(String));
        cells[a.name].forEach((cell, i) => {
          const unknown = cell.values ? [...cell.values].filter((v) => !known.has(v)).sort() : [];
          if (unknown.length) throw new pp.ReleaseError("DATA_MALFORMED", "release", `the signed schema or data cannot be read: column '${a.name}', row ${i + 1}: '${unknown[0]}' is not one of the schema's categories`);
        });
      }
    }
    return cells;
  };

  pp.subject_class = function subject_class(rows, schema, mine, hierarchies = {}, methods = [], claims = null) {
    // Her class (classes.py's subject_class): the released rows whose every published quasi-identifier contains
    // hers, the published classes among them and the fewest people of one; per sensitive attribute the largest
    // share of her value in one class she could be in (a cell of N values counts 1/N to each), and beside it the
    // share among all her candidates.
    const body = rows.slice(1);
    const her = (a, j) => (a.kind === "numeric" ? mine[j] : a.categories[mine[j]]);
    const cells = pp.read_published(rows, schema, hierarchies);
    const inside = [];
    body.forEach((_, i) => {
      if (schema.attributes.every((a, j) => a.role !== "quasi_identifier" || contains(cells[a.name][i], her(a, j)))) inside.push(i);
    });
    const possible = pp.possible_classes(rows, schema, inside, methods);
    const out = { class_size: inside.length, rows: inside.map((i) => i + 1), classes: possible.rows.length,
      smallest_class: possible.smallest, attribute_disclosure: {} };
    const model = pp.mask_model(rows, schema, cells, methods, claims, hierarchies);
    schema.attributes.forEach((a, j) => {
      if (a.role !== "sensitive") return;
      const value = String(her(a, j));
      if (model !== null) {
        out.attribute_disclosure[a.name] = maskedClass(rows, schema, cells, possible, inside, model, a.name, value, methods);
        return;
      }
      const weights = pp.mask_weights(cells[a.name], a, methods);
      const shares = sharesOver(cells[a.name], inside, weights);
      const everyone = pp.base_rate_bounds(rows, schema, cells[a.name], methods);
      const rowShare = cells[a.name].map((c) => pp.cell_share(c, value, weights));
      const [worst, which] = pp.worst_share(possible, rowShare);
      out.attribute_disclosure[a.name] = { mode: "group", risk: worst, candidates: inside.length,
        best_guess: which === null ? null : guessOf(sharesOver(cells[a.name], possible.rows[which], weights)),
        bound: possible.rows.length <= 1 ? "own_class" : "worst_class", classes: possible.rows.length,
        worst_class_rows: which === null ? 0 : possible.rows[which].length,
        candidate_set: { risk: inside.length ? (shares.get(value) || 0.0) / inside.length : 0.0, best_guess: guessOf(shares) },
        prior: everyone.get(value) || 0.0 };
    });
    return out;
  };

  const maskedClass = (rows, schema, cells, possible, inside, model, name, value, methods) => {
    // classes.py's _masked_class: her figures of one sensitive attribute under a two-step release's masks' model
    const i = model.names.indexOf(name);
    const share = (members) => { const c = model.labels[members[0]]; return pp.posterior_share(model.posterior(c), i, value, model.sizes[c]); };
    let which = null, worst = 0.0, held = 0.0;
    possible.rows.forEach((members, c) => {
      const s = share(members);
      if (which === null || s > worst) { which = c; worst = s; }
    });
    for (const members of possible.rows) held += share(members) * members.length;
    const guess = which === null ? null : pp.posterior_guess(model.posterior(model.labels[possible.rows[which][0]]), i);
    const prior = pp.mask_prior(model, name, value);
    return { mode: "group", risk: worst, candidates: inside.length, best_guess: guess,
      bound: possible.rows.length <= 1 ? "own_class" : "worst_class", classes: possible.rows.length,
      worst_class_rows: which === null ? 0 : possible.rows[which].length, masks: model.exact ? "exact" : "covered",
      candidate_set: { risk: inside.length ? Math.min(1.0, held / inside.length) : 0.0, best_guess: guess },
      prior: prior !== null ? prior : pp.base_rate_bounds(rows, schema, cells[name], methods).get(value) || 0.0 };
  };

  pp.counterfeit_entries = function counterfeit_entries(methods, names) {
    // Each group's published counterfeit count by its quasi-identifier cells (counterfeits.py's twin).
    const out = new Map();
    for (const step of methods) {
      if (step.method !== "m_invariant") continue;
      for (const entry of step.parameters.counterfeits || []) {
        const key = JSON.stringify(names.map((n) => pp.strip(String(entry.cells[n]))));
        out.set(key, (out.get(key) || 0) + entry.count);
      }
    }
    return out;
  };

  const qi_keys = (rows, schema, members) => {
    const header = rows[0];
    const at = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => header.indexOf(a.name));
    return members.map((i) => JSON.stringify(at.map((j) => pp.strip(rows[i + 1][j]))));
  };

  pp.counterfeits_among = function counterfeits_among(rows, schema, members, methods) {
    // How many of the released rows `members` (indices from 0) the release says are counterfeit.
    const names = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => a.name);
    const entries = pp.counterfeit_entries(methods, names);
    if (!entries.size) return 0;
    let total = 0;
    for (const key of new Set(qi_keys(rows, schema, members))) total += entries.get(key) || 0;
    return total;
  };

  pp.counterfeit_problem = function counterfeit_problem(rows, schema, methods) {
    // Why the published counterfeit counts cannot be the release's (counterfeits.py's twin), or null.
    const names = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => a.name);
    const entries = pp.counterfeit_entries(methods, names);
    if (!entries.size) return null;
    const held = new Map();
    for (const key of qi_keys(rows, schema, rows.slice(1).map((_, i) => i))) held.set(key, (held.get(key) || 0) + 1);
    const where = methods.findIndex((s) => s.method === "m_invariant");
    let j = 0;
    for (const [key, count] of entries) {
      if (count >= (held.get(key) || 0)) return `$.predicate.methods[${where}].parameters.counterfeits[${j}]: ${count} counterfeit records in a group of ${held.get(key) || 0} released rows; every group holds at least one real record`;
      j += 1;
    }
    return null;
  };

  pp.mask_problem = function mask_problem(rows, schema, methods) {
    // classes.py's mask_problem: a masked sensitive cell where an sd_k_anonymity step signs no mask_probability.
    const where = (methods || []).findIndex((s) => s && s.method === "sd_k_anonymity");
    if (where < 0 || pp.mask_probability(methods) > 0.0) return null;
    for (const a of schema.attributes) {
      if (a.role !== "sensitive" || a.kind === "numeric") continue;
      const at = rows[0].indexOf(a.name);
      if (rows.slice(1).some((r) => { const c = pp.parse_cell(r[at], a, null); return !c.values || c.values.size !== 1; })) {
        return `$.predicate.methods[${where}].parameters: an sd_k_anonymity step that signs no mask_probability publishes every sensitive value as it is, and '${pp.literal(a.name)}' holds a masked cell`;
      }
    }
    return null;
  };

  pp.class_line = function class_line(rows, counterfeits) {
    // Her anonymity set in words (group_check.py's class_line).
    if (!counterfeits) return `${pp.plural(rows, "released record")} ${rows === 1 ? "is" : "are"} consistent with your quasi-identifiers: an attacker who knows them cannot tell which one is yours.`;
    const people = rows - counterfeits;
    return `${pp.plural(rows, "released record")} are consistent with your quasi-identifiers, ${pp.plural(counterfeits, "counterfeit record")} among them that the publisher added and counted (m-invariance), so ${pp.plural(people, "person", "people")} ${people === 1 ? "is" : "are"} behind them: an attacker who knows your quasi-identifiers cannot tell which record is yours, nor which are counterfeit.`;
  };

  pp.masked_line = function masked_line(name, rows, cells, q = 0.0, masks = null) {
    // group_check.py's masked_line: the method's own masks among her candidates' cells (rows numbered from 1),
    // decided from the values of a group, or (q > 0) drawn whatever the value; masks: how a two-step release's
    // masks were read ("exact" by rerunning MaskClass, "covered" as possibly hers).
    const masked = rows.filter((r) => cells[r - 1].values && cells[r - 1].values.size > 1).length;
    if (!masked) return null;
    const head = `${masked} of the ${pp.plural(rows.length, "released record")} consistent with your values ${masked === 1 ? "shows" : "show"} ${pp.literal(name)} masked (several values, not one).`;
    if (q > 0 && masks === "exact") return `${head} The publisher masked each cell with probability ${pp.number(q, true)}, whatever its value, so a masked cell tells nothing of the value behind it: your risk counts it as each value's share of the people, as the publisher signs it, and your base rate is your value's signed share.`;
    if (q > 0) return `${head} The publisher masked each cell with probability ${pp.number(q, true)}, whatever its value, so a masked cell tells nothing of the value behind it: your risk counts it as the most of each value's share of the people the release can show, and your base rate counts it for none.`;
    if (masks === "exact") return `${head} The method masks a value where it is too frequent in a group, so the masks themselves tell someone who knows the method and how common each value is (the publisher's signed counts) what may be behind them: your risk is his reading, every way the masked cells could hide values weighed by how likely it is, and kept only where the method would mask them so.`;
    if (masks === "covered") return `${head} The method masks a value where it is too frequent in a group, and this release does not sign how common each value is or decide its groups from the quasi-identifiers alone, so your risk counts every masked cell as possibly yours.`;
    return `${head} The method masks a value where it is too frequent in a group, so a masked cell tells someone who knows the method that such a value may be behind it: your risk counts a masked cell for each of its values in part, and your base rate counts it for none.`;
  };

  pp.suppression_line = function suppression_line(rows, suppressed) {
    // What suppression means for her (group_check.py's suppression_line): both lists are rows numbered from 1.
    if (!suppressed.length) return null;
    const among = rows.filter((r) => suppressed.includes(r));
    if (rows.length && among.length === rows.length) {
      return `Every released record consistent with your values is one of the ${pp.plural(suppressed.length, "record")} ` +
        "the tool suppressed (* in every quasi-identifier), and no other matches you: if yours is suppressed, " +
        `that did not hide it, since an attacker who knows your quasi-identifiers knows it is one of these ${rows.length}.`;
    }
    if (among.length) {
      return `${among.length} of them ${among.length === 1 ? "is a record" : "are records"} the tool suppressed (* in ` +
        "every quasi-identifier): a suppressed record is consistent with everyone, so it is among every subject's candidates.";
    }
    return null;
  };

  pp.suppressed_rows = function suppressed_rows(rows, schema) {
    // The released rows (numbered from 1) with * in every quasi-identifier (suppression.py's suppressed_rows).
    const header = rows[0];
    const qi = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => header.indexOf(a.name));
    const out = [];
    if (!qi.length) return out;
    rows.slice(1).forEach((r, i) => { if (qi.every((j) => pp.strip(r[j]) === "*")) out.push(i + 1); });
    return out;
  };

  pp.group_broken = function group_broken(classSize, k, disclosure, claims, classes = 1, smallest = classSize) {
    // GroupCheck.broken_claims: a group she could be in below the claimed k, her risks above the claimed ones.
    const small = k !== null && smallest < k;
    return [...(small && classes > 1 ? [`A group of only ${pp.plural(smallest, "person", "people")} is among those consistent with your values; the publisher claims every group has at least k = ${k}.`]
      : small ? [`Only ${pp.plural(classSize, "released record")} are consistent with your values; the publisher claims every group has at least k = ${k}.`] : []),
      ...pp.disclosure_breaches(disclosure, claims)];
  };

  pp.group_figures = function group_figures(disclosure, classSize, broken, predicate, unwitnessed = pp.NO_PROOF, counterfeits = 0, classes = null) {
    // GroupCheck.figures: the smallest group she could be in (its counterfeits apart), her risks, the claims and
    // targets her figures break.
    return { sensitive: disclosure, class_size: classSize, counterfeits, classes, distance: null, p_value: null, unchanged: false,
      broken: [...broken, ...pp.target_breaches(predicate.targets, disclosure, null, false, classSize)], unwitnessed };
  };

  pp.classes_line = function classes_line(classes, smallest) {
    // group_check.py's classes_line: why her figures are her worst group's.
    return `Those records fall in ${classes} published groups. Anyone who knows everyone's quasi-identifiers can rerun the published method and tell which group is yours; you cannot without their records, so your figures are those of the worst group you could be in (the smallest holds ${pp.plural(smallest, "person", "people")}).`;
  };

  pp.group_disclosure_line = function group_disclosure_line(name, entry) {
    // group_check.py's group_disclosure_line: the worst group's figure, what it assumes, and the candidates' share.
    if (entry.bound !== "worst_class") return pp.disclosure_line(name, entry, "among the released records whose published values contain yours");
    const base = pp.number(entry.prior, true), held = pp.held_words(entry);
    return `Your ${pp.literal(name)} is guessed right with probability ${pp.number(entry.risk, true)} by an intruder who knows everyone's quasi-identifiers and the published method, if your record is in the group of ${pp.plural(entry.worst_class_rows, "released record")} where that is likeliest (one of ${entry.classes} groups consistent with your values); knowing only your own values, with probability ${pp.number(entry.candidate_set.risk, true)} (${pp.plural(entry.candidates, "candidate record")}). ${held[0].toUpperCase()}${held.slice(1)}, so anyone could guess it right with probability ${base} knowing nothing about you.`;
  };

  pp.group_check = function group_check(base, predicate, rows, mine, hierarchies, policy, unwitnessed = pp.NO_PROOF) {
    // verifier check --json for a generalized release: her group, her risks with their base rates, her verdict.
    const found = pp.subject_class(rows, predicate.schema, mine, hierarchies, predicate.methods, predicate.claims);
    const counterfeits = pp.counterfeits_among(rows, predicate.schema, found.rows.map((r) => r - 1), predicate.methods);
    found.class_size -= counterfeits; // her anonymity set is the real people among her candidates
    const k = Number.isInteger((predicate.claims || {}).k) ? predicate.claims.k : null;
    const holds = k === null ? null : found.smallest_class >= k;
    const disclosure = pp.table();
    for (const [name, entry] of Object.entries(found.attribute_disclosure)) {
      const weaker = pp.with_base_rate(entry.candidate_set, entry.prior);
      disclosure[name] = { ...pp.with_base_rate(entry, entry.prior), candidate_set: { risk: weaker.risk, beta: weaker.beta,
        delta: weaker.delta, best_guess: weaker.best_guess } };
    }
    const broken = pp.group_broken(found.class_size, k, disclosure, predicate.claims, found.classes, found.smallest_class);
    const figures = pp.group_figures(disclosure, found.smallest_class, broken, predicate, unwitnessed, counterfeits, found.classes);
    const details = [pp.claims_line(broken, k !== null)];
    if (found.class_size) details.push(pp.class_line(found.rows.length, counterfeits));
    if (found.classes > 1) details.push(pp.classes_line(found.classes, found.smallest_class));
    const said = pp.suppression_line(found.rows, pp.suppressed_rows(rows, predicate.schema));
    if (said) details.push(said);
    const cells = pp.read_published(rows, predicate.schema, hierarchies);
    for (const name of Object.keys(disclosure)) {
      const masked = pp.masked_line(name, found.rows, cells[name], pp.mask_probability(predicate.methods), disclosure[name].masks || null);
      if (masked) details.push(masked);
    }
    for (const [name, r] of Object.entries(disclosure)) details.push(pp.group_disclosure_line(name, r));
    details.push(NO_RANKS);
    return { ...base, model: "generalized", class_size: found.class_size, class_rows: found.rows, counterfeits,
      classes: found.classes, smallest_class: found.smallest_class, claimed: { k },
      claim_holds: holds, attribute_disclosure: disclosure, distance: null, matches: null, p_value: null,
      not_applicable: { permutation_distance: NO_RANKS, random_match_test: NO_RANKS },
      verdict: pp.policy_verdict(policy, figures, details) };
  };
})();
