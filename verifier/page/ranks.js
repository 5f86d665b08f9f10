"use strict";
// Block ranks with ties and a subject's permutation distance (verifier/core/ranks.py, permutation.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;
  const { ReleaseError } = pp;

  pp.read_csv = function read_csv(bytes, path) {
    // The rows of a release's CSV file (RFC 4180: quoted cells may hold commas, quotes doubled), header first.
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    const rows = [];
    let row = [], cell = "", quoted = false, i = 0;
    while (i < text.length) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
        if (c === '"') { quoted = false; i += 1; continue; }
        cell += c; i += 1; continue;
      }
      if (c === '"' && cell === "") { quoted = true; i += 1; continue; }
      if (c === ",") { row.push(cell); cell = ""; i += 1; continue; }
      if (c === "\n" || c === "\r") {
        row.push(cell); rows.push(row); row = []; cell = "";
        i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
        continue;
      }
      cell += c; i += 1;
    }
    if (cell !== "" || row.length) { row.push(cell); rows.push(row); }
    if (quoted) throw new ReleaseError("DATA_MALFORMED", path, "a quoted cell is not closed");
    return rows;
  };

  pp.rank_keys = function rank_keys(rows, schema, path) {
    // (n, m) rank keys: a numeric cell's value, a categorical cell's position in its category list.
    const header = rows[0];
    const where = schema.attributes.map((a) => header.indexOf(a.name));
    if (where.some((k) => k < 0)) throw new ReleaseError("DATA_MALFORMED", path, "a column of the schema is not in the data");
    return rows.slice(1).filter((r) => r.length > 1 || r[0] !== "").map((r, i) => schema.attributes.map((a, j) => {
      const cell = r[where[j]];
      if (a.kind === "numeric") {
        const v = Number(cell);
        if (cell.trim() === "" || !Number.isFinite(v)) throw new ReleaseError("DATA_MALFORMED", path, `column ${JSON.stringify(a.name)}, row ${i + 1}: not a number`);
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
