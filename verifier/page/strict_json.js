"use strict";
// Strict JSON (strict_json.py's twin): no duplicate key, no NaN or Infinity, no number that becomes 0 or infinity
// on the way in, and, in a signed document, no integer beyond 2**53, which a browser cannot hold exactly.

(function () {
  const pp = globalThis.permutedPrivacy;
  const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;  // sticky: a number however long, read whole
  const MAX_DEPTH = 500;

  // The members and items written with a fraction or an exponent (1.0, 1e0): JSON's one kind of number reads them
  // as integers here, where Python reads a float; a schema's "integer" is held to how the number was written
  // (manifest_schema.py's _strict_integer), so each container remembers which of its numbers were so written.
  const FLOATS = new WeakMap();
  pp.float_literal = (container, key) => Boolean(container && typeof container === "object" && FLOATS.has(container)
    && FLOATS.get(container).has(key));
  const mark = (container, key) => {
    if (!FLOATS.has(container)) FLOATS.set(container, new Set());
    FLOATS.get(container).add(key);
  };

  // A name the publisher chose (an attribute, a file, a target) read from an object by its own properties alone:
  // "constructor", "toString" or "__proto__" as a name is never a member every object inherits (issue 59, item 1).
  pp.own = (container, key) => (container !== null && container !== undefined
    && Object.prototype.hasOwnProperty.call(container, key) ? container[key] : undefined);
  // A table the page fills by those names: no prototype, so no name reads or sets an inherited member.
  pp.table = () => Object.create(null);

  // Python's str.strip(): its whitespace, which is not JavaScript's trim's (Python strips \x1c-\x1f and \x85,
  // and keeps U+FEFF, a category may hold; issue 59, item 1).
  const PY_EDGES = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
  pp.strip = (text) => String(text).replace(PY_EDGES, "");

  pp.loads_strict = function loads_strict(text, interoperable = false) {
    // The value of a JSON text; throws an Error whose message says why the text is not strict JSON.
    let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    let floated = false;  // the number just read was written with a fraction or an exponent
    const fail = (why) => { throw new Error(why); };
    const space = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
    function number() {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) fail(`position ${i}: expecting value`);
      const literal = m[0];
      i += literal.length;
      floated = /[.eE]/.test(literal);
      const v = Number(literal);
      if (!Number.isFinite(v)) fail(`number ${literal.slice(0, 40)} is out of range`);
      if (v === 0 && /[1-9]/.test(literal.split(/[eE]/)[0])) fail(`number ${literal.slice(0, 40)} is too small (it would become 0)`);
      const beyond = !/[.eE]/.test(literal) && (BigInt(literal) > 2n ** 53n || BigInt(literal) < -(2n ** 53n));
      if (interoperable && beyond) fail(`integer ${literal.slice(0, 40)} is beyond 2**53, which not every JSON reader holds exactly`);
      // an integer a float cannot hold, kept whole (as Python reads it) for its reader to refuse (issue 59, item 1)
      return beyond ? BigInt(literal) : v;
    }
    function string() {
      const start = i;
      i++;
      while (i < text.length && text[i] !== '"') {
        const c = text.charCodeAt(i);
        if (c < 0x20) fail(`position ${i}: control character in a string`);
        if (text[i] === "\\") {
          const e = text[i + 1];
          if (e === "u") { if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(`position ${i}: bad \\u escape`); i += 6; continue; }
          if (!'"\\/bfnrt'.includes(e) || e === undefined) fail(`position ${i}: bad escape`);
          i += 2; continue;
        }
        i++;
      }
      if (i >= text.length) fail(`position ${start}: unterminated string`);
      i++;
      return JSON.parse(text.slice(start, i));
    }
    function value(depth) {
      space();
      const c = text[i];
      // the nesting of arrays and objects, as strict_json.py's _depth counts it
      if ((c === "{" || c === "[") && depth + 1 > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
      if (c === "{") {
        i++;
        const out = {};
        space();
        if (text[i] === "}") { i++; return out; }
        for (;;) {
          space();
          if (text[i] !== '"') fail(`position ${i}: expecting a key`);
          const key = string();
          if (Object.prototype.hasOwnProperty.call(out, key)) fail(`duplicate key ${JSON.stringify(key)}`);
          space();
          if (text[i] !== ":") fail(`position ${i}: expecting ':'`);
          i++;
          floated = false;
          Object.defineProperty(out, key, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
          if (floated && typeof out[key] === "number") mark(out, key);
          space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "}") { i++; return out; }
          fail(`position ${i}: expecting ',' or '}'`);
        }
      }
      if (c === "[") {
        i++;
        const out = [];
        space();
        if (text[i] === "]") { i++; return out; }
        for (;;) {
          floated = false;
          out.push(value(depth + 1));
          if (floated && typeof out[out.length - 1] === "number") mark(out, out.length - 1);
          space();
          if (text[i] === ",") { i++; continue; }
          if (text[i] === "]") { i++; return out; }
          fail(`position ${i}: expecting ',' or ']'`);
        }
      }
      if (c === '"') return string();
      for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
        if (text.startsWith(word, i)) { i += word.length; return v; }
      }
      if (text.startsWith("NaN", i) || text.startsWith("Infinity", i) || text.startsWith("-Infinity", i)) fail("NaN and Infinity are not allowed");
      return number();
    }
    const out = value(0);
    space();
    if (i !== text.length) fail(`position ${i}: extra data after the document`);
    return out;
  };
})();
