"""One contract, proven by a differential fuzz (issue 52, item 2): the command line and the page on the same inputs.

    python -m benchmarks fuzz --cases 10000 [--seed N] [--json]

A few honest releases are made with the project's own publisher (a noise release of paper 003's table, an SD
release with categories, a randomized-response release, a two-step release whose masks her check reads by rerunning
MaskClass, an m-invariant release with counterfeit records whose
counts the manifest signs, another tool's post-randomized output published with its transition matrices, a noise
release appended to a log whose checkpoint two of three witnesses cosigned); each
case takes one, mutates one signed input, signs it again with the real key where the input is signed, and gives the
result to both verifiers:

- the command line, in this process: ``verifier check RELEASE --key K --record R --json --no-random-match``;
- the page's code, as it ships (the script ``verifier page`` writes), in one Node.js process that reads the cases
  one per line: ``checkRecord`` with the same files, key and record.

The mutations: a manifest value changed (a number in another form, another type, a value out of range, a key
added or removed), the manifest's bytes changed and signed as they are (byte-order marks, numbers written 1.0 or
1e0, a repeated key, deep nesting, trailing data), the data package changed, a data cell changed, her record
changed, her verdict policy changed; for the logged release, its proof (lines dropped, repeated or swapped,
numbers in other forms, hashes and signatures flipped, cosignatures of unknown keys, line ends, byte-order marks)
or her log policy changed, given as ``--proof`` and ``--log-policy``. Both must accept or refuse alike, with the
same reason code; an accepted case must give the same level, headline, figures (every number to the bit, but
a logarithm, delta, to 1e-12) and log standing
(but its history: the page keeps no memory of checkpoints). The report counts the cases, the refusals by reason, and every
disagreement with the case that shows it. Issue 59, item 1 added four classes, counted apart: a column renamed, in
the manifest, the data and her record, to a name a JavaScript object answers by inheritance (``__proto__``,
``constructor``, ...); cells and record values around Unicode's spaces and byte-order mark; numbers at 2^53; cells at
the CSV reader's field limit. The test suite runs a fixed-seed slice (tests/test_differential_fuzz.py).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["BOUNDARY_CELLS", "NODE_PAGE", "PROTOTYPE_NAMES", "UNICODE_CELLS", "Fuzz", "case_classes", "main"]

#: names a plain JavaScript object answers by inheritance (issue 59, item 1): a column named so must be read as
#: any other
PROTOTYPE_NAMES = ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__")
#: cells around Unicode's spaces and byte-order mark, which JavaScript's trim strips and Python's strip partly keeps
UNICODE_CELLS = ("\ufeff5", "5\u00a0", "\u2003F", "F\u200b", "\u3000hiv", "\ufeffhiv", "hiv\u2028", "\u00a0",
                 "\u180eF", "F\u2009")
#: numbers at 2^53, where a float stops holding every integer, and cells at the CSV reader's field limit
BOUNDARY_CELLS = ("9007199254740992", "9007199254740993", "-9007199254740993", "9007199254740993.0",
                  "x" * 131_072, "x" * 131_073)

#: the page's script (its path the first argument) loaded in Node.js as the page loads it, without a document:
#: ``pp`` is its namespace
NODE_PAGE = r"""
globalThis.window = globalThis;
globalThis.addEventListener = () => {};
globalThis.document = { addEventListener() {}, getElementById() { return null; }, querySelector() { return null; } };
eval(require("fs").readFileSync(process.argv[2], "utf8"));
const pp = globalThis.permutedPrivacy;
"""

_RUNNER = NODE_PAGE + r"""
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => {
  queue = queue.then(async () => {
    const c = JSON.parse(line);
    const files = {};
    for (const [k, v] of Object.entries(c.files)) files[k] = Uint8Array.from(Buffer.from(v, "base64"));
    let out;
    try {
      // her record read as the page reads a record file: strict JSON, which remembers how each number was written
      const record = pp.loads_strict(c.record);
      const options = { randomMatch: false };
      if (c.policy !== null) Object.assign(options, { policy: Uint8Array.from(Buffer.from(c.policy, "base64")), policyName: "policy.json" });
      if (c.proof !== null) Object.assign(options, { proof: Uint8Array.from(Buffer.from(c.proof, "base64")), proofName: "release.tlog-proof",
        logPolicy: Uint8Array.from(Buffer.from(c.logPolicy, "base64")), logPolicyName: "log.policy" });
      out = await pp.checkRecord({ files, publicKeyPem: c.pem, record, options });
    } catch (e) {
      out = { thrown: String(e && e.stack || e).slice(0, 400) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  });
});
"""

#: the fields of an accepted check both must give alike
COMPARED = ("verdict", "attribute_disclosure", "class_size", "class_rows", "classes", "smallest_class", "distance",
            "matches", "claim_holds", "counterfeits", "log", "contact", "signed_levels", "plain")


#: figures that are logarithms: JavaScript's Math.log and C's log round ln(x) alike only to an ulp or two
LOGARITHMS = ("delta",)


def _same(a: Any, b: Any, key: str = "") -> bool:
    """Every figure to the bit (issue 59, item 1), but a logarithm (:data:`LOGARITHMS`), to 1e-12."""
    if isinstance(b, dict):
        return isinstance(a, dict) and set(a) == set(b) and all(_same(a[k], b[k], k) for k in b)
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(_same(x, y, key) for x, y in zip(a, b))
    if key in LOGARITHMS and isinstance(b, float) and isinstance(a, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= 1e-12 * max(1.0, abs(b))
    return a == b


class Fuzz:
    """The honest releases, the page's script in a Node.js process, and one case at a time."""

    def __init__(self, folder: Path, seed: int = 0):
        from publisher.cli import main as publisher
        from verifier.page import page_html

        self.folder, self.rng = folder, random.Random(seed)
        self.renamed: tuple[str, str] | None = None  # the column a "name" mutation renamed, and its new name
        self.publisher = publisher
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert publisher(["keygen", "--out", str(folder / "keys"), "--unencrypted"]) == 0
            self.bases = self._releases()
        script = re.search(r"<script>(.*)</script>", page_html(), re.S).group(1)
        (folder / "page.js").write_text(script)
        (folder / "runner.js").write_text(_RUNNER)
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("the differential fuzz runs the page's code in Node.js, which is not installed")
        self.node = subprocess.Popen([node, str(folder / "runner.js"), str(folder / "page.js")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pem = (folder / "keys" / "public.pem").read_text()

    def close(self) -> None:
        self.node.stdin.close()
        self.node.wait(timeout=30)

    def _releases(self) -> list[tuple[Path, list[dict]]]:
        from importlib import resources

        paper = Path(str(resources.files("verifier") / "data" / "paper"))
        key = ["--key", str(self.folder / "keys" / "private.pem"), "--samples", "50", "--seed", "1",
               "--allow-degenerate"]
        out = []
        noise = self.folder / "noise"
        assert self.publisher(["release", "--input", str(paper / "original.csv"), "--method", "additive_noise",
                               "--param", "relative_sd=0.5", "--then", "reverse_mapping", *key, "--dataset-id",
                               "noise", "--out", str(noise)]) == 0
        header, *rows = (paper / "original.csv").read_text().splitlines()
        out.append((noise, [dict(zip(header.split(","), map(float, r.split(",")))) for r in rows[:4]]))
        (self.folder / "ward.csv").write_text("age,sex,disease\n" + "".join(
            f"{20 + 3 * i},{'FM'[i % 2]},{('cold', 'flu', 'hiv')[i % 3]}\n" for i in range(15)))
        (self.folder / "ward.json").write_text(json.dumps({"attributes": [
            {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
            {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
            {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cold", "flu", "hiv"]}]}))
        people = [{"age": 20 + 3 * i, "sex": "FM"[i % 2], "disease": ("cold", "flu", "hiv")[i % 3]} for i in range(4)]
        for name, method in (("sd", ["sd_k_anonymity", "--param", "k=3"]),
                             ("rr", ["randomized_response", "--param", "l=3", "--param", "scope=both"]),
                             ("two-step", ["multi_sensitive_generalization", "--param", "alpha_qi=0.5", "--param",
                                           "alpha_sa=0.4"])):
            assert self.publisher(["release", "--input", str(self.folder / "ward.csv"), "--schema",
                                   str(self.folder / "ward.json"), "--method", *method, *key, "--dataset-id", name,
                                   "--contact", "privacy@ward.example", "--out", str(self.folder / name)]) == 0
            out.append((self.folder / name, people))
        # an m-invariant first release, m-eligible (a first release that is not is refused since issue 58, so its
        # counterfeits now arise only in re-publications)
        (self.folder / "skew.csv").write_text("age,sex,disease\n" + "".join(
            f"{20 + 3 * i},{'FM'[i % 2]},{('flu', 'flu', 'cold', 'hiv')[i % 4]}\n" for i in range(12)))
        assert self.publisher(["release", "--input", str(self.folder / "skew.csv"), "--schema",
                               str(self.folder / "ward.json"), "--method", "m_invariant", "--param", "m=2", *key,
                               "--dataset-id", "minv", "--out", str(self.folder / "minv")]) == 0
        out.append((self.folder / "minv", [{"age": 20 + 3 * i, "sex": "FM"[i % 2],
                                            "disease": ("flu", "flu", "cold", "hiv")[i % 4]} for i in range(4)]))
        out.append(self._post_randomized(key))
        out.append((self._logged(paper, key), out[0][1]))
        return out

    def _post_randomized(self, key: list[str]) -> tuple[Path, list[dict]]:
        """Another tool's post-randomized output of the ward in age bands (issue 61): sex and disease moved by
        transition matrices, drawn here with the fuzz's own generator, published with --transition-matrix."""
        bands = ["20-29", "30-39", "40-49", "50-59", "60-69"]
        schema = {"attributes": [
            {"name": "age", "kind": "nominal", "role": "quasi_identifier", "categories": bands},
            {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
            {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cold", "flu", "hiv"]}]}
        matrices = {"sex": [[0.9, 0.1], [0.3, 0.7]], "disease": [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]}
        people = [{"age": bands[i % 5], "sex": "FM"[i % 2], "disease": ("cold", "flu", "hiv")[i % 3]}
                  for i in range(15)]
        draw = random.Random(61)
        moved = [{**p, **{c: draw.choices(cats, weights=matrices[c][cats.index(p[c])])[0]
                          for c, cats in (("sex", ["F", "M"]), ("disease", ["cold", "flu", "hiv"]))}} for p in people]
        for name, rows in (("input", people), ("output", moved)):
            (self.folder / f"pram-{name}.csv").write_text(
                "age,sex,disease\n" + "".join(f"{r['age']},{r['sex']},{r['disease']}\n" for r in rows))
        (self.folder / "pram.json").write_text(json.dumps(schema))
        given = []
        for column, rows in matrices.items():
            cats = next(a["categories"] for a in schema["attributes"] if a["name"] == column)
            path = self.folder / f"pram-{column}.csv"
            path.write_text(",".join(['""', *cats]) + "\n" + "".join(
                ",".join([c, *map(repr, row)]) + "\n" for c, row in zip(cats, rows)))
            given += ["--transition-matrix", f"{column}={path}"]
        assert self.publisher(["release", "--input", str(self.folder / "pram-input.csv"), "--schema",
                               str(self.folder / "pram.json"), "--anonymized", str(self.folder / "pram-output.csv"),
                               "--produced-by", "a PRAM tool 1.0", *given, *key[:-1], "--dataset-id", "pram",
                               "--out", str(self.folder / "pram")]) == 0
        return self.folder / "pram", people[:4]

    def _logged(self, paper: Path, key: list[str]) -> Path:
        """A noise release appended (second of three) to a log whose checkpoint two of three witnesses cosigned, its proof refreshed,
        and the log policy that asks two of the three (:attr:`proof`, :attr:`log_policy`)."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        from verifier.cli import main as verifier
        from verifier.transparency.note import COSIGNATURE_TYPE, vkey

        def raw(k: Ed25519PrivateKey) -> bytes:
            return k.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

        def pem(k: Ed25519PrivateKey, path: Path) -> str:
            path.write_bytes(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
            path.chmod(0o600)
            return str(path)

        origin, log = "stats.example/releases", self.folder / "log"
        log_key = Ed25519PrivateKey.generate()
        assert self.publisher(["log", "init", str(log), "--origin", origin, "--key",
                               pem(log_key, self.folder / "log.pem")]) == 0
        (self.folder / "log.vkey").write_text(vkey(origin, 1, raw(log_key)) + "\n")
        release = self.folder / "logged"  # the second of three entries, so that its proof has hashes
        for version in (1, 2, 3):
            assert self.publisher(["release", "--input", str(paper / "original.csv"), "--method", "additive_noise",
                                   "--param", "relative_sd=0.5", "--then", "reverse_mapping", *key, "--dataset-id",
                                   "logged", "--release-version", str(version), "--log", str(log), "--log-key",
                                   str(self.folder / "log.pem"), "--out",
                                   str(release if version == 2 else self.folder / f"logged-{version}")]) == 0
        lines = [f"log {vkey(origin, 1, raw(log_key))}"]
        for name in ("w1", "w2", "w3"):
            witness = Ed25519PrivateKey.generate()
            where = pem(witness, self.folder / f"{name}.pem")
            lines.append(f"witness {name} {vkey(f'{name}.example/witness', COSIGNATURE_TYPE, raw(witness))}")
            if name != "w3":
                assert verifier(["witness", "cosign", str(log), "--state", str(self.folder / f"{name}-state"),
                                 "--key", where, "--name", f"{name}.example/witness", "--log-key",
                                 str(self.folder / "log.vkey")]) == 0
        proof = self.folder / "logged.tlog-proof"
        assert self.publisher(["log", "refresh", str(log), str(proof)]) == 0
        self.proof = proof.read_bytes()
        self.log_policy = ("\n".join([*lines, "group two 2 w1 w2 w3", "quorum two"]) + "\n").encode()
        return release

    # ------------------------------------------------------------------ mutations

    def _resign(self, release: Path, manifest: bytes) -> None:
        from publisher.keys import load_private_key
        from verifier.releases.verification import ENVELOPE, MANIFEST, PAYLOAD_TYPE, dumps_manifest, key_id, pae

        key = load_private_key(self.folder / "keys" / "private.pem", None)
        (release / MANIFEST).write_bytes(manifest)
        (release / ENVELOPE).write_bytes(dumps_manifest({
            "payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(manifest).decode(),
            "signatures": [{"keyid": key_id(key.public_raw),
                            "sig": base64.b64encode(key.sign(pae(PAYLOAD_TYPE, manifest))).decode()}]}))

    def _relist(self, release: Path, statement: dict) -> dict:
        import hashlib

        for entry in statement["subject"]:
            listed = (release / entry["name"]).read_bytes()
            entry["digest"]["sha256"] = hashlib.sha256(listed).hexdigest()
            entry["annotations"]["size"] = len(listed)
        return statement

    def _values(self) -> list[Any]:
        return [0, 1, -1, 1.0, 0.5, 2**53 + 1, 1e300, "", "x", "ebola", None, True, False, [], {}, [1], {"a": 1},
                "\u202e", "=1+1", 3, 20, 20.0]

    def _leaves(self, node: Any, path: tuple = ()) -> list[tuple]:
        if isinstance(node, dict):
            return [path] + [p for k, v in node.items() for p in self._leaves(v, (*path, k))]
        if isinstance(node, list):
            return [path] + [p for i, v in enumerate(node) for p in self._leaves(v, (*path, i))]
        return [path]

    def _set(self, node: Any, path: tuple, value: Any, drop: bool = False) -> None:
        for key in path[:-1]:
            node = node[key]
        if drop and isinstance(node, dict):
            node.pop(path[-1], None)
        elif isinstance(node, dict) and self.rng.random() < 0.1:
            node[f"{path[-1]}_extra"] = value
        else:
            node[path[-1]] = value

    def _mutate(self, release: Path) -> str:
        from verifier.releases.verification import MANIFEST, dumps_manifest

        rng = self.rng
        kind = rng.choice(["value", "value", "value", "bytes", "datapackage", "cell", "name"])
        statement = json.loads((release / MANIFEST).read_bytes())
        if kind == "name" and '"sex"' not in json.dumps(statement["predicate"]["schema"]):
            kind = "cell"  # the paper's tables have no nominal quasi-identifier to name
        if kind == "name":  # issue 59, item 1: a column named as JavaScript's own members, everywhere it is named
            new = rng.choice(PROTOTYPE_NAMES)
            text = (release / MANIFEST).read_text().replace('"sex"', json.dumps(new))
            package = (release / "datapackage.json").read_text().replace('"sex"', json.dumps(new))
            data = release / "release.csv"
            header, _, rest = data.read_text().partition("\n")
            data.write_text(",".join(new if c == "sex" else c for c in header.split(",")) + "\n" + rest)
            package = json.loads(package)
            import hashlib

            raw = data.read_bytes()
            package["resources"][0].update(hash="sha256:" + hashlib.sha256(raw).hexdigest(), bytes=len(raw))
            (release / "datapackage.json").write_bytes(dumps_manifest(package))
            self._resign(release, dumps_manifest(self._relist(release, json.loads(text))))
            self.renamed = ("sex", new)
            return f"name sex -> {new}"
        if kind == "value":
            paths = [p for p in self._leaves(statement["predicate"]) if p]
            path = rng.choice(paths)
            current = statement["predicate"]
            for key in path:
                current = current[key]
            value = (float(current) if isinstance(current, int) and not isinstance(current, bool) and rng.random() < 0.5
                     else rng.choice(self._values()))
            self._set(statement["predicate"], path, value, drop=rng.random() < 0.1)
            self._resign(release, dumps_manifest(statement))
            return f"value {'.'.join(map(str, path))} = {json.dumps(value)[:40]}"
        if kind == "bytes":
            text = (release / MANIFEST).read_text()
            how = rng.choice(["bom", "two boms", "1.0", "1e0", "repeated key", "deep", "trailing", "spaces"])
            if how == "bom":
                text = "\ufeff" + text
            elif how == "two boms":
                text = "\ufeff\ufeff" + text
            elif how in ("1.0", "1e0"):
                numbers = list(re.finditer(r"(?<=[:\[,] )(\d+)(?=[,}\]\n])", text))
                if numbers:
                    m = rng.choice(numbers)
                    text = text[:m.start()] + m.group(1) + (".0" if how == "1.0" else "e0") + text[m.end():]
            elif how == "repeated key":
                text = text.replace('"datasetId": ', '"datasetId": "x", "datasetId": ', 1)
            elif how == "deep":
                depth = rng.choice([100, 499, 500, 501, 700])
                text = text.replace('"predicate": {', '"predicate": {"deep": ' + "[" * depth + "]" * depth + ", ", 1)
            elif how == "trailing":
                text = text + rng.choice(["x", "{}", "\n\n", " "])
            else:
                text = text.replace(": ", ":  ")
            self._resign(release, text.encode("utf-8"))
            return f"bytes {how}"
        if kind == "datapackage":
            package = json.loads((release / "datapackage.json").read_bytes())
            how = rng.choice(["extra", "title", "version", "drop", "bytes"])
            if how == "extra":
                package["extra"] = 1
            elif how == "title":
                package["title"] = package["title"] + "!"
            elif how == "version":
                package["version"] = int(package["version"]) if rng.random() < 0.5 else package["version"] + ".0"
            elif how == "drop":
                package.pop(rng.choice(sorted(package)))
            else:
                package["resources"][0]["bytes"] = float(package["resources"][0]["bytes"])
            (release / "datapackage.json").write_bytes(dumps_manifest(package))
            self._resign(release, dumps_manifest(self._relist(release, statement)))
            return f"datapackage {how}"
        data = release / "release.csv"
        lines = data.read_text().split("\n")
        row = rng.randrange(1, len(lines) - 1)
        cells = lines[row].split(",")
        j = rng.randrange(len(cells))
        new = rng.choice(["ebola", "", "NA", "=1+1", " 5", "5.0", "0x10", "1e400", "[1,2]", "{flu,hiv}", "*", "-0",
                          "1" * 400, "[30,20]", "F", "hiv", *UNICODE_CELLS, *BOUNDARY_CELLS])
        cells[j] = new
        lines[row] = ",".join(cells)
        data.write_text("\n".join(lines))
        package = json.loads((release / "datapackage.json").read_bytes())
        import hashlib

        raw = data.read_bytes()
        package["resources"][0].update(hash="sha256:" + hashlib.sha256(raw).hexdigest(), bytes=len(raw))
        (release / "datapackage.json").write_bytes(dumps_manifest(package))
        self._resign(release, dumps_manifest(self._relist(release, statement)))
        return f"cell row {row} column {j} = {new[:20]!r}"

    def _record(self, people: list[dict]) -> tuple[dict, str]:
        record = dict(self.rng.choice(people))
        if self.renamed is not None and self.renamed[0] in record:  # her record names the column as the release does
            record[self.renamed[1]] = record.pop(self.renamed[0])
        if self.rng.random() < 0.2:
            name = self.rng.choice(sorted(record))
            record[name] = self.rng.choice(["ebola", "", 5, 5.5, "5", None, "F", 1e300, *UNICODE_CELLS, 2 ** 53,
                                            2 ** 53 + 1, -(2 ** 53 + 1), str(2 ** 53 + 1), "x" * 200_000])
            return record, f"record {name} = {json.dumps(record[name])[:40]}"
        return record, ""

    def _policy(self) -> tuple[bytes | None, str]:
        """Her verdict policy: the verifier's default (None), or a policy file changed as a dishonest or careless
        one would be."""
        from importlib import resources

        if self.rng.random() >= 0.15:
            return None, ""
        text = resources.files("verifier.releases").joinpath("verdict-policy.json").read_text()
        doc = json.loads(text)
        how = self.rng.choice(["own name", "default's name", "threshold 1.0", "threshold text", "version 1.0",
                               "version 0", "repeated id", "unknown figure", "extra key", "bom", "strict", "empty"])
        if how == "own name":
            doc["name"] = "an office's policy"
        elif how == "default's name":
            doc["rules"] = doc["rules"][:1]
        elif how == "threshold 1.0":
            return json.dumps(doc).replace('"below": 5', '"below": 5.0').encode(), f"policy {how}"
        elif how == "threshold text":
            doc["rules"][0]["at_least"] = "0.99"
        elif how == "version 1.0":
            return json.dumps({**doc, "name": "mine"}).replace('"version": 1', '"version": 1.0').encode(), f"policy {how}"
        elif how == "version 0":
            doc["version"] = 0
        elif how == "repeated id":
            doc["rules"].append(dict(doc["rules"][0]))
        elif how == "unknown figure":
            doc["rules"][0]["figure"] = "luck"
        elif how == "extra key":
            doc["extra"] = 1
        elif how == "bom":
            return ("\ufeff" + json.dumps({**doc, "name": "mine"})).encode(), f"policy {how}"
        elif how == "strict":
            doc = {"name": "strict", "version": 2, "rules": [
                {"id": "groups", "figure": "class_size", "below": 50, "level": "at_risk"},
                {"id": "gain", "figure": "delta", "above": 0.1, "level": "exposed"}]}
        else:
            doc["rules"] = []
        return json.dumps(doc).encode(), f"policy {how}"

    def _log_inputs(self) -> tuple[bytes, bytes, str]:
        """The logged release's proof and log policy, one of them changed (or neither): lines dropped, repeated
        or swapped, numbers in other forms, hashes and signatures flipped, cosignatures of unknown or repeated
        keys, encodings, byte-order marks, line ends; the policy's quorum, groups and keys."""
        rng = self.rng
        proof, policy = self.proof, self.log_policy
        roll = rng.random()
        if roll < 0.15:
            return proof, policy, "log honest"
        if roll < 0.75:
            text, target = proof.decode(), "proof"
        else:
            text, target = policy.decode(), "log policy"
        lines = text.split("\n")
        how = rng.choice(["drop", "repeat", "swap", "number", "flip", "foreign", "crlf", "bom", "trailing", "space",
                          "blank", "unicode", "truncate"])
        i = rng.randrange(len(lines) - 1)
        if how == "drop":
            del lines[i]
        elif how == "repeat":
            lines.insert(i, lines[i])
        elif how == "swap":
            j = rng.randrange(len(lines) - 1)
            lines[i], lines[j] = lines[j], lines[i]
        elif how == "number":
            numbers = [(k, m) for k, line in enumerate(lines) for m in re.finditer(r"(?<![A-Za-z0-9+/=])\d+\b", line)]
            if numbers:
                k, m = rng.choice(numbers)
                value = rng.choice(["0" + m.group(), m.group() + ".0", m.group() + "e0", str(2**53 + 1), str(2**64),
                                    "-" + m.group(), "+" + m.group(), "1" * 30, "\u0661", str(int(m.group()) + 1),
                                    "0", "3"])
                lines[k] = lines[k][:m.start()] + value + lines[k][m.end():]
        elif how == "flip":
            words = [(k, m) for k, line in enumerate(lines) for m in re.finditer(r"[A-Za-z0-9+/]{20,}={0,2}", line)]
            if words:
                k, m = rng.choice(words)
                at = m.start() + rng.randrange(len(m.group().rstrip("=")))
                c = lines[k][at]
                lines[k] = lines[k][:at] + ("A" if c != "A" else "B") + lines[k][at + 1:]
        elif how == "foreign":
            blob = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.choice([72, 76, 64, 4]))))
            name = rng.choice(["w1.example/witness", "w9.example/witness", "stats.example/releases"])
            lines.insert(len(lines) - 1, f"\u2014 {name} {blob.decode()}")
        elif how == "crlf":
            return self._log_pair(target, "\r\n".join(lines).encode(), how)
        elif how == "bom":
            return self._log_pair(target, ("\ufeff" + "\n".join(lines)).encode(), how)
        elif how == "trailing":
            lines[i] += rng.choice([" ", "\t", "x"])
        elif how == "space":
            lines[i] = lines[i].replace(" ", "  ", 1)
        elif how == "blank":
            lines.insert(i, "")
        elif how == "unicode":
            lines[i] = lines[i].replace("e", "\u0435", 1)
        else:
            return self._log_pair(target, "\n".join(lines).encode()[:rng.randrange(1, len(text))], how)
        return self._log_pair(target, "\n".join(lines).encode(), f"{how} line {i}")

    def _log_pair(self, target: str, changed: bytes, how: str) -> tuple[bytes, bytes, str]:
        if target == "proof":
            return changed, self.log_policy, f"proof {how}"
        return self.proof, changed, f"log policy {how}"

    # ------------------------------------------------------------------ one case

    def case(self, number: int) -> dict[str, Any]:
        from verifier.cli import main as verifier

        base, people = self.rng.choice(self.bases)
        release = self.folder / f"case-{number % 4}"
        shutil.rmtree(release, ignore_errors=True)
        shutil.copytree(base, release)
        logged = base.name == "logged" and self.rng.random() < 0.9
        self.renamed = None
        what = self._mutate(release) if self.rng.random() < (0.15 if logged else 0.9) else "honest"
        record, said = self._record(people)
        policy, chosen = self._policy()
        proof = log_policy = None
        if logged:
            proof, log_policy, told = self._log_inputs()
            chosen = f"{chosen}; {told}" if chosen else told
            (self.folder / "release.tlog-proof").write_bytes(proof)
            (self.folder / "log.policy").write_bytes(log_policy)
        what = f"{base.name}: {what}" + "".join(f"; {x}" for x in (said, chosen) if x)
        (self.folder / "record.json").write_text(json.dumps(record))
        extra = []
        if policy is not None:
            (self.folder / "policy.json").write_bytes(policy)
            extra = ["--policy", str(self.folder / "policy.json")]
        if proof is not None:
            extra += ["--proof", str(self.folder / "release.tlog-proof"), "--log-policy", str(self.folder / "log.policy")]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = verifier(["check", str(release), "--key", str(self.folder / "keys" / "public.pem"), "--record",
                             str(self.folder / "record.json"), "--json", "--no-random-match", *extra])
        try:
            cli = json.loads(out.getvalue())
        except ValueError:
            cli = {"reason": (err.getvalue().split(": ")[2] if err.getvalue().count(": ") >= 2 else "?")}
        files = {p.name: base64.b64encode(p.read_bytes()).decode() for p in release.iterdir()}
        self.node.stdin.write(json.dumps({"files": files, "pem": self.pem,
                                          "record": (self.folder / "record.json").read_text(),
                                          "policy": None if policy is None else base64.b64encode(policy).decode(),
                                          "proof": None if proof is None else base64.b64encode(proof).decode(),
                                          "logPolicy": None if proof is None else base64.b64encode(log_policy).decode()})
                              + "\n")
        self.node.stdin.flush()
        page = json.loads(self.node.stdout.readline())
        return {"case": number, "what": what, "code": code, "cli": cli, "page": page}


def verdict_of(result: dict[str, Any]) -> tuple[str, str | None]:
    """Whether both agree (``agree``, ``accepted`` or the reason), and why not."""
    cli, page = result["cli"], result["page"]
    if "thrown" in page:
        return "disagree", f"the page threw: {page['thrown'][:200]}"
    cli_reason, page_reason = cli.get("reason"), page.get("reason")
    if cli_reason or page_reason:
        if cli_reason != page_reason:
            return "disagree", f"reasons differ: command line {cli_reason}, page {page_reason}"
        return cli_reason, None
    for field in COMPARED:
        theirs, ours = page.get(field), cli.get(field)
        if field == "log" and isinstance(ours, dict) and isinstance(theirs, dict):
            # the page keeps no memory of checkpoints (docs/subject.md): the history is the command line's alone
            theirs, ours = ({k: v for k, v in x.items() if k != "history"} for x in (theirs, ours))
        if field in cli and not _same(theirs, ours):
            return "disagree", f"{field} differs"
    return "accepted", None


def case_classes(what: str) -> list[str]:
    """The classes of issue 59, item 1 a case belongs to, by what it changed: a column named as JavaScript's own
    members (``name``), a Unicode space or byte-order mark (``unicode``), a number at 2^53 (``2^53``), a cell at the
    CSV reader's field limit (``field size``); and any case of the post-randomized release (``post-randomized``,
    issue 61), whose transition matrices the manifest's values include."""
    found = ["post-randomized"] if what.startswith("pram: ") else []
    if "name sex -> " in what:
        found.append("name")
    if any(json.dumps(c)[1:-1][:12] in what for c in UNICODE_CELLS):
        found.append("unicode")
    if "900719925474099" in what:
        found.append("2^53")
    if "x" * 20 in what:
        found.append("field size")
    return found


def run(cases: int, seed: int = 0) -> dict[str, Any]:
    """Run ``cases`` cases from ``seed``; the report of the module's text, with how many cases of each class of
    :func:`case_classes` were accepted and refused alike (``classes``)."""
    with tempfile.TemporaryDirectory() as folder:
        fuzz = Fuzz(Path(folder), seed)
        outcomes: dict[str, int] = {}
        classes: dict[str, int] = {}
        disagreements = []
        try:
            for number in range(cases):
                result = fuzz.case(number)
                outcome, why = verdict_of(result)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                for name in case_classes(result["what"]):
                    key = f"{name}: {'accepted' if outcome == 'accepted' else 'refused' if why is None else 'disagree'}"
                    classes[key] = classes.get(key, 0) + 1
                if why is not None:
                    disagreements.append({"case": number, "what": result["what"], "why": why,
                                          "cli": str(result["cli"].get("message") or result["cli"].get("reason"))[:200],
                                          "page": str(result["page"].get("message") or result["page"].get("reason")
                                                      or result["page"].get("thrown"))[:200]})
        finally:
            fuzz.close()
    return {"cases": cases, "seed": seed, "outcomes": dict(sorted(outcomes.items())),
            "classes": dict(sorted(classes.items())), "disagreements": len(disagreements),
            "examples": disagreements[:50]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("PERMUTED_PRIVACY_STATE", tempfile.mkdtemp(prefix="fuzz-state-"))
    report = run(args.cases, args.seed)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{report['cases']} cases (seed {report['seed']}): {report['disagreements']} disagreements")
        for outcome, count in report["outcomes"].items():
            print(f"  {outcome}: {count}")
        for d in report["examples"]:
            print(f"  case {d['case']}: {d['what']}: {d['why']} (command line: {d['cli']}; page: {d['page']})")
    return 0 if report["disagreements"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
