#!/usr/bin/env bash
# Verify a permuted-privacy release without the toolkit: bash, jq, OpenSSL 3 and coreutils.
#
#   bash verify-by-hand.sh RELEASE_DIR PUBLIC_KEY.pem [ANNOUNCED_FINGERPRINT]
#
# Run it from any folder. It writes nothing into the release (scratch files go
# to a temporary folder, removed on exit) and stops at the first failure with
# "FAIL: ..." and exit 1. The key must come from the publisher, never from
# the release folder.
set -euo pipefail

release=${1:?usage: verify-by-hand.sh RELEASE_DIR PUBLIC_KEY.pem [ANNOUNCED_FINGERPRINT]}
key=${2:?usage: verify-by-hand.sh RELEASE_DIR PUBLIC_KEY.pem [ANNOUNCED_FINGERPRINT]}
announced=${3:-}
type=application/vnd.in-toto+json
predicate=https://permuted-privacy.dev/release/     # format version 1 or 2 (2 adds datapackage.json)

fail() { echo "FAIL: $*" >&2; exit 1; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
size() { wc -c < "$1" | tr -d ' '; }              # portable: no GNU-only stat -c
hex() { od -An -v -tx1 "$1" | tr -d ' \n'; }
b64d() {                                            # DSSE allows standard and URL-safe base64, padded or not
  local s; s=$(tr -- '-_' '+/'); while [ $(( ${#s} % 4 )) -ne 0 ]; do s="$s="; done
  printf '%s\n' "$s" | openssl base64 -d -A
}

[ -d "$release" ] || fail "$release is not a folder"
[ -f "$key" ] || fail "no key file $key"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# 1. The key: an Ed25519 public key, not a small-order or non-canonical point
#    (under those, OpenSSL accepts forged signatures), with the announced fingerprint.
openssl pkey -pubin -in "$key" -outform DER -out "$scratch/key.der" 2>/dev/null || fail "$key is not a PEM public key"
[ "$(size "$scratch/key.der")" = 44 ] && [ "$(head -c 12 "$scratch/key.der" | od -An -tx1 | tr -d ' \n')" = 302a300506032b6570032100 ] \
  || fail "$key is not an Ed25519 public key"
tail -c 32 "$scratch/key.der" > "$scratch/key.raw"
raw=$(hex "$scratch/key.raw")
case "$raw" in
  0100000000000000000000000000000000000000000000000000000000000000 | 0100000000000000000000000000000000000000000000000000000000000080 | \
  ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f | ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff | \
  0000000000000000000000000000000000000000000000000000000000000000 | 0000000000000000000000000000000000000000000000000000000000000080 | \
  26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05 | 26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85 | \
  c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a | c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa | \
  e[d-f]ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff[7f]f | f?ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff[7f]f)
    fail "$key is a small-order or non-canonical Ed25519 point: forged signatures verify under it" ;;
esac
fingerprint=$(sha256 "$scratch/key.raw")
if [ -n "$announced" ] && [ "$fingerprint" != "$announced" ]; then
  fail "the key's fingerprint $fingerprint is not the announced $announced"
fi

# 2. The envelope: the in-toto payload type, one signature, and manifest.json is exactly the payload.
envelope="$release/manifest.dsse.json"
[ -f "$envelope" ] || fail "no manifest.dsse.json in $release"
[ "$(jq -r .payloadType "$envelope")" = "$type" ] || fail "payloadType is not $type"
[ "$(jq '.signatures | length' "$envelope")" = 1 ] || fail "the envelope must hold exactly one signature"
jq -j .payload "$envelope" | b64d > "$scratch/payload.json"
cmp -s "$scratch/payload.json" "$release/manifest.json" || fail "manifest.json is not the signed payload"

# 3. The signature, Ed25519 over the DSSE pre-authentication encoding.
printf 'DSSEv1 %d %s %d ' "${#type}" "$type" "$(size "$scratch/payload.json")" > "$scratch/pae.bin"
cat "$scratch/payload.json" >> "$scratch/pae.bin"
jq -j '.signatures[0].sig' "$envelope" | b64d > "$scratch/sig.bin"
openssl pkeyutl -verify -pubin -inkey "$key" -rawin -in "$scratch/pae.bin" -sigfile "$scratch/sig.bin" > /dev/null 2>&1 \
  || fail "the signature does not verify under $key"

# 4. The statement, then every file it lists: a plain name, the size, the sha256; and no other file.
jq -e --arg p "$predicate" '._type == "https://in-toto.io/Statement/v1" and (.predicateType | IN($p + "v1", $p + "v2"))' \
  "$scratch/payload.json" > /dev/null || fail "not a permuted-privacy release statement"
printf '%s\n' manifest.json manifest.dsse.json > "$scratch/expected"
while IFS=$'\t' read -r name digest bytes; do
  case "$name" in *[!A-Za-z0-9._-]* | .* | "") fail "unsafe file name in the statement: $name" ;; esac
  file="$release/$name"
  [ -f "$file" ] && [ ! -L "$file" ] || fail "$name is listed but missing"
  [ "$(size "$file")" = "$bytes" ] || fail "$name: size $(size "$file"), listed $bytes"
  [ "$(sha256 "$file")" = "$digest" ] || fail "$name: sha256 differs from the statement's"
  echo "$name" >> "$scratch/expected"
done < <(jq -r '.subject[] | [.name, .digest.sha256, (.annotations.size | tostring)] | @tsv' "$scratch/payload.json")
extra=$(cd "$release" && ls -A | LC_ALL=C sort | LC_ALL=C comm -23 - <(LC_ALL=C sort "$scratch/expected"))
[ -z "$extra" ] || fail "files the statement does not list: $extra"

echo "OK: $release verifies under the key with fingerprint $fingerprint"
jq -r '.predicate | "dataset \(.datasetId), version \(.releaseVersion), created \(.createdAt)"' "$scratch/payload.json"
