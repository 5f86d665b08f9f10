"use strict";
// weights.csv, read as the command line reads it, and held to what it reveals (sampling_weights.py's twins).

(function () {
  const pp = globalThis.permutedPrivacy;
  const { ReleaseError } = pp;

  pp.parse_weights = function parse_weights(bytes, path, n) {
    // One column "weight", one number above zero per released record.
    const rows = pp.read_csv(bytes, path);
    if (rows[0].length !== 1 || rows[0][0] !== "weight") throw new ReleaseError("DATA_MALFORMED", path, "the weight file holds one column, 'weight'");
    if (rows.length - 1 !== n) throw new ReleaseError("DATA_MALFORMED", path, `${rows.length - 1} weights for ${n} released records`);
    return rows.slice(1).map((r, i) => {
      const [v, why] = pp.numeric_cell(r[0]);
      if (why !== null || !(v > 0)) throw new ReleaseError("DATA_MALFORMED", path, `row ${i + 1}: a sampling weight is a number above zero`);
      return v;
    });
  };

  pp.identifying_weights = function identifying_weights(values) {
    // Why the weights name records (a weight held by one record alone), or null when every weight is shared.
    const counts = new Map();
    for (const v of values) counts.set(v, (counts.get(v) || 0) + 1);
    const unique = [...counts.values()].filter((c) => c === 1).length;
    return unique ? `${unique} of ${values.length} records have a sampling weight no other record has: published beside its record, a unique weight names the record to anyone who knows the original's weights, whatever the masking` : null;
  };
})();
