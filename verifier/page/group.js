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
    text = text.trim();
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
    if (text.startsWith("{") && text.endsWith("}")) return { values: new Set(text.slice(1, -1).split(",").map((t) => t.trim())) };
    return { values: new Set([text]) };
  };

  const contains = (cell, value) => (cell.values
    ? cell.values.has(String(value)) || (typeof value === "number" && cell.values.has(pp.number_label(value)))
    : cell.lo <= value && (cell.openHi ? value < cell.hi : value <= cell.hi));

  pp.subject_class = function subject_class(rows, schema, mine, hierarchies = {}) {
    // Her class: the released rows whose every published quasi-identifier contains hers; per sensitive
    // attribute the share of them whose published value is hers (a cell of N values counts 1/N to each).
    const header = rows[0], body = rows.slice(1);
    const at = (name) => header.indexOf(name);
    const her = (a, j) => (a.kind === "numeric" ? mine[j] : a.categories[mine[j]]);
    const cells = {};
    for (const a of schema.attributes) {
      if (a.role === "other") continue;
      const tree = pp.column_hierarchy(a, hierarchies[a.name]);
      cells[a.name] = body.map((r) => pp.parse_cell(r[at(a.name)], a, tree));
    }
    const inside = [];
    body.forEach((_, i) => {
      if (schema.attributes.every((a, j) => a.role !== "quasi_identifier" || contains(cells[a.name][i], her(a, j)))) inside.push(i);
    });
    const out = { class_size: inside.length, rows: inside.map((i) => i + 1), attribute_disclosure: {} };
    const sharesOver = (column, members) => {
      // classes.py's _shares: a cell covering N values gives 1/N to each, summed in row order
      const shares = new Map();
      for (const i of members) {
        const values = column[i].values || new Set();
        for (const v of values) shares.set(v, (shares.get(v) || 0.0) + 1.0 / values.size);
      }
      return shares;
    };
    schema.attributes.forEach((a, j) => {
      if (a.role !== "sensitive") return;
      const shares = sharesOver(cells[a.name], inside);
      const everyone = sharesOver(cells[a.name], body.map((_, i) => i));
      let guess = null;
      for (const [v, share] of shares) if (guess === null || share > shares.get(guess) || (share === shares.get(guess) && v > guess)) guess = v;
      out.attribute_disclosure[a.name] = { mode: "group", risk: inside.length ? (shares.get(String(her(a, j))) || 0.0) / inside.length : 0.0,
        candidates: inside.length, best_guess: guess,
        prior: body.length ? (everyone.get(String(her(a, j))) || 0.0) / body.length : 0.0 };
    });
    return out;
  };

  pp.counterfeit_entries = function counterfeit_entries(methods, names) {
    // Each group's published counterfeit count by its quasi-identifier cells (counterfeits.py's twin).
    const out = new Map();
    for (const step of methods) {
      if (step.method !== "m_invariant") continue;
      for (const entry of step.parameters.counterfeits || []) {
        const key = JSON.stringify(names.map((n) => String(entry.cells[n]).trim()));
        out.set(key, (out.get(key) || 0) + entry.count);
      }
    }
    return out;
  };

  const qi_keys = (rows, schema, members) => {
    const header = rows[0];
    const at = schema.attributes.filter((a) => a.role === "quasi_identifier").map((a) => header.indexOf(a.name));
    return members.map((i) => JSON.stringify(at.map((j) => rows[i + 1][j].trim())));
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

  pp.class_line = function class_line(rows, counterfeits) {
    // Her anonymity set in words (group_check.py's class_line).
    if (!counterfeits) return `${pp.plural(rows, "released record")} ${rows === 1 ? "is" : "are"} consistent with your quasi-identifiers: an attacker who knows them cannot tell which one is yours.`;
    const people = rows - counterfeits;
    return `${pp.plural(rows, "released record")} are consistent with your quasi-identifiers, ${pp.plural(counterfeits, "counterfeit record")} among them that the publisher added and counted (m-invariance), so ${pp.plural(people, "person", "people")} ${people === 1 ? "is" : "are"} behind them: an attacker who knows your quasi-identifiers cannot tell which record is yours, nor which are counterfeit.`;
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
    rows.slice(1).forEach((r, i) => { if (qi.every((j) => r[j].trim() === "*")) out.push(i + 1); });
    return out;
  };

  pp.group_broken = function group_broken(classSize, k, disclosure, claims) {
    // GroupCheck.broken_claims: her group below the claimed k, her risks above the claimed ones.
    return [...(k !== null && classSize < k ? [`Only ${pp.plural(classSize, "released record")} are consistent with your values; the publisher claims every group has at least k = ${k}.`] : []),
      ...pp.disclosure_breaches(disclosure, claims)];
  };

  pp.group_figures = function group_figures(disclosure, classSize, broken, predicate, unwitnessed = pp.NO_PROOF, counterfeits = 0) {
    // GroupCheck.figures: her group's size (its counterfeits apart), her risks, the claims and targets her figures break.
    return { sensitive: disclosure, class_size: classSize, counterfeits, distance: null, p_value: null, unchanged: false,
      broken: [...broken, ...pp.target_breaches(predicate.targets, disclosure, null, false, classSize)], unwitnessed };
  };

  pp.group_check = function group_check(base, predicate, rows, mine, hierarchies, policy, unwitnessed = pp.NO_PROOF) {
    // verifier check --json for a generalized release: her group, her risks with their base rates, her verdict.
    const found = pp.subject_class(rows, predicate.schema, mine, hierarchies);
    const counterfeits = pp.counterfeits_among(rows, predicate.schema, found.rows.map((r) => r - 1), predicate.methods);
    found.class_size -= counterfeits; // her anonymity set is the real people among her candidates
    const k = Number.isInteger((predicate.claims || {}).k) ? predicate.claims.k : null;
    const holds = k === null ? null : found.class_size >= k;
    const disclosure = {};
    for (const [name, entry] of Object.entries(found.attribute_disclosure)) disclosure[name] = pp.with_base_rate(entry, entry.prior);
    const broken = pp.group_broken(found.class_size, k, disclosure, predicate.claims);
    const figures = pp.group_figures(disclosure, found.class_size, broken, predicate, unwitnessed, counterfeits);
    const details = [pp.claims_line(broken, k !== null)];
    if (found.class_size) details.push(pp.class_line(found.rows.length, counterfeits));
    const said = pp.suppression_line(found.rows, pp.suppressed_rows(rows, predicate.schema));
    if (said) details.push(said);
    for (const [name, r] of Object.entries(disclosure)) details.push(pp.disclosure_line(name, r, "among the released records whose published values contain yours"));
    details.push(NO_RANKS);
    return { ...base, model: "generalized", class_size: found.class_size, class_rows: found.rows, counterfeits, claimed: { k },
      claim_holds: holds, attribute_disclosure: disclosure, distance: null, matches: null, p_value: null,
      not_applicable: { permutation_distance: NO_RANKS, random_match_test: NO_RANKS },
      verdict: pp.policy_verdict(policy, figures, details) };
  };
})();
