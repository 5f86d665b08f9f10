"use strict";
// The strict manifest checks (verifier/releases/manifest_schema.py's twins): the published JSON Schema
// (pp.MANIFEST_SCHEMA, inlined from verifier/releases/manifest.schema.json when the page is written), then what
// a schema cannot say, the claims under the model of the signed methods.

(function () {
  const pp = globalThis.permutedPrivacy;
  const MODES = { generalized: ["group"], randomized_response: ["randomized_response"],
    random_replacement: ["random_replacement"], permutation: ["permutation", "group", "none"] };
  const TARGET_FAMILIES = { min_distance: ["permutation", "randomized_response", "random_replacement"], min_k: null,
    max_linked_share: ["permutation", "randomized_response", "random_replacement"], max_attribute_risk: null,
    min_l: ["generalized", "randomized_response"] };

  // a number written 1.0 or 1e0 is no integer, as Python reads it a float (manifest_schema.py's _strict_integer)
  const typeOf = (v, floated = false) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number"
    ? (Number.isInteger(v) && !floated ? "integer" : "number") : typeof v);
  const isType = (v, t, floated) => t === typeOf(v, floated) || (t === "number" && typeof v === "number");
  const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  function resolve(root, ref) {
    return ref.replace(/^#\//, "").split("/").reduce((node, key) => node[key.replace(/~1/g, "/").replace(/~0/g, "~")], root);
  }

  pp.schema_problem = function schema_problem(value, schema, root = schema, path = "$", floated = false) {
    // The first place where value breaks schema (a subset of JSON Schema 2020-12: the keywords the manifest's
    // schema uses), or null.
    if (schema === true) return null;
    if (schema === false) return `${path}: nothing is allowed here`;
    if (schema.$ref) { const p = pp.schema_problem(value, resolve(root, schema.$ref), root, path, floated); if (p) return p; }
    const fail = (what) => `${path}: ${what}`;
    if (schema.type !== undefined && ![].concat(schema.type).some((t) => isType(value, t, floated))) return fail(`is not of type ${schema.type}`);
    if ("const" in schema && !equal(value, schema.const)) return fail("is not the required value");
    if (schema.enum && !schema.enum.some((e) => equal(e, value))) return fail("is not one of the allowed values");
    if (typeof value === "number") {
      if (schema.minimum !== undefined && value < schema.minimum) return fail(`is below ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) return fail(`is above ${schema.maximum}`);
      if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return fail(`is not above ${schema.exclusiveMinimum}`);
      if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return fail(`is not below ${schema.exclusiveMaximum}`);
    }
    if (typeof value === "string") {
      const length = [...value].length;
      if (schema.minLength !== undefined && length < schema.minLength) return fail("is too short");
      if (schema.maxLength !== undefined && length > schema.maxLength) return fail("is too long");
      if (schema.pattern && !new RegExp(schema.pattern, "u").test(value)) return fail("does not match its pattern");
      if (schema.format === "date-time" && Number.isNaN(Date.parse(value))) return fail("is not a date and time");
    }
    if (Array.isArray(value)) {
      if (schema.minItems !== undefined && value.length < schema.minItems) return fail("has too few items");
      if (schema.maxItems !== undefined && value.length > schema.maxItems) return fail("has too many items");
      if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) return fail("has an item twice");
      if (schema.items !== undefined) {
        for (let i = 0; i < value.length; i++) { const p = pp.schema_problem(value[i], schema.items, root, `${path}[${i}]`, pp.float_literal(value, i)); if (p) return p; }
      }
    }
    if (typeOf(value) === "object") {
      const keys = Object.keys(value);
      if (schema.minProperties !== undefined && keys.length < schema.minProperties) return fail("has too few members");
      if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) return fail("has too many members");
      for (const key of schema.required || []) if (!(key in value)) return fail(`lacks ${key}`);
      for (const [key, needs] of Object.entries(schema.dependentRequired || {})) {
        if (key in value) for (const k of needs) if (!(k in value)) return fail(`has ${key} without ${k}`);
      }
      for (const key of keys) {
        if (schema.propertyNames) { const p = pp.schema_problem(key, schema.propertyNames, root, `${path}.${key}`); if (p) return p; }
        const own = schema.properties && Object.prototype.hasOwnProperty.call(schema.properties, key) ? schema.properties[key] : undefined;
        const sub = own !== undefined ? own : schema.additionalProperties;
        if (sub !== undefined) { const p = pp.schema_problem(value[key], sub, root, `${path}.${key}`, pp.float_literal(value, key)); if (p) return p; }
      }
    }
    for (const sub of schema.allOf || []) { const p = pp.schema_problem(value, sub, root, path, floated); if (p) return p; }
    if (schema.anyOf && !schema.anyOf.some((s) => pp.schema_problem(value, s, root, path, floated) === null)) return fail("matches none of its forms");
    if (schema.oneOf && schema.oneOf.filter((s) => pp.schema_problem(value, s, root, path, floated) === null).length !== 1) return fail("does not match exactly one of its forms");
    if (schema.not && pp.schema_problem(value, schema.not, root, path, floated) === null) {
      return fail(typeof value === "string" ? `'${pp.literal(value.slice(0, 80))}' holds a control or direction-changing character; a name is one line of plain text` : "matches what is not allowed");
    }
    if (schema.if) {
      const branch = pp.schema_problem(value, schema.if, root, path, floated) === null ? schema.then : schema.else;
      if (branch !== undefined) { const p = pp.schema_problem(value, branch, root, path, floated); if (p) return p; }
    }
    return null;
  };

  pp.model_problem = function model_problem(predicate) {
    // The claims under the model of the signed methods, of the schema's attributes (model_problem).
    const claims = predicate.claims, attrs = predicate.schema.attributes;
    const names = attrs.map((a) => a.name), sensitive = attrs.filter((a) => a.role === "sensitive").map((a) => a.name);
    const family = pp.family_of(predicate.methods);
    if ("model" in claims && claims.model !== family) return "$.predicate.claims.model: not the model of the signed methods";
    if (new Set(names).size !== names.length) return "$.predicate.schema.attributes: an attribute is listed twice";
    for (const [i, a] of attrs.entries()) {
      if (a.kind !== "numeric" && !(Array.isArray(a.categories) && a.categories.length)) return `$.predicate.schema.attributes[${i}].categories: a signed ${a.kind} attribute lists its categories`;
    }
    const disclosure = claims.attribute_disclosure;
    if (disclosure !== undefined && disclosure !== null) {
      for (const [name, entry] of Object.entries(disclosure)) {
        if (!sensitive.includes(name)) return `$.predicate.claims.attribute_disclosure: ${name} is not a sensitive attribute`;
        if (!MODES[family].includes(entry.mode)) return `$.predicate.claims.attribute_disclosure.${name}.mode: not a mode of the model`;
        if (!("max" in entry) || !("mean" in entry)) return `$.predicate.claims.attribute_disclosure.${name}: no max and mean`;
      }
      const missing = sensitive.filter((s) => !(s in disclosure) && family !== "randomized_response");
      if (missing.length && "model" in claims) return `$.predicate.claims.attribute_disclosure: no claim for ${missing[0]}`;
    }
    const p = claims.permuted_privacy;
    if (p !== undefined && p !== null && !(p.variances.length === p.spread_kinds.length && p.variances.length === names.length)) {
      return "$.predicate.claims.permuted_privacy: not one variance and spread kind per attribute";
    }
    if (claims.k > claims.n_records) return "$.predicate.claims.k: more than the records";
    if (claims.suppression && (family !== "generalized" || !predicate.methods.some((s) => s.method === "external"))) {
      return "$.predicate.claims.suppression: only a generalized release another tool made claims its suppression figures";
    }
    const targets = predicate.targets || {};
    for (const name of Object.keys(targets)) {
      const families = pp.own(TARGET_FAMILIES, name);
      if (families && !families.includes(family)) return `$.predicate.targets.${name}: no such figure to promise`;
    }
    for (const name of Object.keys(targets.max_attribute_risk || {})) {
      if (!sensitive.includes(name)) return `$.predicate.targets.max_attribute_risk: ${name} is not a sensitive attribute`;
    }
    for (const [i, step] of predicate.methods.entries()) {
      for (const name of step.parameters.attributes || []) {
        if (!names.includes(name)) return `$.predicate.methods[${i}].parameters.attributes: ${name} is not an attribute`;
      }
      if (step.method === "external") {
        const problem = pp.transition_problem(step.parameters, attrs);
        if (problem !== null) return `$.predicate.methods[${i}].parameters.${problem}`;
      }
    }
    return pp.created_problem(predicate.createdAt);
  };

  pp.transition_problem = function transition_problem(params, attributes) {
    // manifest_schema.py's transition_problem: what no post-randomized output of another tool publishes.
    const matrices = params.transition_matrices, kept = params.kept_as_is || [];
    if (params.model !== "randomized_response") {
      return matrices === undefined && !kept.length ? null : "transition_matrices: only a post-randomized output (model randomized_response) publishes them";
    }
    if (!matrices || !Object.keys(matrices).length) return "transition_matrices: a post-randomized output publishes the matrix of each column it randomized";
    const byName = new Map(attributes.map((a) => [a.name, a]));
    for (const [name, rows] of Object.entries(matrices)) {
      const attr = byName.get(name);
      if (!attr || attr.kind === "numeric" || !["quasi_identifier", "sensitive"].includes(attr.role)) return `transition_matrices.${name}: not a categorical quasi-identifier or sensitive attribute of the schema`;
      const d = (attr.categories || []).length;
      if (rows.length !== d || rows.some((row) => row.length !== d)) return `transition_matrices.${name}: not ${d} rows of ${d} probabilities, one per category`;
      if (rows.some((row) => { let t = 0.0; for (const x of row) t += x; return Math.abs(t - 1.0) > 1e-9; })) return `transition_matrices.${name}: a row does not sum to 1`;
    }
    if (Object.values(matrices).every((rows) => pp.unchanged(pp.transition_of(rows)))) return "transition_matrices: every one publishes each value as it is, so nothing is randomized";
    for (const name of kept) {
      const attr = byName.get(name);
      if (Object.prototype.hasOwnProperty.call(matrices, name) || !attr || attr.kind === "numeric") return `kept_as_is: ${name} is not a categorical attribute published as it is`;
    }
    return null;
  };

  pp.created_problem = function created_problem(created) {
    // A real instant (manifest_schema.py's _created_problem): 2024-02-30 or 25:00 is refused.
    const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):(\d{2}))?$/.exec(created);
    const bad = "$.predicate.createdAt: not a real RFC 3339 date and time";
    if (!m) return bad;
    const [y, mo, d, h, mi, s, oh, om] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
    const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
    const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return bad;
    return null;
  };

  pp.validate_manifest = function validate_manifest(statement, path, current = false) {
    const problem = pp.schema_problem(statement, pp.MANIFEST_SCHEMA);
    if (problem) throw new pp.ReleaseError("SCHEMA_INVALID", path, problem);
    const incoherent = pp.coherence_problem(statement.predicate, current);  // what no run of the published methods produces
    if (incoherent) throw new pp.ReleaseError("MANIFEST_INCOHERENT", path, incoherent);
    const outside = pp.model_problem(statement.predicate);
    if (outside) throw new pp.ReleaseError("SCHEMA_INVALID", path, outside);
  };
})();
