"use strict";
// A release's data holds exactly the columns its signed schema names, in its order (data_columns.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;

  function top_level(schema) {
    // A Parquet footer's flattened schema: the root, then each column with its children after it.
    const names = [];
    const end = (i) => { let j = i + 1; for (let c = 0; c < (schema[i].num_children || 0); c++) j = end(j); return j; };
    for (let i = 1; i < schema.length; i = end(i)) names.push(schema[i].name);
    return names;
  }

  pp.data_shape = function data_shape(name, bytes) {
    // What a data file's header says (data_columns.py's DataShape): {names, rows, codecs}, rows from a Parquet
    // footer (null for CSV, whose rows are counted as they are read); null when it cannot be read.
    try {
      if (name.endsWith(".parquet")) {
        const metadata = globalThis.hyparquet.parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
        const codecs = metadata.row_groups.flatMap((g) => g.columns.map((c) => [c.meta_data ? c.meta_data.path_in_schema.join(".") : "?", c.meta_data && c.meta_data.codec]));
        return { names: top_level(metadata.schema), rows: Number(metadata.num_rows), codecs };
      }
      return { names: pp.csv_rows(bytes, name, 1)[0] || [], rows: null, codecs: [] };
    } catch (e) {
      return null;
    }
  };

  pp.codec_problem = function codec_problem(shape) {
    // Why a Parquet data file's compression is not one every reader decodes (uncompressed or Snappy), or null.
    for (const [column, codec] of shape ? shape.codecs : []) {
      if (codec !== "UNCOMPRESSED" && codec !== "SNAPPY") return `column ${shown(column)} is compressed with ${codec}; a release's Parquet data is uncompressed or Snappy, which every reader decodes`;
    }
    return null;
  };

  const shown = (name) => `'${pp.literal(name)}'`;

  pp.columns_problem = function columns_problem(header, names) {
    // Why a data file's header is not exactly the signed schema's column names, or null when it is.
    if (header === null || (header.length === names.length && header.every((h, i) => h === names[i]))) return null;
    const extra = header.filter((h) => !names.includes(h));
    if (extra.length) return `column ${shown(extra[0])} is in the data but not in the signed schema: a release publishes exactly the columns its schema names`;
    const missing = names.filter((n) => !header.includes(n));
    if (missing.length) return `column ${shown(missing[0])} of the signed schema is not in the data`;
    const twice = header.find((h, i) => header.indexOf(h) !== i);
    if (twice !== undefined) return `column ${shown(twice)} appears twice in the data`;
    return "the data's columns are not in the signed schema's order";
  };
})();
