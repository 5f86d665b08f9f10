"use strict";
// Block ranks with ties and a subject's permutation distance (verifier/core/ranks.py, permutation.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;
  const { ReleaseError } = pp;

  const FIELD_LIMIT = 131072;  // Python's csv.field_size_limit(), which the command line's reader keeps

  pp.csv_rows = function csv_rows(bytes, path, most = Infinity) {
    // A CSV file's records as Python's csv module reads them (RFC 4180: quoted cells may hold commas and line
    // breaks, quotes doubled), the first `most` of them; a blank line is an empty record.
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (e) {
      throw new ReleaseError("DATA_MALFORMED", path, "is not UTF-8 text");
    }
    const rows = [];
    let row = [], cell = "", quoted = false, wasQuoted = false, i = 0, line = 1;
    const push = () => {  // Python's csv module refuses a field longer than its limit, as the command line reads it
      if (cell.length > FIELD_LIMIT) throw new ReleaseError("DATA_MALFORMED", path, `line ${line + 1}: field larger than field limit (${FIELD_LIMIT})`);
      row.push(cell);
    };
    const endRow = () => {
      if (row.length || cell !== "" || wasQuoted) push();
      rows.push(row); row = []; cell = ""; wasQuoted = false;
    };
    while (i < text.length && rows.length < most) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
        if (c === '"') { quoted = false; i += 1; continue; }
        if (c === "\n") line += 1;
        cell += c; i += 1; continue;
      }
      if (c === '"' && cell === "") { quoted = true; wasQuoted = true; i += 1; continue; }
      if (c === ",") { push(); cell = ""; wasQuoted = false; i += 1; continue; }
      if (c === "\n" || c === "\r") {
        endRow();
        i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
        line += 1;
        continue;
      }
      cell += c; i += 1;
    }
    if (rows.length >= most) return rows;
    if (quoted) throw new ReleaseError("DATA_MALFORMED", path, "a quoted cell is not closed");
    if (cell !== "" || row.length || wasQuoted) endRow();
    return rows;
  };

  pp.read_csv = function read_csv(bytes, path) {
    // The rows of a release's CSV file, header first, by the table reader's rules (tables.py): blank lines only
    // at the end, at least one row, every row as wide as the header.
    const rows = pp.csv_rows(bytes, path);
    while (rows.length && rows[rows.length - 1].length === 0) rows.pop();
    if (rows.length < 2) throw new ReleaseError("DATA_MALFORMED", path, "the table has no rows");
    const width = rows[0].length;
    const bad = rows.findIndex((r) => r.length !== width);
    if (bad > 0) throw new ReleaseError("DATA_MALFORMED", path, `row ${bad} ${rows[bad].length ? `has ${rows[bad].length} cells, the header has ${width}` : "is blank"}`);
    return rows;
  };

  // the strict decimal rule of docs/input-format.md (tables.py's _NUMBER), shared with her record's parse_number
  pp.DECIMAL = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
  const MAX_MAGNITUDE = 1e150, MIN_NORMAL = 2.2250738585072014e-308;

  pp.numeric_cell = function numeric_cell(cell) {
    // One numeric cell of a release by the table reader's rule (tables.py's decimal_cell, _numeric_from_text): a
    // plain ASCII decimal (no space, hexadecimal or inf), finite, not a nonzero value that becomes 0, at most 1e150
    // and not subnormal, and an integer a 64-bit float holds exactly. [value, null] or [null, why].
    if (!pp.DECIMAL.test(cell)) return [null, "not a decimal number"];
    const v = Number(cell);
    if (!Number.isFinite(v)) return [null, "the value is too large for a 64-bit float"];
    if (v === 0 && /[1-9]/.test(cell.split(/[eE]/)[0])) return [null, "the value is too small for a 64-bit float (it would become 0)"];
    if (Math.abs(v) > MAX_MAGNITUDE) return [null, "the value is beyond 1e150 in absolute value"];
    if (v !== 0 && Math.abs(v) < MIN_NORMAL) return [null, "the value is too small for a 64-bit float (a subnormal number)"];
    if (cell.length > 15 && !/[.eE]/.test(cell) && BigInt(cell.replace(/^\+/, "")) !== BigInt(v)) {
      return [null, "the value cannot be held exactly by a 64-bit float"];
    }
    return [v, null];
  };

  pp.rank_keys = function rank_keys(rows, schema, path) {
    // (n, m) rank keys: a numeric cell's value, a categorical cell's position in its category list.
    const header = rows[0];
    const where = schema.attributes.map((a) => header.indexOf(a.name));
    if (where.some((k) => k < 0)) throw new ReleaseError("DATA_MALFORMED", path, "a column of the schema is not in the data");
    return rows.slice(1).map((r, i) => schema.attributes.map((a, j) => {
      const cell = r[where[j]];
      if (a.kind === "numeric") {
        const [v, why] = pp.numeric_cell(cell);
        if (why !== null) throw new ReleaseError("DATA_MALFORMED", path, `column ${JSON.stringify(a.name)}, row ${i + 1}: ${why}`);
        return v;
      }
      const k = a.categories.indexOf(cell);
      if (k < 0) throw new ReleaseError("DATA_MALFORMED", path, `column ${JSON.stringify(a.name)}, row ${i + 1}: not one of its categories`);
      return k;
    }));
  };

  pp.from_sorted = function from_sorted(sorted) {
    // A sorted column's distinct values and each one's 1-based block of positions (ties share a block).
    const unique = [], lo = [], hi = [];
    for (let i = 0; i < sorted.length; i++) {
      const v = sorted[i] + 0.0;
      if (i === 0 || v !== unique[unique.length - 1]) {
        if (i) hi.push(i);
        unique.push(v);
        lo.push(i + 1);
      }
    }
    hi.push(sorted.length);
    return { sorted, unique, lo, hi };
  };

  function search_left(u, x) {
    let a = 0, b = u.length;
    while (a < b) { const mid = (a + b) >> 1; if (u[mid] < x) a = mid + 1; else b = mid; }
    return a;
  }

  pp.blocks_of = function blocks_of(col, value) {
    const k = search_left(col.unique, value);
    return [col.lo[k], col.hi[k]];
  };

  pp.query = function query(col, x) {
    // The block of the column value closest to x; equally close to two, the hull of both blocks.
    const u = col.unique;
    const k = search_left(u, x);
    const left = Math.min(Math.max(k - 1, 0), u.length - 1);
    const right = Math.min(Math.max(k, 0), u.length - 1);
    const dl = Math.abs(x - u[left]), dr = Math.abs(u[right] - x);
    return [dl <= dr ? col.lo[left] : col.lo[right], dr <= dl ? col.hi[right] : col.hi[left]];
  };

  pp.compute_record_distance = function compute_record_distance(keys, record) {
    // Her permutation distance: the least, over released records, of the largest block gap over attributes;
    // the records at that distance (0-based, ascending) and their deviations (paper 003, Algorithm 2).
    const m = record.length;
    const columns = [];
    for (let j = 0; j < m; j++) columns.push(pp.from_sorted(keys.map((r) => r[j]).sort((a, b) => a - b)));
    const q = columns.map((col, j) => pp.query(col, record[j]));
    const blocks = keys.map((r) => r.map((v, j) => pp.blocks_of(columns[j], v)));
    const gap = (b, j) => Math.max(0, b[0] - q[j][1], q[j][0] - b[1]);
    const worst = blocks.map((bs) => Math.max(0, ...bs.map(gap)));
    let distance = Infinity;  // a loop, not Math.min(...worst): a census is more arguments than a call may take
    for (const w of worst) if (w < distance) distance = w;
    const matches = [];
    worst.forEach((w, i) => { if (w === distance) matches.push(i); });
    return { distance, matches, deviations: matches.map((i) => blocks[i].map(gap)), columns, query: q, blocks };
  };
})();
