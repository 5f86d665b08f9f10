"use strict";
// MaskClass and what its masks tell the intruder who reruns it (verifier/attacks/mask_class.py and
// mask_model.py's twins): each class of a two-step release whose step one read the quasi-identifiers alone,
// read as the expected count of each value over every completion of its masked cells that MaskClass publishes
// as they are, weighed by the signed marginal's prior. Confidences are exact ratios and weights exact integers
// (BigInt), so every figure is Python's to the bit.

(function () {
  const pp = globalThis.permutedPrivacy;
  const SLACK = 1e-12;
  const MOST_COMPLETIONS = 4000;
  const SEP = "\u001f";

  const byCodePoint = (a, b) => {
    // Python's string order (code points), not UTF-16 units
    const x = [...a], y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
      const d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d) return d;
    }
    return x.length - y.length;
  };

  pp.build_tree = function build_tree(spec, values) {
    // hierarchy.py's build_hierarchy for a categorical column (on unknown values: null, as it refuses them):
    // {root, children, parent, order, leaves(label)}; without a spec, a root "*" over the values in text order.
    const observed = [...new Set(values.map(String))].sort(byCodePoint);
    const tree = spec ? spec.tree : { "*": observed };
    const [[root, kids]] = Object.entries(tree);
    const children = new Map(), parent = new Map(), order = new Map();
    const add = (label, up) => {
      if (order.has(label)) return false;
      order.set(label, order.size); children.set(label, []);
      if (up !== null) { parent.set(label, up); children.get(up).push(label); }
      return true;
    };
    add(String(root), null);
    let valid = true;
    const walk = (node, up) => {
      const [label, sub] = typeof node === "string" ? [node, []] : Object.entries(node)[0];
      valid = add(String(label), up) && valid;
      for (const child of sub) walk(child, String(label));
    };
    for (const child of kids) walk(child, String(root));
    const memo = new Map();
    const leaves = (label) => {
      if (!memo.has(label)) {
        const k = children.get(label) || [];
        memo.set(label, k.length ? k.flatMap(leaves) : [label]);
      }
      return memo.get(label);
    };
    const known = new Set(leaves(String(root)));
    if (!valid || observed.some((v) => !known.has(v))) return null;
    const covers = (node, label) => {
      for (;;) {
        if (label === node) return true;
        if (!parent.has(label)) return false;
        label = parent.get(label);
      }
    };
    return { root: String(root), children, parent, order, leaves, covers };
  };

  // exact ratios: [numerator, denominator] of BigInts, denominator > 0
  const gcd = (a, b) => { while (b) [a, b] = [b, a % b]; return a; };
  const ratio = (n, d) => { const g = gcd(n < 0n ? -n : n, d) || 1n; return [n / g, d / g]; };
  const add = ([a, b], [c, d]) => ratio(a * d + c * b, b * d);
  const cmp = ([a, b], [c, d]) => (a * d < c * b ? -1 : a * d > c * b ? 1 : 0);

  const floatRatio = (x) => {
    // a finite double as an exact ratio
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0), lo = view.getUint32(4);
    const sign = hi >>> 31 ? -1n : 1n, exp = (hi >>> 20) & 0x7ff;
    let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let e = exp - 1075;
    if (exp) mant |= 1n << 52n; else e = -1074;
    return e >= 0 ? [sign * (mant << BigInt(e)), 1n] : ratio(sign * mant, 1n << BigInt(-e));
  };

  pp.ratio_to_float = function ratio_to_float(n, d) {
    // n / d (BigInts, n >= 0, d > 0) correctly rounded, as Python's int / int
    if (n === 0n) return 0.0;
    const bits = (x) => BigInt(x.toString(2).length);
    let shift = bits(d) - bits(n) + 66n;
    if (shift < 0n) shift = 0n;
    while ((n << shift) / d < (1n << 65n)) shift += 1n; // at least 66 bits of quotient
    const q = (n << shift) / d, sticky = (n << shift) % d ? 1n : 0n;
    let out = Number((q << 1n) | sticky), down = Number(shift + 1n);
    while (down > 1000) { out /= 2 ** 1000; down -= 1000; } // exact while the result is a normal number
    return out / 2 ** down;
  };

  const key = (t) => t.join(SEP);
  const unkey = (k) => k.split(SEP);

  const worst = (rows, sens, alpha) => {
    // mask_class.py's _worst: the violation MaskClass treats first, [conf, i, group key, leaf], or null
    const limit = floatRatio(alpha + SLACK);
    let best = null;
    sens.forEach((h, i) => {
      const groups = new Map();
      for (const [k, count] of rows) {
        const r = unkey(k), g = key([...r.slice(0, i), ...r.slice(i + 1)]);
        if (!groups.has(g)) groups.set(g, new Map());
        groups.get(g).set(r[i], (groups.get(g).get(r[i]) || 0) + count);
      }
      for (const [g, nodes] of groups) {
        let size = 0;
        for (const c of nodes.values()) size += c;
        const conf = new Map();
        for (const [node, count] of nodes) {
          const leaves = h.leaves(node);
          for (const leaf of leaves) conf.set(leaf, add(conf.get(leaf) || [0n, 1n], ratio(BigInt(count), BigInt(leaves.length))));
        }
        for (const [leaf, total] of conf) {
          const c = ratio(total[0], total[1] * BigInt(size));
          if (cmp(c, limit) <= 0) continue;
          const keyParts = g === "" && sens.length === 1 ? [] : unkey(g);
          // first the highest confidence, then the lowest attribute, key (in text order) and leaf order
          const better = (o) => cmp(c, o.c) || (o.i - i) || compareTuples(o.keyParts, keyParts) || (sens[o.i].order.get(o.leaf) - h.order.get(leaf));
          if (best === null || better(best) > 0) best = { c, i, key: g, keyParts, leaf };
        }
      }
    });
    return best;
  };

  const compareTuples = (a, b) => {
    for (let j = 0; j < Math.min(a.length, b.length); j += 1) {
      const d = byCodePoint(a[j], b[j]);
      if (d) return d;
    }
    return a.length - b.length;
  };

  pp.mask_counts = function mask_counts(rows, sens, alpha) {
    // mask_class.py's mask_counts: each original tuple's (key) masked tuple, or null where a violation reaches a root
    let now = new Map([...rows.keys()].map((k) => [k, k]));
    let current = new Map(rows);
    for (;;) {
      const found = worst(current, sens, alpha);
      if (found === null) return now;
      const { i, key: g, leaf } = found;
      const h = sens[i];
      const members = new Set();
      for (const k of current.keys()) {
        const r = unkey(k);
        if (key([...r.slice(0, i), ...r.slice(i + 1)]) === g) members.add(r[i]);
      }
      let v = null;
      for (const n of members) {
        if (!h.leaves(n).includes(leaf)) continue;
        if (v === null || h.leaves(n).length < h.leaves(v).length || (h.leaves(n).length === h.leaves(v).length && h.order.get(n) < h.order.get(v))) v = n;
      }
      if (v === h.root) return null;
      const p = h.parent.get(v);
      const siblings = h.children.get(p).filter((s) => s !== v);
      let company = null, held = 0;
      for (const s of siblings) {
        let n = 0;
        for (const [k, c] of current) if (h.covers(s, unkey(k)[i])) n += c;
        if (company === null || n < held || (n === held && h.order.get(s) < h.order.get(company))) { company = s; held = n; }
      }
      const raised = new Map();
      for (const k of current.keys()) {
        const r = unkey(k);
        raised.set(k, h.covers(v, r[i]) || (company !== null && h.covers(company, r[i])) ? key([...r.slice(0, i), p, ...r.slice(i + 1)]) : k);
      }
      const merged = new Map();
      for (const [k, n] of current) merged.set(raised.get(k), (merged.get(raised.get(k)) || 0) + n);
      current = merged;
      now = new Map([...now].map(([r, t]) => [r, raised.get(t)]));
    }
  };

  const compositions = function* (total, parts) {
    if (parts === 0) { if (total === 0) yield []; return; }
    if (parts === 1) { yield [total]; return; }
    for (let first = total; first >= 0; first -= 1) for (const rest of compositions(total - first, parts - 1)) yield [first, ...rest];
  };

  const comb = (n, k) => {
    if (k < 0 || n < k) return 0n;
    let out = 1n;
    for (let j = 1n; j <= BigInt(k); j += 1n) out = (out * (BigInt(n) - BigInt(k) + j)) / j;
    return out;
  };

  const product = (lists) => lists.reduce((acc, list) => acc.flatMap((a) => list.map((b) => [...a, b])), [[]]);

  pp.class_posterior = function class_posterior(shown, sens, alpha, marginals) {
    // mask_class.py's class_posterior: {counts: [Map value -> BigInt], denominator: BigInt, how}
    const labels = [...shown.keys()];
    const leaves = labels.map((k) => product(unkey(k).map((node, i) => sens[i].leaves(node).filter((l) => (marginals[i].get(l) || 0) > 0))));
    let many = 1n;
    labels.forEach((k, j) => { many *= comb(shown.get(k) + leaves[j].length - 1, shown.get(k)); });
    if (many > BigInt(MOST_COMPLETIONS)) return pp.covered(shown, sens);
    let size = 0;
    for (const n of shown.values()) size += n;
    const counts = sens.map(() => new Map());
    let total = 0n;
    const each = function* (j) {
      if (j === labels.length) { yield []; return; }
      for (const part of compositions(shown.get(labels[j]), leaves[j].length)) for (const rest of each(j + 1)) yield [part, ...rest];
    };
    const facts = [1n];
    for (let j = 1; j <= size; j += 1) facts.push(facts[j - 1] * BigInt(j)); // every factorial a completion reads, once
    const powers = new Map();
    const power = (k, n) => {
      // (prod_i m_i(t_i))^n, each power found once
      if (!powers.has(k)) {
        let base = 1n;
        unkey(k).forEach((v, i) => { base *= BigInt(marginals[i].get(v) || 0); });
        powers.set(k, { base, found: [1n] });
      }
      const entry = powers.get(k);
      while (entry.found.length <= n) entry.found.push(entry.found[entry.found.length - 1] * entry.base);
      return entry.found[n];
    };
    for (const parts of each(0)) {
      const rows = new Map();
      parts.forEach((part, j) => part.forEach((n, l) => { if (n) { const k = key(leaves[j][l]); rows.set(k, (rows.get(k) || 0) + n); } }));
      const now = pp.mask_counts(rows, sens, alpha);
      if (now === null) continue;
      const out = new Map();
      for (const [k, n] of rows) out.set(now.get(k), (out.get(now.get(k)) || 0) + n);
      if (out.size !== shown.size || [...shown].some(([k, n]) => out.get(k) !== n)) continue;
      let weight = facts[size];
      for (const n of rows.values()) weight /= facts[n];
      for (const [k, n] of rows) weight *= power(k, n);
      total += weight;
      for (const [k, n] of rows) unkey(k).forEach((v, i) => counts[i].set(v, (counts[i].get(v) || 0n) + weight * BigInt(n)));
    }
    if (total === 0n) return pp.covered(shown, sens);
    return { counts, denominator: total, how: "exact" };
  };

  pp.covered = function covered(shown, sens) {
    // mask_class.py's covered: each value's count of the cells that cover it
    const counts = sens.map(() => new Map());
    for (const [k, n] of shown) unkey(k).forEach((node, i) => { for (const leaf of sens[i].leaves(node)) counts[i].set(leaf, (counts[i].get(leaf) || 0n) + BigInt(n)); });
    return { counts, denominator: 1n, how: "covered" };
  };

  pp.posterior_share = function posterior_share(post, i, value, people) {
    // ClassPosterior.share: her value's posterior share of a class of `people`, the ratio rounded once
    return Math.min(1.0, pp.ratio_to_float(post.counts[i].get(value) || 0n, post.denominator * BigInt(Math.max(people, 1))));
  };

  pp.posterior_guess = function posterior_guess(post, i) {
    // MaskModel.guess: the value of the largest posterior count, the last in text order among equals
    let guess = null;
    for (const [v, n] of post.counts[i]) {
      const best = guess === null ? null : post.counts[i].get(guess);
      if (guess === null || n > best || (n === best && byCodePoint(v, guess) > 0)) guess = v;
    }
    return guess;
  };

  pp.mask_model = function mask_model(rows, schema, cells, methods, claims, hierarchies) {
    // mask_model.py's mask_model: each class's posterior (classes as they first appear), or null for a release
    // that is not a two-step generalization's.
    const step = (methods || []).find((s) => s && s.method === "multi_sensitive_generalization");
    const sensitive = schema.attributes.filter((a) => a.role === "sensitive");
    const signed = sensitive.map((a) => (((claims || {}).attribute_disclosure || {})[a.name] || {}).marginal);
    const marginals = signed.every((m) => m && typeof m === "object" && !Array.isArray(m))
      ? signed.map((m) => new Map(Object.entries(m).map(([v, n]) => [String(v), Number(n)]))) : null;
    const drawn = !step && sensitive.length && pp.mask_probability(methods) > 0;
    if (drawn && (marginals === null || ![...marginals[0].values()].reduce((a, b) => a + b, 0))) return null;
    if (!drawn && (!step || !sensitive.length)) return null;
    const params = drawn ? {} : step.parameters || {};
    const alpha = params.alpha_sa;
    let sens = null;
    if (params.step_one === "quasi_identifiers" && marginals !== null && typeof alpha === "number") {
      sens = sensitive.map((a, i) => pp.build_tree((hierarchies || {})[a.name] || null, [...marginals[i]].filter(([, n]) => n > 0).map(([v]) => v)));
      if (sens.some((h) => h === null)) sens = null;
    }
    const all = rows.slice(1).map((_, i) => i);
    const classes = pp.possible_classes(rows, schema, all, []);
    const cellTree = (a) => {
      const byText = new Map(rows.slice(1).map((r, i) => [pp.strip(String(r[rows[0].indexOf(a.name)])), cells[a.name][i]]));
      return { leaves: (node) => { const c = byText.get(node); return c && c.values ? [...c.values].sort() : [node]; } };
    };
    let trees = null;
    const cellTrees = () => trees || (trees = sensitive.map(cellTree)); // read once, not once per class
    const found = new Map(), done = new Map();
    const labels = new Int32Array(all.length);
    classes.rows.forEach((members, c) => { for (const i of members) labels[i] = c; });
    const posterior = (c) => {
      // MaskModel.posterior: class c's, found once per distinct published class, only for the classes asked
      if (done.has(c)) return done.get(c);
      const shown = new Map();
      for (const i of classes.rows[c]) {
        const t = key(sensitive.map((a) => pp.strip(String(rows[i + 1][rows[0].indexOf(a.name)]))));
        shown.set(t, (shown.get(t) || 0) + 1);
      }
      const id = [...shown].sort((x, y) => compareTuples(unkey(x[0]), unkey(y[0]))).map(([t, n]) => `${t}${SEP}${SEP}${n}`).join("\n");
      if (!found.has(id)) {
        const known = sens !== null && [...shown.keys()].every((t) => unkey(t).every((node, i) => sens[i].order.has(node)));
        found.set(id, drawn ? drawnPosterior(shown, cellTrees(), marginals)
          : known ? pp.class_posterior(shown, sens, alpha, marginals) : pp.covered(shown, cellTrees()));
      }
      done.set(c, found.get(id));
      return done.get(c);
    };
    return { exact: sens !== null || Boolean(drawn), marginals, names: sensitive.map((a) => a.name), posterior, labels,
      sizes: classes.rows.map((m) => m.length) };
  };

  const drawnPosterior = (shown, trees, marginals) => {
    // MaskModel._drawn: masks drawn whatever the value, each value's count over the people N the marginals count
    let people = 0;
    for (const n of marginals[0].values()) people += n;
    const counts = trees.map(() => new Map());
    for (const [k, n] of shown) unkey(k).forEach((node, i) => {
      const leaves = trees[i].leaves(node);
      for (const v of leaves) counts[i].set(v, (counts[i].get(v) || 0n) + BigInt(n) * BigInt(leaves.length === 1 ? people : marginals[i].get(v) || 0));
    });
    return { counts, denominator: BigInt(people), how: "exact" };
  };

  pp.mask_prior = function mask_prior(model, name, value) {
    // MaskModel.prior: her value's share of the people by the signed marginal, or null
    if (model.marginals === null) return null;
    const m = model.marginals[model.names.indexOf(name)];
    let total = 0;
    for (const n of m.values()) total += n;
    return total ? (m.get(value) || 0) / total : 0.0;
  };
})();
