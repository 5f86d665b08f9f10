"use strict";
// Release verification in the browser, in the order of verify_release (SPEC section 9), with its reason codes.

(function () {
  const pp = globalThis.permutedPrivacy;
  const { ReleaseError } = pp;
  const MANIFEST = "manifest.json";
  const ENVELOPE = "manifest.dsse.json";
  const PAYLOAD_TYPE = "application/vnd.in-toto+json";
  const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
  const PREDICATES = ["https://permuted-privacy.dev/release/v2", "https://permuted-privacy.dev/release/v1"];
  const SPKI_ED25519 = "302a300506032b6570032100";
  const SAFE_NAME = /^[A-Za-z0-9._-]+$/;

  pp.loadPublicKey = async function loadPublicKey(pem) {
    // An Ed25519 public key in PEM (SubjectPublicKeyInfo); its raw 32 bytes' SHA-256 is the fingerprint.
    const body = String(pem).replace(/-----(BEGIN|END) PUBLIC KEY-----/g, "").replace(/\s+/g, "");
    let der;
    try {
      der = pp.b64decode(body, "the key", "key", "KEY_INVALID");
    } catch (e) {
      throw new ReleaseError("KEY_INVALID", "key", "not a PEM public key");
    }
    if (der.length !== 44 || pp.hex(der.slice(0, 12)) !== SPKI_ED25519) {
      throw new ReleaseError("KEY_TYPE", "key", "not an Ed25519 public key");
    }
    const raw = der.slice(12);
    const key = await crypto.subtle.importKey("spki", der, { name: "Ed25519" }, false, ["verify"]);
    return { key, raw, fingerprint: await pp.sha256(raw), key_id: await pp.key_id(raw) };
  };

  pp.key_mismatch = function key_mismatch(trusted, hint) {
    // verification.py's key_mismatch: KEY_MISMATCH in a sentence for her, with the fingerprint she trusts.
    return `this release was not signed by the key you trust. Your key's fingerprint is ${trusted}; the release ` +
      `was signed by another key, key id ${hint} (a release never carries its key, so its fingerprint is not ` +
      "known here): ask the publisher for the fingerprint of the key they sign with, and compare it with yours";
  };

  pp.key_id = async function key_id(raw) {
    // The TUF / in-toto key id: sha256 of the key's canonical JSON (sorted keys, no spaces).
    const doc = `{"keytype":"ed25519","keyval":{"public":"${pp.hex(raw)}"},"scheme":"ed25519"}`;
    return pp.sha256(new TextEncoder().encode(doc));
  };

  function strictJson(bytes, path, reason, what) {
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch (e) {
      throw new ReleaseError(reason, path, `${what} is not UTF-8`);
    }
    try {
      return pp.loads_strict(text, true);
    } catch (e) {
      throw new ReleaseError(reason, path, `${what} is not strict JSON: ${e.message}`);
    }
  }

  function checkStatement(statement, path) {
    const bad = (message) => new ReleaseError("SCHEMA_INVALID", path, message);
    if (statement === null || typeof statement !== "object" || Array.isArray(statement)) throw bad("the manifest is not a JSON object");
    if (statement._type !== STATEMENT_TYPE) throw bad(`_type is not ${STATEMENT_TYPE}: this is not an in-toto statement of a release`);
    if (!PREDICATES.includes(statement.predicateType)) throw bad(`predicateType is not ${PREDICATES[0]} (or ${PREDICATES[1]}): another kind of signed document`);
    if (!Array.isArray(statement.subject) || statement.subject.length < 1) throw bad("subject must list the data file (or its parts)");
    const listed = statement.subject.map((entry) => {
      const name = entry && entry.name;
      const digest = entry && entry.digest;
      const size = entry && entry.annotations && entry.annotations.size;
      if (typeof name !== "string" || !SAFE_NAME.test(name) || name === MANIFEST || name === ENVELOPE || name.startsWith(".")) {
        throw new ReleaseError("UNSAFE_PATH", path, "a listed file's name is not a plain file name (letters, digits, '.', '_', '-'; no path)");
      }
      if (!digest || Object.keys(digest).length !== 1 || !/^[0-9a-f]{64}$/.test(digest.sha256 || "")) throw bad(`the digest of ${name} must be exactly one sha256`);
      if (!Number.isInteger(size) || size < 0) throw bad(`the size of ${name} (annotations.size) must be a non-negative integer`);
      return { name, sha256: digest.sha256, size };
    });
    const p = statement.predicate;
    if (!p || typeof p !== "object") throw bad("predicate is missing");
    for (const [field, ok] of [
      ["datasetId", (v) => typeof v === "string" && v !== ""],
      ["releaseVersion", (v) => Number.isInteger(v) && v >= 1],
      ["createdAt", (v) => typeof v === "string"],
      ["schema", (v) => v && typeof v === "object"],
      ["methods", (v) => Array.isArray(v) && v.length > 0],
      ["withheld", (v) => Array.isArray(v) && v.length === 1 && v[0] === "random_seed"],
      ["claims", (v) => v && typeof v === "object"],
    ]) {
      if (!ok(p[field])) throw bad(`predicate.${field} is missing or malformed`);
    }
    // every other field, typed and bounded, and the claims under their model
    pp.validate_manifest(statement, path, statement.predicateType === PREDICATES[0]);
    return listed;
  }

  // The command line's limits, checked before a byte is parsed (verification.py's MAX_MANIFEST_BYTES, its twice as
  // large envelope, MAX_EXTRA_BYTES), and the page's own on the data: a tab holds far less than a process.
  const MIB = 1 << 20;
  pp.LIMITS = { "manifest.json": 16 * MIB, "manifest.dsse.json": 32 * MIB, extra: 16 * MIB, data: 512 * MIB,
    cells: 20000000 };

  pp.size_problem = function size_problem(name, size) {
    // [reason, why] when a file of this name and size is refused before it is read, else null.
    const dataLike = /^release(-\d{5})?\.(csv|parquet)$/.test(name) || name === "weights.csv";
    const limit = pp.own(pp.LIMITS, name) || (dataLike ? pp.LIMITS.data : pp.LIMITS.extra);
    if (size <= limit) return null;
    if (dataLike) return ["NOT_COMPUTED", `holds ${size} bytes, more than the ${limit / MIB} MiB this page reads; check it with verifier check`];
    return ["SIZE_MISMATCH", `holds ${size} bytes, more than the ${limit} allowed`];
  };

  pp.content_key = function content_key(statement) {
    // verification.py's VerifiedRelease.content_key: every listed file's name and SHA-256 but datapackage.json,
    // sorted; what a copy of a release re-signed as a new version shares with it.
    return statement.subject.filter((s) => s.name !== "datapackage.json").map((s) => `${s.name} ${s.digest.sha256}`)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join("\n");
  };

  pp.verifyRelease = async function verifyRelease(files, publicKeyPem) {
    // files: {name: Uint8Array} of one release folder. Returns {statement, fingerprint, data: {name: bytes}}.
    for (const [name, bytes] of Object.entries(files)) {
      const big = pp.size_problem(name, bytes.length);
      if (big) throw new ReleaseError(big[0], name, big[1]);
    }
    const trusted = await pp.loadPublicKey(publicKeyPem);
    const envPath = ENVELOPE;
    if (!(ENVELOPE in files)) throw new ReleaseError("FILE_MISSING", ENVELOPE, "no manifest.dsse.json in the release");
    const envelope = strictJson(files[ENVELOPE], envPath, "SIGNATURE_MALFORMED", "the envelope");
    if (!envelope || typeof envelope !== "object" || Object.keys(envelope).sort().join() !== "payload,payloadType,signatures") {
      throw new ReleaseError("SIGNATURE_MALFORMED", envPath, "a DSSE envelope holds exactly payloadType, payload and signatures");
    }
    const sigs = envelope.signatures;
    if (!Array.isArray(sigs) || sigs.length !== 1 || !sigs[0] || typeof sigs[0] !== "object") {
      throw new ReleaseError("SIGNATURE_MALFORMED", envPath, "the envelope must hold exactly one signature");
    }
    const signature = pp.b64decode(sigs[0].sig, "the signature", envPath, "SIGNATURE_MALFORMED");
    if (signature.length !== 64) throw new ReleaseError("SIGNATURE_MALFORMED", envPath, `an Ed25519 signature has 64 bytes, this one ${signature.length}`);
    const payload = pp.b64decode(envelope.payload, "the payload", envPath, "SIGNATURE_MALFORMED");
    if (typeof envelope.payloadType !== "string") throw new ReleaseError("SIGNATURE_MALFORMED", envPath, "payloadType is not a string");
    const ok = await crypto.subtle.verify({ name: "Ed25519" }, trusted.key, signature, pp.pae(envelope.payloadType, payload));
    if (!ok) {
      const hint = sigs[0].keyid;
      if (typeof hint === "string" && hint !== trusted.key_id) {
        throw new ReleaseError("KEY_MISMATCH", envPath, pp.key_mismatch(trusted.fingerprint, hint));
      }
      throw new ReleaseError("SIGNATURE_INVALID", envPath, `the signature does not verify with the trusted key (fingerprint ${trusted.fingerprint}): the manifest was changed or signed by another key`);
    }
    if (envelope.payloadType !== PAYLOAD_TYPE) throw new ReleaseError("SCHEMA_INVALID", envPath, `payloadType is not ${PAYLOAD_TYPE}`);
    const statement = strictJson(payload, MANIFEST, "MANIFEST_MALFORMED", "the signed manifest");
    const listed = checkStatement(statement, MANIFEST);
    const expected = [MANIFEST, ENVELOPE, ...listed.map((e) => e.name)].sort();
    const present = Object.keys(files).sort();
    const missing = expected.filter((n) => !present.includes(n));
    if (missing.length) throw new ReleaseError("FILE_MISSING", missing[0], "is listed in the manifest but not in the release");
    const extra = present.filter((n) => !expected.includes(n));
    if (extra.length) throw new ReleaseError("UNLISTED_FILE", extra[0], "is not listed in the manifest; a release holds only its listed files");
    const data = pp.table();
    for (const { name, sha256, size } of listed) {
      const bytes = pp.own(files, name);
      if (bytes.length !== size) throw new ReleaseError("SIZE_MISMATCH", name, `holds ${bytes.length} bytes, the manifest says ${size}`);
      if ((await pp.sha256(bytes)) !== sha256) throw new ReleaseError("DIGEST_MISMATCH", name, "its sha256 differs from the manifest's: the file was changed");
      data[name] = bytes;
    }
    const manifest = files[MANIFEST];
    if (manifest.length !== payload.length || manifest.some((b, i) => b !== payload[i])) {
      throw new ReleaseError("MANIFEST_MISMATCH", MANIFEST, "differs from the signed payload of the envelope");
    }
    const names = statement.predicate.schema.attributes.map((a) => a.name);
    let rows = 0;
    for (const { name } of listed.filter((e) => /^release(-\d{5})?\.(csv|parquet)$/.test(e.name))) {
      const shape = pp.data_shape(name, data[name]);
      const problem = pp.columns_problem(shape === null ? null : shape.names, names);
      if (problem) throw new ReleaseError("DATA_COLUMNS_MISMATCH", name, problem);
      const codec = pp.codec_problem(shape);
      if (codec) throw new ReleaseError("DATA_MALFORMED", name, codec);
      rows = shape === null || shape.rows === null || rows === null ? null : rows + shape.rows;
    }
    // a Parquet footer's rows, before a row is decoded; a CSV file's rows are counted as they are read (check.js)
    const counted = rows === null ? null : pp.rows_problem(rows, statement.predicate);
    if (counted) throw new ReleaseError("MANIFEST_INCOHERENT", MANIFEST, counted);
    if ("datapackage.json" in data) {  // derived from the manifest and the data's digests: a copy says nothing else
      const problem = pp.datapackage_problem(statement.predicate, listed, data["datapackage.json"]);
      if (problem) throw new ReleaseError("DATAPACKAGE_MISMATCH", "datapackage.json", problem);
    }
    if ("weights.csv" in data) {  // signed is not the same as sound: one number above zero per released record
      const naming = pp.identifying_weights(pp.parse_weights(data["weights.csv"], "weights.csv", statement.predicate.claims.n_records));
      if (naming) throw new ReleaseError("WEIGHT_IDENTIFYING", "weights.csv", naming);
    }
    return { statement, fingerprint: trusted.fingerprint, data, dataName: listed[0].name,
      manifestSha256: await pp.sha256(payload), contentKey: pp.content_key(statement) };
  };
})();
