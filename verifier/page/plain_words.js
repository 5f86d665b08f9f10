// Her verdict in plain words, then the details, then what she can do (verifier.releases.plain_words).
(() => {
  const pp = globalThis.permutedPrivacy;
  const CERTAIN = 1.0 - 1e-9;

  pp.LEVEL_SENTENCES = {
    protected: "Your record is protected.",
    at_risk: "Your record is at risk.",
    exposed: "Your record is exposed.",
    not_verifiable: "This release failed its check, so do not trust what it seems to say about you.",
  };
  pp.RIGHTS = "The GDPR gives you the right to see the data held about you (Article 15), to object to its use " +
    "(Article 21), and to ask for it to be erased (Article 17). This is not legal advice.";
  const AGAIN = "When a new release of this data comes out, check your record again the same way.";

  pp.chance = function chance(p) {
    // A probability as a whole percentage, rounded half up; "less than 1%" and "more than 99%" at the ends.
    if (p === null || p === undefined) return "unknown";
    const pct = Number(p) * 100;
    if (pct > 0 && pct < 1) return "less than 1%";
    if (pct > 99 && pct < 100) return "more than 99%";
    return `${Math.floor(pct + 0.5)}%`;
  };

  const fired = (out, figure, attribute = null) => out.verdict.findings.some((f) => f.figure === figure &&
    (f.severity === "at_risk" || f.severity === "exposed") && (attribute === null || f.attribute === attribute));

  const groupSize = (out) => {
    if (out.model !== "generalized") return null;
    return Number.isInteger(out.classes) && out.classes > 1 ? out.smallest_class : out.class_size;
  };

  const identitySentences = (out) => {
    const n = groupSize(out);
    if (n !== null) {
      if (n === 0) return ["No record in this release fits the facts you gave, so you may not be in it."];
      if (n === 1) return ["Someone who knows a few facts about you could find your record: no one else's record fits them."];
      const few = fired(out, "class_size") ? " That is too few to hide you well." : "";
      return [`Someone who knows a few facts about you could narrow this release down to ${n} records, and one ` +
        `of them is yours. They would pick yours with a chance of 1 in ${n}.${few}`];
    }
    if (fired(out, "unchanged")) return ["Your record was published as it is, so anyone who knows it can find it."];
    const p = out.p_value ?? null;
    if (p === null) {
      return ["The test of whether your record stands out was not run, so this check cannot say whether someone " +
        "could find it."];
    }
    if (fired(out, "p_value")) {
      return [`Your record stands out: only ${pp.chance(p)} of records picked at random come as close to your ` +
        "values as the one that matches you. So someone could find it."];
    }
    return [`Someone trying to find your record could not tell it from a record picked at random: ${pp.chance(p)} of ` +
      "random records come as close to your values."];
  };

  pp.grouped = function grouped(n) {
    // A whole number with a comma every three digits: 3,000.
    return String(Math.trunc(Number(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  };

  pp.place_sentence = function place_sentence(out) {
    // Her place among the levels the publisher signed for every record (claims.policy_levels), or null.
    const signed = out.signed_levels ?? null;
    const level = out.verdict.level;
    if (signed === null || typeof signed !== "object" || !["exposed", "at_risk", "protected"].includes(level)) return null;
    const policy = signed.policy || {};
    const mine = out.verdict.policy || {};
    if (policy.sha256 !== mine.sha256) {
      return `The publisher counted every record's level under another verdict policy (${pp.literal(policy.name)}), so its counts do not compare with yours.`;
    }
    if (fired(out, "untested")) return null;  // the counts are her level with the random-match test, not run here
    const words = level.replace("_", " ");
    const count = signed[level];
    if (signed.checked === signed.records && count === 0) {
      return `The publisher counted no record ${words} among the ${pp.grouped(signed.records)} in this release, yet yours ` +
        "is: ask the publisher why.";
    }
    if (signed.checked === signed.records) {
      const among = `${words} among the ${pp.grouped(signed.records)} in this release.`;
      return count === 1 ? `You are the only record ${among}` : `You are one of ${pp.grouped(count)} records ${among}`;
    }
    return `Of ${pp.grouped(signed.checked)} records the publisher checked, drawn at random from ${pp.grouped(signed.records)}, ` +
      `${pp.grouped(count)} ${count === 1 ? "is" : "are"} ${words} like yours.`;
  };

  const attributeSentences = (entries, source, absent) => {
    const lines = [];
    for (const [name, entry] of Object.entries(entries || {})) {
      const shown = pp.literal(name);
      const prior = pp.chance(entry.prior);
      const risk = entry.risk ?? null;
      if (risk === null) continue;
      if (entry.mode === "joint" && entry.left && typeof entry.left === "object" && !risk) {
        // plain_words.py: hers is not among the values left
        lines.push(`Your ${shown} is not among the values ${source} leave for you: check your record, or these are not all releases of you.`);
      } else {
        // her risk is the most the named intruder could learn, not what he learns
        const who = pp.deciding_bound(entry) !== null ? "At worst, someone who knows how the release was made" : "Someone";
        const guess = risk >= CERTAIN ? `tell your ${shown} for certain` : `guess your ${shown} right ${pp.chance(risk)} of the time`;
        lines.push(`${who} could ${guess} from ${source}. Without ${absent}, they would guess it right ${prior} of the time.`);
      }
    }
    return lines;
  };

  pp.plain_summary = function plain_summary(out) {
    const level = out.verdict.level;
    if (level === "not_verifiable") {
      return [pp.LEVEL_SENTENCES[level], "It may have been changed after it was signed, or a part of it is missing."];
    }
    const place = pp.place_sentence(out);
    const lines = [pp.LEVEL_SENTENCES[level], ...(place ? [place] : []), ...identitySentences(out),
      ...attributeSentences(out.attribute_disclosure, "this release", "it")];
    if (out.claim_holds === false) lines.push("The publisher promised more protection than your record gets.");
    return lines;
  };

  const detail = (figure, value, meaning, reading) => ({ figure, value, meaning, reading });

  // plain_words.py's PASSES: a figure that passes the rule reading it, on a record that rule does not protect.
  const PASSES = "passes its rule, not what decides your level";

  const reading = (out, figures, attribute = null) => {
    // plain_words.py's _reading: bad where a rule on these figures fired; good (protected) or PASSES where one
    // reads them; not judged where none of her policy's rules does.
    if (figures.some((f) => fired(out, f, attribute))) return "bad";
    const reads = (out.verdict.policy || {}).reads;
    if (Array.isArray(reads) && !figures.some((f) => reads.includes(f))) return "not judged";
    return out.verdict.level === "protected" ? "good" : PASSES;
  };

  const judged = (out, figure, value, meaning, figures = [], attribute = null) =>
    // plain_words.py's _judged: a detail read by the rules on its figures (none: not judged), kept with them.
    [detail(figure, value, meaning, figures.length ? reading(out, figures, attribute) : "not judged"), figures, attribute];

  const decidingFirst = (out, found) => {
    // plain_words.py's _deciding_first: the head finding's detail first, then those a rule fired on, then the rest.
    const findings = out.verdict.findings.filter((f) => f.severity === "at_risk" || f.severity === "exposed");
    const head = findings.length ? findings[0] : null;
    const rank = ([d, figures, attribute]) => {
      if (head !== null && figures.includes(head.figure) && (attribute === null || attribute === head.attribute)) return 0;
      return d.reading === "bad" ? 1 : 2;
    };
    return found.map((item, i) => [rank(item), i, item[0]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
  };

  const rankedDetails = (out) => {
    const claimed = out.claimed || {};
    const promised = claimed.distance ?? null;
    const found = [judged(out, "d, your permutation distance", pp.number(out.distance),
      "How far your values were moved among the others when the release was made: the larger, the " +
      "better mixed." + (promised === null ? "" : ` The publisher claimed at least ${pp.number(promised)} (D).`),
      ["distance", "unchanged"])];
    const kinds = out.spread_kinds || [];
    const atClaim = out.variances_at_claimed_distance ?? null;
    const claimedV = claimed.variances || [];
    out.attributes.forEach((name, j) => {
      const v = j < claimedV.length ? claimedV[j] : null;
      const claims = !(v === null || v === undefined || atClaim === null || atClaim[j] === null);
      const what = j < kinds.length && kinds[j] === "variance" ? "variance" : "diversity";
      found.push(judged(out, `spread of ${pp.literal(name)} (${what})`, pp.number(out.variances[j]),
        "How much the released values near your record differ: the larger, the better your value is hidden. " +
        (claims ? `The publisher claimed at least ${pp.number(v)} (v) at distance ` +
          `${pp.number(claimed.distance ?? null)} (D), where yours is ${pp.number(atClaim[j])}.`
          : "The publisher claimed no spread for it.")));
    });
    const p = out.p_value ?? null;
    found.push(judged(out, "F_rand, your random-match p-value", p === null ? "not run" : pp.number(p),
      "The share of random records that match your values as closely as your own match does: " +
      "near 0 means your record stands out.", ["p_value", "untested"]));
    return found;
  };

  pp.plain_details = function plain_details(out) {
    if (out.verdict.level === "not_verifiable") return [detail("reason", String(out.reason), "Why the release failed its check.", "bad")];
    const n = groupSize(out);
    const found = n !== null ? [judged(out, "k, your group size", pp.number(n), "How many released records fit the " +
      "facts someone may know about you: the more, the better.", ["class_size", "no_group"])] : rankedDetails(out);
    for (const [name, entry] of Object.entries(out.attribute_disclosure || {})) {
      const shown = pp.literal(name);
      found.push(
        judged(out, `risk of ${shown}`, pp.number(entry.risk ?? null, true),
          `How often someone using this release would guess your ${shown} right.`, ["posterior"], name),
        judged(out, `base rate of ${shown}`, pp.number(entry.prior ?? null, true),
          "How often anyone would guess it right without your record: the share of records with your " +
          "value.", ["prior"], name),
        judged(out, `beta of ${shown}`, pp.number(entry.beta ?? null),
          "How much the release raises that chance, as a share of the base rate: 0 means not at all.", ["beta"], name),
        judged(out, `delta of ${shown}`, pp.number(entry.delta ?? null), "The same gain on a log scale: 0 means none.",
          ["delta"], name));
    }
    found.push(judged(out, "the publisher's claims", out.claim_holds !== false ? "hold" : "broken",
      "Whether the protection the publisher promised holds for your record.", ["claim_broken"]));
    const unwitnessed = out.verdict.findings.some((f) => f.figure === "unwitnessed");
    found.push(judged(out, "log proof", unwitnessed ? "none or too few witnesses" : "witnessed",
      "Whether witnesses vouch that everyone is shown this same release: a notice, which no rule of the policy reads."));
    return decidingFirst(out, found);
  };

  pp.plain_steps = function plain_steps(out) {
    const level = out.verdict.level;
    if (level === "protected") return [];
    const contact = out.contact ?? null;
    let ask;
    if (level === "not_verifiable") ask = "Ask whoever gave you this release for a copy that passes the check.";
    else if (typeof contact === "string" && contact) {
      ask = `Write to the publisher at ${pp.literal(contact)} and ask what they hold about you and how they keep it safe.`;
    } else ask = "This release names no contact. Ask whoever gave it to you who made it, and write to them.";
    return [ask, pp.RIGHTS, AGAIN];
  };

  pp.joint_plain_words = function joint_plain_words(out) {
    // Her joint check's plain words (verifier.releases.plain_words.joint_plain_words).
    const level = out.verdict.level;
    const releases = out.releases;
    const alone = releases.filter((r) => r.level_alone === level);
    const summary = [pp.LEVEL_SENTENCES[level]];
    if (!alone.length && ["protected", "at_risk", "exposed"].includes(level)) {
      summary.push(`Together, these ${releases.length} releases tell more about you than any one of them.`);
    } else if (level !== "protected" && alone.length) {
      summary.push(`One of them alone is enough for this: ${pp.literal(alone[0].release)}.`);
    }
    const p = out.p_joint ?? null;
    if (p !== null) {
      summary.push(fired(out, "p_value")
        ? `Your record stands out: only ${pp.chance(p)} of random records come as close to your values in every release at once.`
        : `Someone holding all of them could not tell your record from a record picked at random: ${pp.chance(p)} of random records come as close to your values in every release at once.`);
    }
    summary.push(...attributeSentences(out.attribute_disclosure, "these releases together", "them"));
    const details = releases.map((r) => detail(`alone: ${pp.literal(r.release)}`, r.level_alone.replace("_", " "),
      "Your level if this release were the only one.",
      r.level_alone !== "protected" ? "bad" : level === "protected" ? "good" : "not what decides your level"));
    for (const [name, entry] of Object.entries(out.attribute_disclosure || {})) {
      if ((entry.risk ?? null) !== null) {
        details.push(detail(`risk of ${pp.literal(name)}, together`, pp.number(entry.risk, true),
          "How often someone holding every release would guess it right.", reading(out, ["posterior"], name)));
      }
    }
    if (p !== null) {
      details.push(detail("F_rand, together", pp.number(p), "The share of random records as close to yours in " +
        "every release at once: near 0 means your record stands out.", reading(out, ["p_value"])));
    }
    const contacts = (out.contacts || []).filter((c) => c);
    const steps = level === "protected" ? [] : [
      contacts.length ? `Write to the publishers at ${contacts.map((c) => pp.literal(c)).join(", ")} and ask what they hold about you and ` +
        "how they keep it safe." : "These releases name no contact. Ask whoever gave them to you who made them, and write to them.",
      pp.RIGHTS, AGAIN];
    return { summary, details, steps };
  };

  pp.plain_words = function plain_words(out) {
    return { summary: pp.plain_summary(out), details: pp.plain_details(out), steps: pp.plain_steps(out) };
  };

  pp.signed_contact = function signed_contact(predicate) {
    // Where the release says to write about it (publisher release --contact, signed), or null.
    const metadata = predicate.release_metadata;
    const contact = metadata && typeof metadata === "object" && !Array.isArray(metadata) ? metadata.contact : null;
    return typeof contact === "string" && contact ? contact : null;
  };

  pp.plain_text = function plain_text(out) {
    // The plain words as the command line prints them: level and summary, what she can do, the details.
    const words = out.plain || pp.plain_words(out);
    const parts = [`${out.verdict.level.replace("_", " ").toUpperCase()}: ${words.summary.join(" ")}`];
    if (words.steps.length) parts.push("What you can do:\n" + words.steps.map((s) => `- ${s}`).join("\n"));
    parts.push("Details:\n" + words.details.map((d) => `- ${d.figure}: ${d.value} (${d.reading}). ${d.meaning}`).join("\n"));
    return parts.join("\n\n");
  };
})();
