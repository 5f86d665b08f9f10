"use strict";
// Her verdict: a level and a headline that is her worst finding (verifier/releases/verdict.py and
// subject.py's twins), with the one number format of verifier/text.py.

(function () {
  const pp = globalThis.permutedPrivacy;
  const CERTAIN = 1.0 - 1e-9;
  const SLACK = 1e-9;
  const KIND_ORDER = ["certain_disclosure", "linked", "unchanged", "target_missed", "claim_broken", "no_group",
    "no_claim", "untested"];
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

  pp.plural = function plural(n, noun) {
    return `${n} ${n === 1 ? noun : noun + "s"}`;
  };

  pp.literal = function literal(text) {
    // Every control or direction-changing character as an escape (verifier.text.literal).
    return String(text).replace(/[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
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

  const finding = (kind, severity, text, attribute = null) => ({ kind, attribute, severity, text });
  const num = (v) => (typeof v === "number" ? v : null);

  pp.disclosure_findings = function disclosure_findings(disclosure, claims) {
    const claimedAll = claims && claims.attribute_disclosure;
    const out = [];
    for (const [name, entry] of Object.entries(disclosure)) {
      const risk = num(entry.risk);
      if (risk === null) continue;
      const shown = pp.literal(name);
      if (risk >= CERTAIN) out.push(finding("certain_disclosure", "exposed", `Your ${shown} can be guessed with certainty from this release.`, name));
      const claimed = claimedAll && typeof claimedAll === "object" ? claimedAll[name] : undefined;
      if (!claimed || typeof claimed !== "object") {
        out.push(finding("no_claim", "at_risk", `The publisher makes no claim about how well your ${shown} is protected, so nothing bounds the ${pp.number(risk)} chance of guessing it.`, name));
        continue;
      }
      const top = num(claimed.max), target = num(claimed.target);
      if (top !== null && risk > top + SLACK) out.push(finding("claim_broken", "at_risk", `Your ${shown} is guessed with probability ${pp.number(risk)}, above the maximum the publisher claims (${pp.number(top)}).`, name));
      if (target !== null && risk > target + SLACK) out.push(finding("target_missed", "at_risk", `Your ${shown} is guessed with probability ${pp.number(risk)}, above the method's own target (${pp.number(target)}, one in l = ${pp.number(num(claimed.l))}).`, name));
    }
    return out;
  };

  pp.target_findings = function target_findings(targets, risks, distance, linked, group = null) {
    targets = targets || {};
    const out = [];
    for (const [name, bound] of Object.entries(targets.max_attribute_risk || {})) {
      const risk = num((risks[name] || {}).risk);
      if (risk !== null && risk > bound + SLACK) out.push(finding("target_missed", "at_risk", `The publisher promised no ${pp.literal(name)} guessed with probability above ${pp.number(bound)}; yours is ${pp.number(risk)}.`, name));
    }
    let bound = num(targets.min_distance);
    if (bound !== null && distance !== null && distance < bound) out.push(finding("target_missed", "at_risk", `The publisher promised every record at least ${pp.number(bound)} ranks from its closest match; yours is ${distance}.`));
    bound = num(targets.min_k);
    if (bound !== null && group !== null && group < bound) out.push(finding("target_missed", "at_risk", `The publisher promised groups of at least k = ${pp.number(bound)} records; ${pp.plural(group, "released record")} ${group === 1 ? "is" : "are"} consistent with your values.`));
    bound = num(targets.max_linked_share);
    if (bound !== null && linked) out.push(finding("target_missed", "at_risk", `The publisher promised at most ${pp.number(bound, true)} of records linked with confidence; yours is one of them.`));
    return out;
  };

  pp.disclosure_breaches = function disclosure_breaches(figures, claims) {
    const claimedAll = claims && claims.attribute_disclosure;
    const out = [];
    for (const [name, entry] of Object.entries(figures)) {
      const value = num(entry.risk);
      const claimed = claimedAll && typeof claimedAll === "object" ? claimedAll[name] : undefined;
      if (value === null || !claimed || typeof claimed !== "object") continue;
      const top = num(claimed.max), target = num(claimed.target);
      if (top !== null && value > top + SLACK) out.push(`Your risk for ${pp.literal(name)} (${pp.number(value)}) is above the maximum the publisher claims (${pp.number(top)}).`);
      if (target !== null && value > target + SLACK) out.push(`Your risk for ${pp.literal(name)} (${pp.number(value)}) is above the method's own target (${pp.number(target)}, one in l = ${pp.number(num(claimed.l))}).`);
    }
    return out;
  };

  pp.claims_line = function claims_line(broken, claimed) {
    if (!claimed) return "The release makes no claim to check your record against.";
    if (broken.length) return "The publisher's claims do NOT hold for your record: " + broken.join(" ");
    return "The publisher's claims hold for your record.";
  };

  pp.subject_verdict = function subject_verdict(findings, protectedText, details) {
    const rank = (f) => [f.severity !== "exposed" ? 1 : 0, KIND_ORDER.includes(f.kind) ? KIND_ORDER.indexOf(f.kind) : KIND_ORDER.length];
    const ordered = [...findings].sort((a, b) => { const x = rank(a), y = rank(b); return x[0] - y[0] || x[1] - y[1]; });
    if (!ordered.length) return { level: "protected", headline: protectedText, findings: [], lines: [protectedText, ...details] };
    const head = ordered[0];
    return { level: head.severity, headline: head.text, findings: ordered, lines: [head.text, ...ordered.slice(1).map((f) => f.text), ...details] };
  };

  pp.broken_claims = function broken_claims(distance, claimedD, claimHolds) {
    const out = [];
    if (claimedD !== null && distance < claimedD) out.push(`Your closest released record is ${distance} ranks from yours; the publisher claims every record is at least ${claimedD} ranks from its closest match.`);
    if (claimHolds === false && distance >= (claimedD || 0)) out.push(`The spread of the released values around your record at D = ${claimedD} is below the publisher's claimed v on at least one attribute.`);
    return out;
  };

  pp.record_verdict = function record_verdict(out, predicate, family, unchanged) {
    // Her findings, then her verdict, as SubjectCheck.findings and .verdict build them.
    const claims = predicate.claims || {};
    const disclosure = out.attribute_disclosure || {};
    const tested = out.p_value !== undefined;
    const linked = tested && out.confidently_linked;
    const broken = pp.broken_claims(out.distance, out.claimed.distance, out.claim_holds);
    const findings = pp.disclosure_findings(disclosure, claims);
    if (linked) findings.push(finding("linked", "exposed", `An intruder can tell your match from chance: a match as close as yours happens by chance with probability ${pp.number(out.p_value)}, below alpha = ${out.alpha}.`));
    if (unchanged) findings.push(finding("unchanged", "exposed", "Your record was published unchanged: a released record equals yours on every attribute."));
    for (const text of broken) findings.push(finding("claim_broken", "at_risk", text));
    findings.push(...pp.target_findings(predicate.targets, disclosure, out.distance, linked));
    if (out.claimed.distance === null) findings.push(finding("no_claim", "at_risk", "The publisher claims no permutation distance, so nothing says how far your record should have moved."));
    if (!tested) findings.push(finding("untested", "at_risk", "The random-match test was not run, so whether an intruder could tell your match from chance is not known: run it before you rely on this."));
    const n = out.matches.length;
    const claimed = out.claimed.distance !== null || Boolean(claims.attribute_disclosure && Object.keys(claims.attribute_disclosure).length);
    const details = [pp.claims_line([...broken, ...pp.disclosure_breaches(disclosure, claims)], claimed)];
    if (out.distance === 0) {
      details.push(`${pp.plural(n, "released record")} ${n === 1 ? "sits" : "sit"} at exactly your rank on every attribute: your values were not moved among the others.`);
    } else {
      const closest = n === 1 ? "Your closest released record is" : `Your ${n} closest released records are`;
      details.push(`${closest} ${pp.plural(out.distance, "rank")} away from yours on ${n === 1 ? "its" : "their"} farthest attribute: your values were mixed among others.`);
    }
    for (const [name, r] of Object.entries(disclosure)) {
      details.push(`An attacker who knows your quasi-identifiers guesses your ${name} right with probability ${pp.number(r.risk, true)} (${pp.plural(r.candidates, "candidate record")}, ${MODEL_WORDS[r.mode] || r.mode}).`);
    }
    if (tested) {
      const words = pp.p_value_words(out.p_value, out.alpha);
      details.push(words.charAt(0).toUpperCase() + words.slice(1).toLowerCase() + ".");
    }
    const model = family.replace(/_/g, " ");
    return pp.subject_verdict(findings, `Your record is protected: every check of it passes under this release's ${model} model.`, details);
  };
})();
