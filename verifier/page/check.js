"use strict";
// A subject's check in her browser: verify, read, and measure her record (verifier check --json's fields).

(function () {
  const pp = globalThis.permutedPrivacy;

  const DECIMAL = pp.DECIMAL;  // ranks.js's: one rule for a cell and for her record
  const EXACT_INT_LIMIT = 2 ** 53;

  pp.listed_categories = function listed_categories(categories) {
    // record.py's listed_categories: the first 20 of the schema's categories, quoted and escaped, and how many more.
    const shown = categories.slice(0, 20).map((c) => `'${pp.literal(c)}'`).join(", ");
    return shown + (categories.length > 20 ? `, and ${categories.length - 20} more` : "");
  };

  pp.parse_number = function parse_number(value, floated = false) {
    // [number, null], or [null, why] for anything but a finite ASCII decimal (record.py's parse_number). `floated`:
    // the record's JSON wrote the number with a fraction or exponent (1e300 is a float there, as Python reads it).
    if (typeof value === "boolean" || value === null || value === undefined) return [null, "is not a number"];
    if (typeof value === "bigint") {  // an integer beyond 2**53 as strict JSON keeps it (Python's int)
      return value > BigInt(EXACT_INT_LIMIT) || value < -BigInt(EXACT_INT_LIMIT) ? [null, "is an integer too large for a 64-bit float to hold exactly"] : [Number(value), null];
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) return [null, "is not a finite number"];
      if (!floated && Number.isInteger(value) && Math.abs(value) > EXACT_INT_LIMIT) return [null, "is an integer too large for a 64-bit float to hold exactly"];
      return [value, null];
    }
    if (typeof value !== "string") return [null, "is not a number"];
    const text = pp.strip(value);
    if (!DECIMAL.test(text)) return [null, "is not a decimal number (ASCII digits, optional sign, . and exponent)"];
    const number = Number(text);
    if (!Number.isFinite(number)) return [null, "is too large for a 64-bit float"];
    if (number === 0 && /[1-9]/.test(text.split(/[eE]/)[0])) return [null, "is too small for a 64-bit float (it would become 0)"];
    if (!/[.eE]/.test(text) && BigInt(text.replace(/^[+-]/, "")) > BigInt(EXACT_INT_LIMIT)) {
      return [null, "is an integer too large for a 64-bit float to hold exactly"];
    }
    return [number, null];
  };

  pp.parse_record = function parse_record(record, schema) {
    // Her rank keys, by the schema: a number for a numeric attribute, a category's position otherwise.
    const given = Object.keys(record);
    for (const name of given) {
      if (!schema.attributes.some((a) => a.name === name)) {
        throw new pp.ReleaseError("RECORD_FIELD_UNKNOWN", "record", `field ${JSON.stringify(name)} is not an attribute of the release`);
      }
    }
    return schema.attributes.map((a) => {
      if (!Object.prototype.hasOwnProperty.call(record, a.name)) throw new pp.ReleaseError("RECORD_FIELD_MISSING", "record", `field ${JSON.stringify(a.name)} is missing`);
      const v = pp.own(record, a.name);
      if (a.kind === "numeric") {
        const [x, why] = pp.parse_number(v, pp.float_literal(record, a.name));
        if (why !== null) throw new pp.ReleaseError("RECORD_VALUE_INVALID", "record", `field ${JSON.stringify(a.name)}: the value ${why}`);
        return x;
      }
      const k = a.categories.indexOf(String(v));
      if (k < 0) throw new pp.ReleaseError("RECORD_VALUE_INVALID", "record", `field ${JSON.stringify(a.name)}: the value is not one of its ${a.categories.length} categories (spelled exactly): ${pp.listed_categories(a.categories)}`);
      return k;
    });
  };

  pp.with_base_rate = function with_base_rate(entry, prior) {
    // exposure.py's with_base_rate: the entry with its prior, beta-likeness and delta-disclosure gains.
    const risk = entry.risk;
    const beta = prior > 0 ? (risk - prior) / prior : null;
    const delta = prior > 0 && risk > 0 ? Math.abs(Math.log(risk / prior)) : null;
    return { ...entry, prior, beta, delta };
  };

  pp.base_rate = function base_rate(keys, s, mine, tolerance) {
    // Her value's share among all released records in column s (within the tolerance where it is given).
    if (!keys.length) return 0.0;
    let hits = 0;
    for (const row of keys) if (tolerance !== null && tolerance !== undefined ? Math.abs(row[s] - mine[s]) <= tolerance : row[s] === mine[s]) hits += 1;
    return hits / keys.length;
  };

  function herDisclosure(predicate, family, keys, mine) {
    // exposure.py's her_disclosure: the release's own model over the permutation family's shares
    const out = pp.record_disclosure(keys, predicate.schema, mine);
    if (family === "randomized_response") {
      const keep = pp.rr_distortions(predicate.methods);
      if (keep !== null) {
        Object.assign(out, pp.rr_record(keys, predicate.schema, keep, mine, pp.rr_shares(predicate.claims, predicate.schema, keep)));
      }
    } else if (family === "random_replacement") {
      let params = {};
      for (const step of predicate.methods) if (step.method === "random_attribute_replacement") params = step.parameters || {};
      Object.assign(out, pp.replacement_record(keys, predicate.schema, params, mine));
    }
    const names = predicate.schema.attributes.map((a) => a.name);
    for (const [name, entry] of Object.entries(out)) out[name] = pp.with_base_rate(entry, "value_bound" in entry ? entry.prior : pp.base_rate(keys, names.indexOf(name), mine, entry.tolerance));
    return out;
  }

  pp.read_rows = async function read_rows(bytes, name) {
    // The release's rows as text, header first: a CSV file as written, a Parquet file through hyparquet (its
    // numbers written as the shortest text that reads back to the same float, as the CSV writer does).
    if (name.endsWith(".csv")) return pp.read_csv(bytes, name);
    let objects;
    try {
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      objects = await globalThis.hyparquet.parquetReadObjects({ file: buffer });
    } catch (e) {
      throw new pp.ReleaseError("DATA_MALFORMED", name, `not a readable Parquet file (${String(e).slice(0, 120)})`);
    }
    const header = objects.length ? Object.keys(objects[0]) : [];
    // a generalized cell may be a struct beside its text: the text is what the release publishes
    const text = (v) => (v === null || v === undefined ? "" : typeof v === "object" && typeof v.text === "string" ? v.text : String(v));
    return [header, ...objects.map((o) => header.map((h) => text(o[h])))];
  };

  async function counted_rows(release, predicate, hierarchies = null) {
    // The release's rows, when they number the claims.n_records the manifest signs (VerifiedRelease._counted); a
    // generalized release's cells are read first (hierarchies given), then counted, then its counterfeits held to
    // them, in VerifiedRelease.published's order.
    const rows = await pp.read_rows(release.data[release.dataName], release.dataName);
    if (hierarchies !== null) pp.read_published(rows, predicate.schema, hierarchies);
    const counted = pp.rows_problem(rows.length - 1, predicate) || pp.counterfeit_problem(rows, predicate.schema, predicate.methods)
      || (hierarchies !== null ? pp.mask_problem(rows, predicate.schema, predicate.methods) : null);
    if (counted) throw new pp.ReleaseError("MANIFEST_INCOHERENT", "manifest.json", counted);
    return rows;
  }

  const failure = (e, verified) => ({ verified, reason: e.reason, message: `FAIL: ${e.path}: ${e.reason}: ${e.message}` });

  async function herPolicy(options) {
    // The verdict policy she gave (a file's bytes), or the verifier's default.
    return options.policy ? pp.parse_policy(options.policy, options.policyName || "policy") : pp.default_policy();
  }

  pp.checkRecord = async function checkRecord({ files, publicKeyPem, record, options = {} }) {
    // The JSON object `verifier check --json` prints, as far as this page computes it; a failed verification
    // returns {verified: false, reason, message}.
    let policy;  // first, as the command line reads it: a bad policy is one line before any work
    try {
      policy = await herPolicy(options);
    } catch (e) {
      if (e instanceof pp.ReleaseError) return failure(e, false);
      throw e;
    }
    let release;
    try {
      release = await pp.verifyRelease(files, publicKeyPem);
    } catch (e) {
      if (e instanceof pp.ReleaseError) return failure(e, false);
      throw e;
    }
    let standing;  // the release's log proof under her log policy, as verifier check --proof --log-policy
    try {
      if ((options.proof == null) !== (options.logPolicy == null)) {
        throw new pp.ReleaseError("USAGE", "-", "a log proof is checked under your log policy: give both, or neither");
      }
      standing = await pp.log_standing(release, options.proof ?? null, options.proofName || "proof",
        options.logPolicy ?? null, options.logPolicyName || "log policy");
    } catch (e) {
      if (e instanceof pp.ReleaseError) return failure(e, false);
      throw e;
    }
    return (await pp.release_check(release, record, policy, standing, options))[0];
  };

  pp.checkJointly = async function checkJointly({ releases, publicKeyPem, record, options = {} }) {
    // The object `verifier joint --json` prints: each release ({files, name}) verified with the key and checked
    // as `verifier check` checks it, then all of them together; a failure returns {verified, reason, message}.
    if (releases.length < 2) return failure(new pp.ReleaseError("USAGE", "-", "a joint check takes two releases or more"), false);
    let policy;
    try {
      policy = await herPolicy(options);
    } catch (e) {
      if (e instanceof pp.ReleaseError) return failure(e, true);
      throw e;
    }
    const parts = [];
    for (const { files, name } of releases) {
      let release;
      try {
        release = await pp.verifyRelease(files, publicKeyPem);
      } catch (e) {
        if (e instanceof pp.ReleaseError) return failure(new pp.ReleaseError(e.reason, `${name}/${e.path}`, e.message), false);
        throw e;
      }
      const names = release.statement.predicate.schema.attributes.map((a) => a.name);
      if (parts.length && JSON.stringify(names) !== JSON.stringify(parts[0].predicate.schema.attributes.map((a) => a.name))) {
        return failure(new pp.ReleaseError("SCHEMA_MISMATCH", name, `its attributes (${names.join(", ")}) are not those of ${parts[0].name}: a joint check reads releases of the same attributes`), true);
      }
      const [out, part] = await pp.release_check(release, record, policy, { unwitnessed: pp.NO_PROOF, log: null },
        { ...options, randomMatch: false });
      if (out.reason) return { ...out, message: out.message.replace("FAIL: ", `FAIL: ${name}: `) };
      parts.push({ ...part, name });
    }
    const out = { verified: true, ...pp.check_jointly(parts, policy, options) };
    out.contacts = [...new Set(parts.map((p) => pp.signed_contact(p.predicate)).filter((c) => c !== null))];
    out.plain = pp.joint_plain_words(out);
    return out;
  };

  pp.release_check = async function release_check(release, record, policy, standing, options = {}) {
    // Her check in one verified release: [the fields of verifier check --json, what her joint check reads of it
    // (the release's rows or rank keys, her record's, her distance and its columns)].
    const p = release.statement.predicate;
    const out = { verified: true, fingerprint: release.fingerprint, dataset_id: p.datasetId, release_version: p.releaseVersion,
      attributes: p.schema.attributes.map((a) => a.name) };
    const part = { release, predicate: p, family: pp.family_of(p.methods) };
    if (!/\.(csv|parquet)$/.test(release.dataName)) {
      return [{ ...out, reason: "NOT_COMPUTED", message: "this page reads releases of one CSV or Parquet file, not parts" }, part];
    }
    if (p.claims.n_records * p.schema.attributes.length > pp.LIMITS.cells) {  // before a row is decoded
      return [{ ...out, reason: "NOT_COMPUTED", message: `this page checks releases of at most ${pp.LIMITS.cells} cells; this one has ${p.claims.n_records} records of ${p.schema.attributes.length} attributes: check it with verifier check` }, part];
    }
    const family = part.family;
    if (family === "generalized") {
      try {
        const hierarchies = "hierarchies.json" in release.data
          ? pp.loads_strict(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(release.data["hierarchies.json"]), true) : {};
        part.rows = await counted_rows(release, p, hierarchies);  // its cells read before her record, as prepare reads them
        part.mine = pp.parse_record(record, p.schema);
        const checked = { ...pp.group_check(out, p, part.rows, part.mine, hierarchies, policy, standing.unwitnessed), contact: pp.signed_contact(p),
          signed_levels: p.claims.policy_levels ?? null };
        part.out = { ...checked, plain: pp.plain_words(checked), log: standing.log };
        return [part.out, part];
      } catch (e) {
        if (e instanceof pp.ReleaseError) return [{ ...out, ...failure(e, true) }, part];
        throw e;
      }
    }
    try {
      const keys = pp.rank_keys(await counted_rows(release, p), p.schema, release.dataName);
      const mine = pp.parse_record(record, p.schema);
      const r = pp.compute_record_distance(keys, mine);
      const kinds = p.schema.attributes.map((a) => a.kind);
      const [claimedD, claimedV] = pp._claimed(p.claims);
      const atClaimed = claimedD === null ? null : pp.spread_at(r.columns, r.query, kinds, claimedD);
      const result = { ...out, distance: r.distance, matches: r.matches.map((i) => i + 1), deviations: r.deviations,
        variances: pp.spread_at(r.columns, r.query, kinds, r.distance), spread_kinds: kinds.map(pp.spread_kind),
        claimed: { distance: claimedD, variances: claimedV }, variances_at_claimed_distance: atClaimed,
        claim_holds: pp.claim_holds(r.distance, claimedD, claimedV, atClaimed, kinds.length),
        attribute_disclosure: herDisclosure(p, family, keys, mine),
        ...(options.randomMatch === false ? {} : pp.subject_test(keys, r.columns, r.blocks, r.distance, options)) };
      const unchanged = r.distance === 0 && kinds.includes("numeric") &&
        r.matches.some((i) => keys[i].every((v, j) => v === mine[j]));
      result.verdict = pp.record_verdict(result, p, family, unchanged, policy, standing.unwitnessed);
      result.contact = pp.signed_contact(p);
      result.signed_levels = p.claims.policy_levels ?? null;
      result.plain = pp.plain_words(result);
      result.log = standing.log;
      Object.assign(part, { keys, mine, r, unchanged, out: result });
      return [result, part];
    } catch (e) {
      if (e instanceof pp.ReleaseError) return [{ ...out, ...failure(e, true) }, part];
      throw e;
    }
  };
})();
