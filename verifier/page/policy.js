"use strict";
// The verdict policy: the published rules that decide her level from her own figures (policy.py's twin).

(function () {
  const pp = globalThis.permutedPrivacy;
  const NUMERIC_FIGURES = { class_size: false, p_value: false, distance: false, posterior: true, prior: true, beta: true,
    delta: true };
  const FLAG_FIGURES = ["unchanged", "no_group", "untested", "claim_broken"];
  const OPERATORS = { below: "below", at_most: "at or below", above: "above", at_least: "at or above" };
  const LEVELS = ["exposed", "at_risk"];
  const MAX_BYTES = 64 * 1024, MAX_RULES = 100;
  const ID = /^[a-z][a-z0-9_]{0,63}$/;
  pp.OPERATORS = OPERATORS;

  const invalid = (where, why, path) => new pp.ReleaseError("POLICY_INVALID", path, `${where}: ${why}`);
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

  pp.rule_bound = function rule_bound(rule, prior = null) {
    // Rule.bound: the threshold her figure is held to; for enhanced beta-likeness, min(threshold, -ln prior).
    if (rule.enhanced && prior !== null && prior > 0) return Math.min(rule.threshold, -Math.log(prior));
    return rule.threshold;
  };

  pp.rule_fires = function rule_fires(rule, value, prior = null) {
    // Rule.fires: whether a number (or a yes-or-no, or null where undefined) sets the rule's level.
    if (rule.operator === null) return value === true;
    if (typeof value !== "number" || !Number.isFinite(value)) return false;
    const t = pp.rule_bound(rule, prior);
    return { below: value < t, at_most: value <= t, above: value > t, at_least: value >= t }[rule.operator];
  };

  function parseRule(item, where, path) {
    if (!isObject(item)) throw invalid(where, "a rule is a JSON object", path);
    const ops = Object.keys(OPERATORS).filter((k) => k in item);
    const allowed = ["id", "figure", "level", "enhanced", "about", ...Object.keys(OPERATORS)];
    const unknown = Object.keys(item).filter((k) => !allowed.includes(k)).sort();
    if (unknown.length) throw invalid(where, `unknown key ${JSON.stringify(unknown[0])} (a rule has id, figure, level, one threshold, and for beta enhanced)`, path);
    const { id, figure, level } = item;
    if (typeof id !== "string" || !ID.test(id)) throw invalid(`${where}.id`, "an id is 1 to 64 of a-z, 0-9 and _, starting with a letter", path);
    if (!(figure in NUMERIC_FIGURES) && !FLAG_FIGURES.includes(figure)) {
      throw invalid(`${where}.figure`, `not a figure of the policy (one of ${[...Object.keys(NUMERIC_FIGURES), ...FLAG_FIGURES].join(", ")})`, path);
    }
    if (!LEVELS.includes(level)) throw invalid(`${where}.level`, "a rule sets exposed or at_risk", path);
    const enhanced = "enhanced" in item ? item.enhanced : false;
    if (typeof enhanced !== "boolean" || (enhanced && figure !== "beta")) throw invalid(`${where}.enhanced`, "enhanced is true or false, and only for the figure beta", path);
    if (FLAG_FIGURES.includes(figure)) {
      if (ops.length) throw invalid(`${where}.${ops[0]}`, `${figure} is yes or no: its rule has no threshold`, path);
      return { id, figure, level, operator: null, threshold: null, enhanced: false };
    }
    if (ops.length !== 1) throw invalid(where, `a rule on ${figure} has exactly one of below, at_most, above, at_least`, path);
    const t = item[ops[0]];
    if (typeof t !== "number" || !Number.isFinite(t)) throw invalid(`${where}.${ops[0]}`, "a threshold is a finite number", path);
    return { id, figure, level, operator: ops[0], threshold: t, enhanced };
  }

  pp.parse_policy = async function parse_policy(bytes, path) {
    // A policy from its file's bytes (parse_policy): anything but a well-formed policy is POLICY_INVALID.
    if (bytes.length > MAX_BYTES) throw invalid("$", `a policy file holds at most ${MAX_BYTES / 1024} KiB`, path);
    let doc;
    try {
      doc = pp.loads_strict(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes), true);
    } catch (e) {
      throw invalid("$", "not strict JSON", path);
    }
    if (!isObject(doc)) throw invalid("$", "a policy is a JSON object", path);
    const unknown = Object.keys(doc).filter((k) => !["name", "version", "about", "rules"].includes(k)).sort();
    if (unknown.length) throw invalid("$", `unknown key ${JSON.stringify(unknown[0])} (a policy has name, version, about, rules)`, path);
    const { name, version, rules } = doc;
    if (typeof name !== "string" || !(Array.from(name).length > 0 && Array.from(name).length <= 200)) throw invalid("$.name", "a policy has a name of 1 to 200 characters", path);
    if (!Number.isInteger(version) || version < 1 || version >= 2 ** 31) throw invalid("$.version", "a version is an integer from 1 to 2147483647", path);
    if (!Array.isArray(rules) || !(rules.length > 0 && rules.length <= MAX_RULES)) throw invalid("$.rules", `a policy has 1 to ${MAX_RULES} rules`, path);
    const digest = await pp.sha256(bytes);
    if (pp.same_name(name, DEFAULT_NAME) && digest !== await pp.sha256(new TextEncoder().encode(pp.DEFAULT_POLICY_TEXT))) {
      throw invalid("$.name", `${JSON.stringify(DEFAULT_NAME)} names the verifier's own policy, and this file is not it (its SHA-256 differs): give your policy a name of its own`, path);
    }
    const parsed = rules.map((item, i) => parseRule(item, `$.rules[${i}]`, path));
    const seen = new Set();
    parsed.forEach((r, i) => {
      if (seen.has(r.id)) throw invalid(`$.rules[${i}].id`, `the id ${JSON.stringify(r.id)} is used twice`, path);
      seen.add(r.id);
    });
    return { name, version, rules: parsed, sha256: digest };
  };

  const DEFAULT_NAME = "permuted-privacy default";

  pp.same_name = function same_name(a, b) {
    // policy.py's same_name: runs of spaces, tabs and line breaks one space, the ends trimmed, ASCII lower-cased.
    const plain = (text) => text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "").split(/[ \t\r\n]+/).join(" ")
      .replace(/[A-Z]/g, (c) => c.toLowerCase());
    return plain(a) === plain(b);
  };

  pp.default_policy = async function default_policy() {
    // The verifier's own policy, inlined into the page from verdict-policy.json byte for byte.
    return pp.parse_policy(new TextEncoder().encode(pp.DEFAULT_POLICY_TEXT), "verdict-policy.json");
  };

  pp.policy_json = (policy) => ({ name: policy.name, version: policy.version, sha256: policy.sha256 });
  // policy.py's verdict_json: policy_json and the figures its rules read, sorted.
  pp.verdict_json = (policy) => ({ ...pp.policy_json(policy), reads: [...new Set(policy.rules.map((r) => r.figure))].sort() });
})();
