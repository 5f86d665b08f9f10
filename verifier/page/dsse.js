"use strict";
// DSSE envelopes (verifier/releases/verification.py's twins): strict base64 and the pre-authentication encoding.

const pp = (globalThis.permutedPrivacy = globalThis.permutedPrivacy || {});

class ReleaseError extends Error {
  // A failed verification: the CLI's reason code, the file it names, and its sentence.
  constructor(reason, path, message) {
    super(message);
    this.reason = reason;
    this.path = path;
  }
}
pp.ReleaseError = ReleaseError;

pp.b64decode = function b64decode(text, what, path, reason) {
  // Standard or URL-safe base64, one alphabet per string, padding optional but right when present (_b64).
  if (typeof text !== "string") throw new ReleaseError(reason, path, `${what} is not a base64 string`);
  let body = text.replace(/=+$/, "");
  const padding = text.length - body.length;
  if (/[-_]/.test(body)) {
    if (/[+/]/.test(body)) throw new ReleaseError(reason, path, `${what} mixes the standard and URL-safe base64 alphabets`);
    body = body.replace(/-/g, "+").replace(/_/g, "/");
  }
  if (body.length % 4 === 1 || (padding && (text.length % 4 || padding > 2)) || !/^[A-Za-z0-9+/]*$/.test(body)) {
    throw new ReleaseError(reason, path, `${what} is not valid base64`);
  }
  const binary = atob(body + "=".repeat((4 - (body.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
};

pp.pae = function pae(payloadType, payload) {
  // DSSEv1 <len> <type> <len> <payload>, lengths in bytes.
  const enc = new TextEncoder();
  const type = enc.encode(payloadType);
  const head = enc.encode(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
};

pp.hex = function hex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
};

pp.sha256 = async function sha256(bytes) {
  return pp.hex(await crypto.subtle.digest("SHA-256", bytes));
};
