"use strict";
// The release log in the page (verifier/transparency/*.py's twins): RFC 9162 inclusion (merkle.py), signed notes
// and checkpoints (note.py), witness cosignatures (cosignature.py), her log policy and its quorum (policy.py),
// the proof file (proof.py) and her release's standing (standing.py). Ed25519 and SHA-256 are WebCrypto's; the
// page has no memory of the checkpoints she saw, so the history checks stay with the command line and the TUI.

(function () {
  const pp = globalThis.permutedPrivacy;
  const fail = (where, reason, message) => new pp.ReleaseError(reason, where, message);
  const enc = new TextEncoder();
  const HASH_SIZE = 32;
  const ED25519_TYPE = 1;
  const COSIGNATURE_TYPE = 4;
  const MLDSA44_COSIGNATURE_TYPE = 6, MLDSA44_PUBLIC_BYTES = 1312;
  const MAX_NOTE_BYTES = 1 << 20;
  const MAX_SIGNATURES = 100;
  const MAX_SIZE = (1n << 63n) - 1n;
  const MAX_PATH = 63;
  const DASH = "\u2014 ";
  const PROOF_HEADER = "c2sp.org/tlog-proof@v1";

  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const digest = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const encode64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));

  function b64(text, what, where, reason = "LOG_MALFORMED") {
    // Canonical standard base64, padded (note.py's _b64).
    const ok = /^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0;
    const raw = ok ? Uint8Array.from(atob(text), (c) => c.charCodeAt(0)) : null;
    if (!raw || encode64(raw) !== text) throw fail(where, reason, `${what} is not base64`);
    return raw;
  }

  // ------------------------------------------------------------------ merkle.py

  pp.leaf_hash = (entry) => digest(concat(Uint8Array.of(0), entry));
  pp.node_hash = (left, right) => digest(concat(Uint8Array.of(1), left, right));

  pp.verify_inclusion = async function verify_inclusion(index, size, leaf, path, root) {
    // RFC 9162 2.1.3.2, on BigInt index and size.
    if (!(index >= 0n && index < size) || path.some((p) => p.length !== HASH_SIZE)) return false;
    let fn = index;
    let sn = size - 1n;
    let r = leaf;
    for (const p of path) {
      if (sn === 0n) return false;
      if (fn & 1n || fn === sn) {
        r = await pp.node_hash(p, r);
        while (!(fn & 1n) && fn !== 0n) {
          fn >>= 1n;
          sn >>= 1n;
        }
      } else {
        r = await pp.node_hash(r, p);
      }
      fn >>= 1n;
      sn >>= 1n;
    }
    return sn === 0n && same(r, root);
  };

  // ------------------------------------------------------------------ note.py

  pp.note_key_id = async function note_key_id(name, kind, publicRaw) {
    return (await digest(concat(enc.encode(name), Uint8Array.of(10, kind), publicRaw))).slice(0, 4);
  };

  pp.parse_vkey = async function parse_vkey(text, where) {
    const t = pp.strip(text);
    const i = t.indexOf("+");
    const j = i < 0 ? -1 : t.indexOf("+", i + 1);
    const parts = j < 0 ? null : [t.slice(0, i), t.slice(i + 1, j), t.slice(j + 1)];
    if (!parts || !parts[0] || !/^[0-9a-f]{8}$/.test(parts[1])) {
      throw fail(where, "LOG_KEY_INVALID", "a verifier key reads NAME+KEYID+BASE64 (publisher log init prints it)");
    }
    let raw = new Uint8Array(0);
    try {
      raw = b64(parts[2], "the key", where);
    } catch (e) {
      if (!(e instanceof pp.ReleaseError)) throw e;
    }
    const mldsa = raw.length === 1 + MLDSA44_PUBLIC_BYTES && raw[0] === MLDSA44_COSIGNATURE_TYPE;
    if (!mldsa && (raw.length !== 33 || (raw[0] !== ED25519_TYPE && raw[0] !== COSIGNATURE_TYPE))) {
      throw fail(where, "LOG_KEY_INVALID", "a verifier key holds an Ed25519 key (type 0x01 or 0x04) or an ML-DSA-44 cosigner's (type 0x06) in base64");
    }
    if (pp.hex(await pp.note_key_id(parts[0], raw[0], raw.slice(1))) !== parts[1]) {
      throw fail(where, "LOG_KEY_INVALID", "the key ID does not match the name and key");
    }
    return [parts[0], raw[0], raw.slice(1)];
  };

  pp.parse_note = function parse_note(raw, where) {
    if (raw.length > MAX_NOTE_BYTES) throw fail(where, "LOG_MALFORMED", `holds ${raw.length} bytes, more than the ${MAX_NOTE_BYTES} a note may`);
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
    } catch (e) {
      throw fail(where, "LOG_MALFORMED", "a signed note is UTF-8 text");
    }
    if (/[\u0000-\u0009\u000b-\u001f]/.test(text)) throw fail(where, "LOG_MALFORMED", "a signed note holds no control character but newline");
    const cut = text.lastIndexOf("\n\n");
    if (cut < 0 || !text.endsWith("\n")) throw fail(where, "LOG_MALFORMED", "a signed note is text, a blank line, then its signature lines");
    const body = text.slice(0, cut + 1);
    const signed = text.slice(cut + 2);
    const lines = signed ? signed.slice(0, -1).split("\n") : [];
    if (!lines.length || lines.length > MAX_SIGNATURES) throw fail(where, "LOG_MALFORMED", `a signed note carries 1 to ${MAX_SIGNATURES} signatures`);
    const signatures = [];
    for (const line of lines) {
      if (!line.startsWith(DASH) || line.split(" ").length !== 3) {
        throw fail(where, "LOG_MALFORMED", "a signature line is an em dash, the key's name and the signature");
      }
      const [name, sig] = line.slice(DASH.length).split(" ");
      if (!name || name.includes("+")) throw fail(where, "LOG_MALFORMED", "a key name is not empty and holds no '+'");
      const rawSig = b64(sig, `the signature of ${name}`, where);
      if (rawSig.length < 5) throw fail(where, "LOG_MALFORMED", `the signature of ${name} is shorter than its key ID`);
      signatures.push([name, rawSig.slice(0, 4), rawSig.slice(4)]);
    }
    return { text: body, signatures };
  };

  pp.verify_signature = async function verify_signature(note, name, publicRaw, where, kind = ED25519_TYPE, message = null) {
    // The signature bytes of the key `name` on `note` once verified, or null when the note carries none from it.
    const wanted = await pp.note_key_id(name, kind, publicRaw);
    for (const [signer, kid, sig] of note.signatures) {
      if (signer !== name || !same(kid, wanted)) continue;
      const key = await crypto.subtle.importKey("raw", publicRaw, { name: "Ed25519" }, false, ["verify"]);
      const signed = message ? message(sig) : enc.encode(note.text);
      const ok = sig.length >= 64 && await crypto.subtle.verify({ name: "Ed25519" }, key, sig.slice(-64), signed);
      if (!ok) throw fail(where, "LOG_SIGNATURE", `the signature of ${name} does not verify: the note was changed or signed by another key`);
      return sig;
    }
    return null;
  };

  pp.parse_checkpoint = function parse_checkpoint(text, where) {
    const lines = text.split("\n");
    if (lines.length < 4 || lines[lines.length - 1] !== "" || lines.slice(0, -1).some((l) => !l)) {
      throw fail(where, "LOG_MALFORMED", "a checkpoint is its origin, size and root hash, each on a line");
    }
    const [origin, size, root] = lines;
    if (!/^(0|[1-9][0-9]{0,18})$/.test(size) || BigInt(size) > MAX_SIZE) {
      throw fail(where, "LOG_MALFORMED", `the tree size '${size}' is not a decimal from 0 to 2^63 - 1 without a leading zero`);
    }
    const hashed = b64(root, "the root hash", where);
    if (hashed.length !== HASH_SIZE) throw fail(where, "LOG_MALFORMED", `the root hash holds ${hashed.length} bytes, not ${HASH_SIZE}`);
    return { origin, size: BigInt(size), root: hashed, extensions: lines.slice(3, -1) };
  };

  // ------------------------------------------------------------------ cosignature.py

  const time64 = (sig) => sig.slice(0, 8).reduce((t, b) => (t << 8n) | BigInt(b), 0n);

  pp.verify_cosignature = async function verify_cosignature(note, name, publicRaw, where) {
    // The time the witness `name` cosigned `note`, or null when it did not; a bad cosignature is WITNESS_QUORUM.
    const message = (sig) => (sig.length !== 72 || time64(sig) > MAX_SIZE ? new Uint8Array(0)
      : enc.encode(`cosignature/v1\ntime ${time64(sig)}\n${note.text}`));
    let found;
    try {
      found = await pp.verify_signature(note, name, publicRaw, where, COSIGNATURE_TYPE, message);
    } catch (e) {
      if (!(e instanceof pp.ReleaseError) || e.reason !== "LOG_SIGNATURE") throw e;
      throw fail(where, "WITNESS_QUORUM", `the cosignature of the witness ${name} does not verify: the checkpoint was changed, or the cosignature forged`);
    }
    return found === null ? null : time64(found);
  };

  // ------------------------------------------------------------------ policy.py

  const bad = (path, n, message) => fail(path, "POLICY_INVALID", `line ${n}: ${message}`);

  async function vkeyOn(text, path, n) {
    try {
      return await pp.parse_vkey(text, path);
    } catch (e) {
      if (e instanceof pp.ReleaseError) throw bad(path, n, e.message);
      throw e;
    }
  }

  pp.parse_log_policy = async function parse_log_policy(raw, path) {
    // policy.py's parse_policy: one log, labels defined once, a quorum naming one of them.
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
    } catch (e) {
      throw fail(path, "POLICY_INVALID", "a policy is UTF-8 text");
    }
    let policy = null;
    let quorum = null;
    const taken = (label) => policy.witnesses.has(label) || policy.groups.has(label);
    const lines = text.split("\n");
    for (let n = 1; n <= lines.length; n++) {
      const line = lines[n - 1].endsWith("\r") ? lines[n - 1].slice(0, -1) : lines[n - 1];
      if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(line)) throw bad(path, n, "a policy line holds no control character but a tab");
      const words = line.split("#", 1)[0].split(/[ \t]+/).filter((w) => w);
      if (!words.length) continue;
      if (words[0] === "log") {
        if (policy !== null || words.length !== 2) throw bad(path, n, "a policy has one log line, 'log VERIFIER-KEY'");
        const [name, kind, pub] = await vkeyOn(words[1], path, n);
        if (kind !== ED25519_TYPE) throw bad(path, n, "the log's key signs with Ed25519 (type 0x01); this is a witness's");
        policy = { origin: name, logPublic: pub, witnesses: new Map(), groups: new Map(), quorum: null };
      } else if (policy === null) {
        throw bad(path, n, "the log line comes first");
      } else if (words[0] === "witness" || words[0] === "group") {
        if (words.length > 1 && (taken(words[1]) || words[1] === "none")) throw bad(path, n, `the label '${words[1]}' is taken`);
        if (words[0] === "witness") {
          if (words.length !== 3 && words.length !== 4) throw bad(path, n, "a witness line is 'witness LABEL VERIFIER-KEY [URL]'");
          const [name, kind, pub] = await vkeyOn(words[2], path, n);
          if (kind !== COSIGNATURE_TYPE && kind !== MLDSA44_COSIGNATURE_TYPE) throw bad(path, n, `the key of witness ${words[1]} is a log's (type 0x01), not a cosigner's (0x04 or 0x06)`);
          // WebCrypto has no ML-DSA: the page says so, where the command line verifies it (policy.py's _witness)
          if (kind === MLDSA44_COSIGNATURE_TYPE) throw bad(path, n, `the witness ${words[1]} cosigns with ML-DSA-44, which this page cannot verify (the browser has no ML-DSA): check with verifier check, or name its Ed25519 key`);
          policy.witnesses.set(words[1], [name, pub]);
        } else {
          const members = words.slice(3);
          if (words.length < 4) throw bad(path, n, "a group line is 'group LABEL N|all|any MEMBER...'");
          for (const m of members) if (!taken(m)) throw bad(path, n, `'${m}' is no witness or group named above`);
          if (new Set(members).size !== members.length) throw bad(path, n, "a group names each member once");
          const count = { all: members.length, any: 1 }[words[2]];
          if (count === undefined && !(/^[0-9]+$/.test(words[2]) && Number(words[2]) >= 1 && Number(words[2]) <= members.length)) {
            throw bad(path, n, `a group's threshold is all, any or a number from 1 to ${members.length}`);
          }
          policy.groups.set(words[1], [count || Number(words[2]), members]);
        }
      } else if (words[0] === "quorum") {
        if (quorum !== null || words.length !== 2 || !(words[1] === "none" || taken(words[1]))) {
          throw bad(path, n, "a policy has one quorum line naming a witness or group above it, or none");
        }
        quorum = words[1];
      } else {
        throw bad(path, n, `'${words[0]}' is not a statement: log, witness, group or quorum`);
      }
    }
    if (policy === null || quorum === null) throw fail(path, "POLICY_INVALID", "a policy names its log and its quorum (quorum none when no witness is needed)");
    policy.quorum = quorum === "none" ? null : quorum;
    return policy;
  };

  pp.policy_met = function policy_met(policy, cosigned, label = undefined) {
    // Policy.met: whether the witnesses `cosigned` (a Set of labels) meet the quorum, or the group or witness `label`.
    const l = label === undefined ? policy.quorum : label;
    if (l === null) return true;
    if (policy.witnesses.has(l)) return cosigned.has(l);
    const [threshold, members] = policy.groups.get(l);
    return members.filter((m) => pp.policy_met(policy, cosigned, m)).length >= threshold;
  };

  pp.witnessed_words = function witnessed_words(witnessed) {
    if (!witnessed.of) return "cosigned by no witness (the policy names none)";
    return `cosigned by ${witnessed.cosigned.length} of ${witnessed.of} witness${witnessed.of > 1 ? "es" : ""}`;
  };

  pp.check_checkpoint = async function check_checkpoint(note, policy, where) {
    if ((await pp.verify_signature(note, policy.origin, policy.logPublic, where)) === null) {
      throw fail(where, "LOG_SIGNATURE", `the checkpoint carries no signature of the log's key (${policy.origin})`);
    }
    const cosigned = [];
    for (const [label, [name, pub]] of policy.witnesses) {
      if ((await pp.verify_cosignature(note, name, pub, where)) !== null) cosigned.push(label);
    }
    const witnessed = { cosigned, of: policy.witnesses.size, quorum: policy.quorum };
    if (!pp.policy_met(policy, new Set(cosigned))) {
      throw fail(where, "WITNESS_QUORUM", `the checkpoint is ${pp.witnessed_words(witnessed)}; the policy's quorum '${policy.quorum}' is not met: the log may show you a history others do not see`);
    }
    return witnessed;
  };

  // ------------------------------------------------------------------ proof.py and standing.py

  const asciiJson = (value) => JSON.stringify(value).replace(/[\u007f-\uffff]/g,
    (c) => (c === "\u007f" ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));

  pp.leaf_identity = function leaf_identity(origin, release) {
    const p = release.statement.predicate;
    return enc.encode(`permuted-privacy release\norigin ${origin}\ndataset ${asciiJson(p.datasetId)}\n` +
      `version ${p.releaseVersion}\nmanifest sha256 ${release.manifestSha256}\nkey ${release.fingerprint}\n`);
  };

  pp.hash_lines = function hash_lines(lines, what, where) {
    return lines.map((line) => {
      let hashed = new Uint8Array(0);
      try {
        hashed = b64(line, "a hash", where);
      } catch (e) {
        if (!(e instanceof pp.ReleaseError)) throw e;
      }
      if (hashed.length !== HASH_SIZE) throw fail(where, "LOG_MALFORMED", `each ${what} hash is 32 bytes in base64, one per line`);
      return hashed;
    });
  };

  pp.parse_proof = function parse_proof(raw, where) {
    if (raw.length > MAX_NOTE_BYTES) throw fail(where, "LOG_MALFORMED", `holds more than the ${MAX_NOTE_BYTES} bytes a proof may`);
    let cut = -1;
    for (let i = 0; i + 1 < raw.length; i++) {
      if (raw[i] === 10 && raw[i + 1] === 10) {
        cut = i;
        break;
      }
    }
    const head = cut < 0 ? raw : raw.slice(0, cut);
    const lines = head.every((b) => b < 128) ? new TextDecoder().decode(head).split("\n") : [];
    if (cut < 0 || lines.length < 2 || lines[0] !== PROOF_HEADER) {
      throw fail(where, "LOG_MALFORMED", `a proof file starts with ${PROOF_HEADER}, then its index and hashes, a blank line and the checkpoint`);
    }
    let rest = lines.slice(1);
    if (rest.length && rest[0].startsWith("extra ")) rest = rest.slice(1);
    const index = rest.length ? /^index (0|[1-9][0-9]{0,18})$/.exec(rest[0]) : null;
    if (index === null || rest.length - 1 > MAX_PATH) {
      throw fail(where, "LOG_MALFORMED", `the proof's index line is 'index' and a decimal without a leading zero, followed by at most ${MAX_PATH} hashes`);
    }
    return [BigInt(index[1]), pp.hash_lines(rest.slice(1), "inclusion", where), raw.slice(cut + 2)];
  };

  pp.verify_proof = async function verify_proof(raw, release, logPublic, origin, where) {
    const [index, path, noteRaw] = pp.parse_proof(raw, where);
    const note = pp.parse_note(noteRaw, where);
    const checkpoint = pp.parse_checkpoint(note.text, where);
    if (checkpoint.origin !== origin) throw fail(where, "LOG_PROOF_INVALID", `its checkpoint is of the log '${checkpoint.origin}', not '${origin}'`);
    if ((await pp.verify_signature(note, origin, logPublic, where)) === null) {
      throw fail(where, "LOG_SIGNATURE", `its checkpoint carries no signature of the log's key (${origin})`);
    }
    const leaf = await pp.leaf_hash(pp.leaf_identity(origin, release));
    if (!(await pp.verify_inclusion(index, checkpoint.size, leaf, path, checkpoint.root))) {
      throw fail(where, "LOG_PROOF_INVALID", `it does not prove this release at index ${index} of the log's tree of ${checkpoint.size}: a proof of another release, index or tree`);
    }
    return { index, checkpoint, note: noteRaw };
  };

  pp.standing_words = function standing_words(log) {
    // Standing.words, from the JSON of a standing (null: no proof).
    if (log === null) return "no log proof given: this shows who signed the release, not that everyone is shown the same one";
    return `logged at index ${log.index} of ${log.size} in ${log.origin}, ${pp.witnessed_words({ cosigned: log.witnesses.cosigned, of: log.witnesses.of })}`;
  };

  // standing.py's exact: a log's index or size as a JSON number up to 2^53, its decimal text beyond
  const exact = pp.exact = function exact(n) { return n <= 2n ** 53n ? Number(n) : String(n); };

  pp.log_standing = async function log_standing(release, proof, proofName, logPolicy, logPolicyName) {
    // standing.py's Standing as its to_json gives it, with its unwitnessed sentence (null: witnessed); no proof:
    // null and the NO_PROOF sentence. The page keeps no history: those checks are the command line's.
    if (proof === null) return { log: null, unwitnessed: pp.NO_PROOF };
    const policy = await pp.parse_log_policy(logPolicy, logPolicyName);
    const logged = await pp.verify_proof(proof, release, policy.logPublic, policy.origin, proofName);
    const witnessed = await pp.check_checkpoint(pp.parse_note(logged.note, proofName), policy, proofName);
    const words = `logged at index ${logged.index} of ${logged.checkpoint.size} in ${logged.checkpoint.origin}`;
    return {
      log: { origin: logged.checkpoint.origin, index: exact(logged.index), size: exact(logged.checkpoint.size),
        witnesses: { cosigned: [...witnessed.cosigned].sort(), of: witnessed.of, quorum: witnessed.quorum },
        history: [], newer_versions: [] },
      unwitnessed: witnessed.quorum === null ? `This release is ${words}, but your policy asks no witness to cosign: the log could show you a history others do not see.` : null,
    };
  };
})();
