"use strict";
// The release as a Frictionless data package (datapackage.py's and frictionless.py's twins): datapackage.json is
// derived from the signed manifest and the data's digests, and a copy that says anything else is refused
// (DATAPACKAGE_MISMATCH), as on the command line.

(function () {
  const pp = globalThis.permutedPrivacy;
  const PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json";
  const MEDIA = { csv: "text/csv", parquet: "application/vnd.apache.parquet" };
  const GENERALIZING = { sd_k_anonymity: ["quasi_identifier"], multi_sensitive_generalization: ["quasi_identifier", "sensitive"],
    m_invariant: ["quasi_identifier"] };
  const NOTATION = "generalized cells (docs/release-format.md, section 1.1): a value, an interval [a,b] or [a,b), a set {a,b}, a hierarchy node, or * for every value";
  const isPart = (name) => /^release-[0-9]{5}\.parquet$/.test(name);
  const isData = (name) => ["release.csv", "release.parquet"].includes(name) || isPart(name);

  pp.generalized_columns = function generalized_columns(methods, schema) {
    // family.py's generalized_columns: the columns of the roles each generalizing method generalizes.
    const roles = new Set();
    const steps = methods.filter((s) => s && typeof s === "object" && !Array.isArray(s));
    if (steps.some((s) => s.method === "external" && s.parameters && typeof s.parameters === "object" && s.parameters.model === "generalized")) {
      roles.add("quasi_identifier");
      roles.add("sensitive");
    }
    for (const s of steps) for (const role of GENERALIZING[String(s.method)] || []) roles.add(role);
    return schema.attributes.filter((a) => roles.has(a.role)).map((a) => a.name);
  };

  function field(attr, generalized, format) {
    // frictionless.py's _field
    const out = { name: attr.name };
    if (generalized) {
      out.type = format === "parquet" ? "object" : "string";
      out.description = NOTATION + (format === "parquet" ? " (in Parquet, a struct: the text and what it covers, section 1.2)" : "");
      out["permuted_privacy:generalized"] = true;
    } else if (attr.kind === "numeric") {
      out.type = "number";
    } else {
      out.type = "string";
      if (attr.categories !== undefined && attr.categories !== null) {
        out.categories = [...attr.categories];
        out.categoriesOrdered = attr.kind === "ordinal";
        out.constraints = { required: true, enum: [...attr.categories] };
      }
    }
    if (!("constraints" in out)) out.constraints = { required: true };
    out["permuted_privacy:role"] = attr.role;
    out["permuted_privacy:kind"] = attr.kind;
    return out;
  }

  function dataResource(name, dataName, sha256, size, schema, generalized) {
    const format = dataName.endsWith(".parquet") ? "parquet" : "csv";
    const out = { name, type: "table", path: dataName, format, mediatype: MEDIA[format], hash: `sha256:${sha256}`, bytes: size };
    if (format === "csv") {
      out.encoding = "utf-8";
      out.dialect = { delimiter: ",", header: true, quoteChar: '"', doubleQuote: true, lineTerminator: "\n" };
    }
    out.schema = { fields: schema.attributes.map((a) => field(a, generalized.includes(a.name), format)), missingValues: [] };
    return out;
  }

  pp.datapackage = function datapackage(datasetId, releaseVersion, schema, data, generalized, weights) {
    // datapackage.py's datapackage: one resource per data file (or part), then the weights.
    const resources = data.length === 1 && !isPart(data[0].name)
      ? [dataResource("release", data[0].name, data[0].sha256, data[0].size, schema, generalized)]
      : data.map((d) => dataResource(d.name.slice(0, d.name.lastIndexOf(".")), d.name, d.sha256, d.size, schema, generalized));
    if (weights) {
      resources.push({ name: "weights", type: "table", path: "weights.csv", format: "csv", mediatype: "text/csv",
        hash: `sha256:${weights.sha256}`, bytes: weights.size, encoding: "utf-8",
        description: "the sampling weight of each record of the release, row for row",
        schema: { fields: [{ name: "weight", type: "number", constraints: { required: true, exclusiveMinimum: 0 } }], missingValues: [] } });
    }
    const name = datasetId.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "release";
    return { $schema: PROFILE, name, title: datasetId, version: String(releaseVersion), resources };
  };

  const canonical = (v) => (Array.isArray(v) ? `[${v.map(canonical).join(",")}]`
    : v && typeof v === "object" ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`
      : JSON.stringify(v));
  const pyRepr = (key) => `'${key.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

  pp.datapackage_problem = function datapackage_problem(predicate, listed, raw) {
    // datapackage.py's datapackage_problem: why datapackage.json is not the one the manifest and files imply.
    const data = listed.filter((e) => isData(e.name));
    const weights = listed.find((e) => e.name === "weights.csv") || null;
    const expected = pp.datapackage(predicate.datasetId, predicate.releaseVersion, predicate.schema, data,
      pp.generalized_columns(predicate.methods, predicate.schema), weights);
    let got;
    try {
      got = pp.loads_strict(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw), true);
    } catch (e) {
      return `it is not strict JSON: ${e.message}`;
    }
    if (canonical(got) === canonical(expected)) return null;
    if (!got || typeof got !== "object" || Array.isArray(got)) return "it is not a JSON object";
    const keys = [...new Set([...Object.keys(got), ...Object.keys(expected)])].sort();
    const differ = keys.filter((k) => canonical(got[k]) !== canonical(expected[k]));
    return `it says something else than the manifest and the data about ${differ.map(pyRepr).join(", ")}`;
  };
})();
