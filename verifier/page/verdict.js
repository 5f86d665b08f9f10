"use strict";
// Her verdict under the verdict policy: a level and the deciding rule's sentence as headline
// (verifier/releases/verdict.py and subject.py's twins), with the one number format of verifier/text.py.

(function () {
  const pp = globalThis.permutedPrivacy;
  const CERTAIN = 1.0 - 1e-9;
  const SLACK = 1e-9;
  // verdict.py's UNWITNESSED and NO_PROOF: the notice of a release not shown to be the one everyone sees
  pp.UNWITNESSED = "unwitnessed";
  pp.NO_PROOF = "This release was checked without a log proof: it is what its publisher signed, but nothing shows it is the release everyone else is shown (give its proof and your log policy).";
  const MODEL_WORDS = {
    randomized_response: "under the published randomized-response probabilities",
    random_replacement: "under the published replacement probabilities",
    group: "among the released records whose published values contain yours",
    permutation: "among the released records closest to yours in rank",
    none: "among all released records",
  };

  const trimmed = (text) => (text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text);

  pp.fixed = function fixed(x, d) {
    // x with d digits after the point, rounded as Python's format rounds: the exact binary value, and an exact
    // tie to the even digit (toFixed rounds a tie up: 98.625 would read 98.63, Python says 98.62).
    const exact = Math.abs(x).toFixed(100);
    const point = exact.indexOf(".");
    const keep = exact.slice(0, point + 1 + d).replace(".", "");
    const rest = exact.slice(point + 1 + d);
    let up = rest[0] > "5" || (rest[0] === "5" && /[1-9]/.test(rest.slice(1)));
    if (rest[0] === "5" && !/[1-9]/.test(rest.slice(1))) up = Number(keep[keep.length - 1]) % 2 === 1;
    let digits = keep.split("").map(Number);
    for (let i = digits.length - 1; up && i >= 0; i--) {
      digits[i] += 1;
      up = digits[i] === 10;
      if (up) digits[i] = 0;
    }
    if (up) digits = [1, ...digits];
    const text = digits.join("");
    const whole = text.slice(0, text.length - d) || "0";
    const out = d ? `${whole}.${text.slice(text.length - d)}` : whole;
    return (x < 0 && /[1-9]/.test(out) ? "-" : "") + out;
  };

  pp.number = function number(x, share = false) {
    // Integers whole, shares as percentages, 4 significant digits otherwise (verifier.text.number).
    if (x === null || x === undefined) return "undefined";
    if (typeof x === "boolean") return String(x);
    if (!Number.isFinite(x)) return "undefined";
    if (share) return pp.number(100.0 * x) + "%";
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
    if (!(Math.abs(x) >= 1e-4 && Math.abs(x) < 1e15)) {
      const [mantissa, exponent] = x.toExponential(3).split("e");
      const e = Number(exponent);
      return `${trimmed(mantissa)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
    }
    return trimmed(pp.fixed(x, Math.max(0, 3 - Math.floor(Math.log10(Math.abs(x))))));
  };

  pp.plural = function plural(n, noun, pluralForm = null) {
    return `${n} ${n === 1 ? noun : pluralForm || noun + "s"}`;
  };

  pp.literal = function literal(text) {
    // Every control, direction-changing or invisible character as an escape (verifier.text.literal, its INVISIBLE).
    return String(text).replace(/[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2065\u3164\ufe00-\ufe0f\ufeff\uffa0]/g, (c) => {
      const code = c.charCodeAt(0);
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
    });
  };

  pp.p_value_words = function p_value_words(p, alpha, whose = "your") {
    const share = pp.number(p, true);
    if (p < alpha) {
      return `a random record matches as closely only ${share} of the time: an intruder who finds ${whose} match ` +
        "can be confident it is the right one";
    }
    return `a random record matches as closely ${share} of the time: an intruder cannot tell ${whose} match from chance`;
  };

  const finding = (rule, figure, severity, text, attribute = null) => ({ rule, figure, attribute, severity, text });
  const num = (v) => (typeof v === "number" ? v : null);
  const ENTRY = { posterior: "risk", prior: "prior", beta: "beta", delta: "delta" };

  const versus = (rule, bound, share = false) => `${pp.OPERATORS[rule.operator]} the policy's ${pp.number(bound, share)}`;

  function attributeSentence(rule, name, entry) {
    const post = num(entry.risk), prior = num(entry.prior);
    const shown = pp.literal(name);
    const base = pp.held_words(entry);
    const bound = pp.rule_bound(rule, prior);
    if (rule.figure === "posterior" && post !== null && post >= CERTAIN) return `Your ${shown} can be guessed with certainty from this release (${base}).`;
    if (rule.figure === "posterior" || rule.figure === "prior") {
      const value = rule.figure === "posterior" ? post : prior;
      const what = rule.figure === "posterior" ? "is guessed right with probability" : "has a base rate of";
      return `Your ${shown} ${what} ${pp.number(value, true)} from this release, ${versus(rule, bound, true)} (${base}).`;
    }
    const times = post !== null && prior ? `${pp.number(post / prior)} times` : "undefined";
    const gain = rule.figure === "beta" ? `beta = ${pp.number(num(entry.beta))}, ${versus(rule, bound)}`
      : `delta = ${pp.number(num(entry.delta))}, ${versus(rule, bound)}`;
    return `Your ${shown} is guessed right with probability ${pp.number(post, true)} from this release, ${times} its base rate (${base}): the release tells an attacker more about it than the policy allows (${gain}).`;
  }

  function identitySentence(rule, figures) {
    const bound = rule.threshold;
    if (rule.figure === "class_size") {
      const n = figures.class_size || 0;
      if ((figures.classes || 0) > 1) return `Your record is in one of ${figures.classes} published groups consistent with your quasi-identifiers, and the smallest holds only ${pp.plural(n, "person", "people")}, ${versus(rule, bound)}: an intruder who knows everyone's quasi-identifiers and the published method can tell which group is yours, and if it is that one he picks you with probability ${pp.number(1.0 / n, true)}.`;
      if (n === 1 && figures.counterfeits) return "You are the only person behind the released records consistent with your quasi-identifiers (the others are counterfeit): anyone who knows them learns that you are in this release, though not which of those records is yours.";
      if (figures.counterfeits) return `Only ${pp.plural(n, "person", "people")} are behind the released records consistent with your quasi-identifiers (the others are counterfeit), ${versus(rule, bound)}: an attacker who knows them picks you with probability ${pp.number(1.0 / n, true)}.`;
      if (n === 1) return "Only your record is consistent with your quasi-identifiers: anyone who knows them finds your released record.";
      return `Only ${pp.plural(n, "released record")} are consistent with your quasi-identifiers, ${versus(rule, bound)}: an attacker who knows them picks yours with probability ${pp.number(1.0 / n, true)}.`;
    }
    if (rule.figure === "p_value") {
      return `An intruder can tell your match from chance: a random record matches as closely as yours only ${pp.number(figures.p_value, true)} of the time, ${versus(rule, bound, true)}.`;
    }
    return `Your closest released record is ${pp.plural(figures.distance || 0, "rank")} from yours, ${versus(rule, bound)}.`;
  }

  const FLAG_SENTENCES = {
    unchanged: "Your record was published unchanged: a released record equals yours on every attribute.",
    no_group: "No released record is consistent with your values: check them, or you are not in this release; nothing here says how you are protected.",
    untested: "The random-match test was not run, so whether an intruder could tell your match from chance is not known: run it before you rely on this.",
  };

  function flag(figures, name) {
    // HerFigures.flag
    const ranked = figures.distance !== null && figures.distance !== undefined;
    return { unchanged: Boolean(figures.unchanged), no_group: figures.class_size === 0,
      untested: ranked && (figures.p_value === null || figures.p_value === undefined),
      claim_broken: figures.broken.length > 0 }[name];
  }

  function figureValue(figures, name) {
    // HerFigures.value
    if (name === "class_size") return figures.class_size || null;
    const v = figures[name];
    return v === undefined ? null : v;
  }

  pp.policy_findings = function policy_findings(policy, figures) {
    // Every rule of the policy that fires on her figures, in the policy's order (per attribute, schema order).
    const out = [];
    for (const rule of policy.rules) {
      if (["posterior", "prior", "beta", "delta"].includes(rule.figure)) {
        for (const [name, entry] of Object.entries(figures.sensitive)) {
          if (pp.rule_fires(rule, num(entry[ENTRY[rule.figure]]), num(entry.prior))) {
            out.push(finding(rule.id, rule.figure, rule.level, attributeSentence(rule, name, entry), name));
          }
        }
      } else if (rule.figure === "claim_broken") {
        if (pp.rule_fires(rule, flag(figures, "claim_broken"))) for (const text of figures.broken) out.push(finding(rule.id, rule.figure, rule.level, text));
      } else if (rule.operator === null) {
        if (pp.rule_fires(rule, flag(figures, rule.figure))) out.push(finding(rule.id, rule.figure, rule.level, FLAG_SENTENCES[rule.figure]));
      } else if (pp.rule_fires(rule, figureValue(figures, rule.figure))) {
        out.push(finding(rule.id, rule.figure, rule.level, identitySentence(rule, figures)));
      }
    }
    return strongest(out);
  };

  function strongest(found) {
    // verdict.py's _strongest: one rule per figure and attribute, the first of the worst level that fired.
    const keep = new Map();
    for (const f of found) {
      const key = JSON.stringify([f.figure, f.attribute]);
      if (!keep.has(key) || (f.severity === "exposed" && keep.get(key).severity !== "exposed")) keep.set(key, f);
    }
    return found.filter((f) => keep.get(JSON.stringify([f.figure, f.attribute])).rule === f.rule);
  }

  function protectedHeadline(policy, figures) {
    let basis;
    if (figures.class_size && (figures.classes || 0) > 1) basis = `every published group consistent with your quasi-identifiers holds at least ${pp.plural(figures.class_size, "person", "people")}`;
    else if (figures.class_size) basis = `${pp.plural(figures.class_size, "released record")} ${figures.class_size === 1 ? "is" : "are"} consistent with your quasi-identifiers`;
    else if (typeof figures.p_value === "number") basis = `a random record matches as closely as yours ${pp.number(figures.p_value, true)} of the time`;
    else basis = "nothing links you to a released record";
    const values = Object.keys(figures.sensitive).length ? ", and none of your sensitive values is guessed better than the policy allows against its base rate" : "";
    return `Your record is protected under the verdict policy "${pp.literal(policy.name)}" (version ${policy.version}): ${basis}${values}.`;
  }

  pp.policy_verdict = function policy_verdict(policy, figures, details) {
    // Her verdict: the worst level among the rules that fire, the first of them (the policy's order) as headline;
    // her unwitnessed notice, which sets no level, after them.
    const found = pp.policy_findings(policy, figures);
    const ordered = [...found.filter((f) => f.severity === "exposed"), ...found.filter((f) => f.severity !== "exposed")];
    const notice = figures.unwitnessed ? [{ rule: pp.UNWITNESSED, figure: pp.UNWITNESSED, attribute: null,
      severity: "notice", text: figures.unwitnessed }] : [];
    if (!ordered.length) {
      const headline = protectedHeadline(policy, figures);
      return { level: "protected", headline, rule: null, policy: pp.verdict_json(policy), findings: notice,
        lines: [headline, ...notice.map((f) => f.text), ...details] };
    }
    const head = ordered[0];
    return { level: head.severity, headline: head.text, rule: head.rule, policy: pp.verdict_json(policy),
      findings: [...ordered, ...notice], lines: [head.text, ...[...ordered.slice(1), ...notice].map((f) => f.text), ...details] };
  };

  pp.deciding_bound = function deciding_bound(entry) {
    // verdict.py's deciding_bound: "value" (randomized response's signed-share bound at or above the paper's
    // figure), "match" (random replacement's matching bound above it), or null.
    const paper = num(entry.paper_risk) || 0.0;
    const value = num(entry.value_bound), matched = num(entry.match_bound);
    if (value !== null && value >= paper) return "value";
    if (matched !== null && matched > paper) return "match";
    return null;
  };

  pp.disclosure_line = function disclosure_line(name, entry, how) {
    // Her risk for one sensitive attribute with its base rate (and the interval of an estimate; under randomized
    // response with a signed marginal, her value's signed share, and no interval where the bound decides; under
    // random replacement, the words of the bound from matching where it decides).
    const base = pp.number(num(entry.prior), true);
    const decides = pp.deciding_bound(entry);
    let noise = Array.isArray(entry.interval) && decides !== "value" ? `, estimated within ${pp.number(num(entry.interval[0]), true)} to ${pp.number(num(entry.interval[1]), true)} (${pp.number(num(entry.confidence), true)} interval)` : "";
    if (decides === "value") noise = " at the most, by someone who knows the method, its parameters and how common each value is, whichever released record is yours";
    else if (decides === "match") noise = " at the most, by someone who knows the method, its parameters and everyone else's quasi-identifiers, and so which released records are theirs";
    return `Your ${pp.literal(name)} is guessed right with probability ${pp.number(num(entry.risk), true)} from this release${noise} (${pp.plural(entry.candidates || 0, "candidate record")}, ${how}); ${pp.held_words(entry, true)}, so anyone could guess it right with probability ${base} knowing nothing about you.`;
  };

  pp.held_words = function held_words(entry, signed = false) {
    // verdict.py's held_words: what her base rate is a share of (signed people, the least share of the people a
    // generalized release shows, or the released records).
    const base = pp.number(num(entry.prior), true);
    if (num(entry.value_bound) !== null || entry.masks === "exact") return `${base} of the people in this release hold your value${signed ? " (the publisher's signed count)" : ""}`;
    if (entry.candidate_set !== undefined) return `at least ${base} of the people in this release hold your value`;
    return `${base} of the released records share your value`;
  };

  pp.target_breaches = function target_breaches(targets, risks, distance, linked, group = null) {
    // Her own figures against the protector's signed targets, as sentences.
    targets = targets || {};
    const out = [];
    for (const [name, bound] of Object.entries(targets.max_attribute_risk || {})) {
      const mine = pp.own(risks, name);
      const risk = promised(mine);
      if (risk !== null && risk - margin(mine) > bound + SLACK) out.push(`The publisher promised no ${pp.literal(name)} guessed with probability above ${pp.number(bound)}; yours is ${pp.number(risk)}${beyond(mine)}.`);
    }
    let bound = num(targets.min_distance);
    if (bound !== null && distance !== null && distance < bound) out.push(`The publisher promised every record at least ${pp.number(bound)} ranks from its closest match; yours is ${distance}.`);
    bound = num(targets.min_k);
    if (bound !== null && group !== null && group < bound) out.push(`The publisher promised groups of at least k = ${pp.number(bound)} records; ${pp.plural(group, "released record")} ${group === 1 ? "is" : "are"} consistent with your values.`);
    bound = num(targets.max_linked_share);
    if (bound !== null && linked) out.push(`The publisher promised at most ${pp.number(bound, true)} of records linked with confidence; yours is one of them.`);
    return out;
  };

  pp.disclosure_breaches = function disclosure_breaches(figures, claims) {
    const claimedAll = claims && claims.attribute_disclosure;
    const out = [];
    for (const [name, entry] of Object.entries(figures)) {
      const value = promised(entry);
      const claimed = claimedAll && typeof claimedAll === "object" ? pp.own(claimedAll, name) : undefined;
      if (value === null || !claimed || typeof claimed !== "object") continue;
      const top = num(claimed.max), target = num(claimed.target);
      const low = value - margin(entry), said = beyond(entry);  // an estimate is above a bound only beyond its noise
      if (top !== null && low > top + SLACK) out.push(`Your risk for ${pp.literal(name)} (${pp.number(value)}${said}) is above the maximum the publisher claims (${pp.number(top)}).`);
      if (target !== null && low > target + SLACK) out.push(`Your risk for ${pp.literal(name)} (${pp.number(value)}${said}) is above the method's own target (${pp.number(target)}, one in l = ${pp.number(num(claimed.l))}).`);
    }
    return out;
  };

  // verdict.py's _promised_figure: her risk as the publisher's promises measure it (randomized response's closed
  // form where the named intruder's bound stands beside it)
  const promised = (entry) => num((entry || {}).paper_risk ?? (entry || {}).risk);
  // verdict.py's _margin and _beyond: the one-sided sampling error of a risk estimated from the release
  const margin = (entry) => num((entry || {}).sampling_error) || 0.0;
  const beyond = (entry) => (margin(entry) ? `, estimated from the release, more than its sampling error of ${pp.number(margin(entry))} at ${pp.number(num(entry.confidence), true)} above it` : "");

  pp.within_error_lines = function within_error_lines(figures, claims, targets) {
    // verdict.py's within_error_lines: estimates above a signed bound by no more than their sampling error.
    const claimedAll = claims && claims.attribute_disclosure;
    const out = [];
    for (const [name, entry] of Object.entries(figures)) {
      const value = promised(entry), m = margin(entry);
      const mine = claimedAll && typeof claimedAll === "object" ? pp.own(claimedAll, name) : undefined;
      const claimed = mine && typeof mine === "object" ? mine : {};
      const bounds = [num(claimed.max), num(claimed.target), num(pp.own((targets || {}).max_attribute_risk, name) ?? null)].filter((b) => b !== null);
      if (value === null || !m || !bounds.length) continue;
      const bound = Math.min(...bounds);
      if (value > bound + SLACK && value - m <= bound + SLACK) {
        const [lo, hi] = entry.interval || [value - m, value + m];
        out.push(`Your ${pp.literal(name)} risk estimated from the release, ${pp.number(value, true)}, is above the ${pp.number(bound, true)} the publisher signed, but within the estimate's sampling error (${pp.number(num(entry.confidence), true)} interval ${pp.number(lo, true)} to ${pp.number(hi, true)}): the randomization's noise explains it, so it is no broken promise.`);
      }
    }
    return out;
  };

  pp.claims_line = function claims_line(broken, claimed) {
    if (!claimed) return "The release makes no claim to check your record against.";
    if (broken.length) return "The publisher's claims do NOT hold for your record: " + broken.join(" ");
    return "The publisher's claims hold for your record.";
  };

  pp.broken_claims = function broken_claims(distance, claimedD, claimHolds) {
    const out = [];
    if (claimedD !== null && distance < claimedD) out.push(`Your closest released record is ${distance} ranks from yours; the publisher claims every record is at least ${claimedD} ranks from its closest match.`);
    if (claimHolds === false && distance >= (claimedD || 0)) out.push(`The spread of the released values around your record at D = ${claimedD} is below the publisher's claimed v on at least one attribute.`);
    return out;
  };

  pp.record_figures = function record_figures(out, predicate, unchanged, unwitnessed = pp.NO_PROOF) {
    // SubjectCheck.figures: what the policy reads of her record in a release with ranks (her p-value once tested).
    const disclosure = out.attribute_disclosure || {};
    const tested = out.p_value !== undefined && out.p_value !== null;
    const linked = tested && out.confidently_linked;
    const broken = [...pp.broken_claims(out.distance, out.claimed.distance, out.claim_holds),
      ...pp.disclosure_breaches(disclosure, predicate.claims || {})];
    return { sensitive: disclosure, distance: out.distance, p_value: tested ? out.p_value : null, unchanged,
      broken: [...broken, ...pp.target_breaches(predicate.targets, disclosure, out.distance, linked)], unwitnessed };
  };

  pp.record_verdict = function record_verdict(out, predicate, family, unchanged, policy, unwitnessed = pp.NO_PROOF) {
    // Her figures, then her verdict under the policy, as SubjectCheck.figures and .verdict build them.
    const claims = predicate.claims || {};
    const disclosure = out.attribute_disclosure || {};
    const tested = out.p_value !== undefined && out.p_value !== null;
    const claimBroken = pp.broken_claims(out.distance, out.claimed.distance, out.claim_holds);
    const breaches = pp.disclosure_breaches(disclosure, claims);
    const figures = pp.record_figures(out, predicate, unchanged, unwitnessed);
    const n = out.matches.length;
    const claimed = out.claimed.distance !== null || Boolean(claims.attribute_disclosure && Object.keys(claims.attribute_disclosure).length);
    const details = [pp.claims_line([...claimBroken, ...breaches], claimed), ...pp.within_error_lines(disclosure, claims, predicate.targets)];
    if (out.distance === 0) {
      details.push(`${pp.plural(n, "released record")} ${n === 1 ? "sits" : "sit"} at exactly your rank on every attribute: your values were not moved among the others.`);
    } else {
      const closest = n === 1 ? "Your closest released record is" : `Your ${n} closest released records are`;
      details.push(`${closest} ${pp.plural(out.distance, "rank")} away from yours on ${n === 1 ? "its" : "their"} farthest attribute: your values were mixed among others.`);
    }
    for (const [name, r] of Object.entries(disclosure)) details.push(pp.disclosure_line(name, r, MODEL_WORDS[r.mode] || r.mode));
    if (tested) {
      const words = pp.p_value_words(out.p_value, out.alpha);
      details.push(words.charAt(0).toUpperCase() + words.slice(1).toLowerCase() + ".");
    }
    return pp.policy_verdict(policy, figures, details);
  };
})();
