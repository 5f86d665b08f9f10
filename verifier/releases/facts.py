"""A verified release for people: what was verified, the claims in one line, a p-value in words.

Shared by ``verifier verify``, ``verifier check``, the TUI and the reports.
"""

from __future__ import annotations

import json
from typing import Any

from verifier.data.formula_cells import FormulaCells, formula_cells_in_keys, formula_cells_in_text
from verifier.errors import InvalidInputError, UsageError, VerifierError
from verifier.releases.verification import ReleaseError, VerifiedRelease, load_public_key, verify_release
from verifier.text import literal, number, plural

__all__ = ["MODEL_WORDS", "WITHHELD", "signed_contact", "claims_summary", "counterfeits_text", "external_text", "formula_cells",
           "formula_warning", "open_release", "p_value_words", "release_facts", "composition_facts", "composition_lines"]


def open_release(directory: str, key_path: str, *, fingerprint: str | None = None, dataset_id: str | None = None,
                 min_version: int | None = None) -> VerifiedRelease:
    """Verify ``directory`` with the public key at ``key_path`` (SPEC section 9); raises on failure.

    ``fingerprint``, when given, pins the key: a key file with another
    fingerprint is refused before the release is looked at.
    """
    key = load_public_key(key_path)
    if fingerprint and fingerprint.strip().lower() != key.fingerprint:
        raise VerifierError(f"the key file's fingerprint is {key.fingerprint}, not the one you pinned",
                            path=key_path, reason="KEY_MISMATCH")
    if min_version is not None and min_version < 1:
        raise UsageError("the minimum release version is an integer from 1 up")
    return verify_release(directory, key, dataset_id=dataset_id, min_version=min_version)


def signed_contact(release: VerifiedRelease) -> str | None:
    """Where the release says to write about it (``publisher release --contact``, signed in
    ``release_metadata``), or None when it names none."""
    metadata = release.predicate.get("release_metadata")
    contact = metadata.get("contact") if isinstance(metadata, dict) else None
    return contact if isinstance(contact, str) and contact else None


def formula_cells(release: VerifiedRelease) -> FormulaCells:
    """The release's text cells a spreadsheet would run as formulas, from its verified bytes.

    A data file that does not parse is refused (``DATA_MALFORMED``), as by every reader of the release.
    """
    try:
        if release.family == "generalized":
            published = release.published()
            return formula_cells_in_text(published.schema, published.text)
        table = release.table()
    except InvalidInputError as exc:
        raise ReleaseError(f"the signed data cannot be read: {exc.message}", path=release.path,
                           reason="DATA_MALFORMED") from None
    return formula_cells_in_keys(table.schema, table.values)


def formula_warning(release: VerifiedRelease, found: FormulaCells) -> str | None:
    """A warning line for people about to open the data in a spreadsheet, or None."""
    if not found.count:
        return None
    where = release.data_name if not release.parts else f"the {len(release.parts)} data parts"
    return (f"WARNING: {found.count} text cell{'s' if found.count > 1 else ''} of {where} start with "
            f"=, +, -, @, a tab or a carriage return (the first: {found.where()}): a "
            "spreadsheet would run them as formulas. Open the file as text, or import every column as text.")


#: how each attribute-disclosure mode reaches its figure, for people
MODEL_WORDS = {
    "randomized_response": "under the published randomized-response probabilities",
    "random_replacement": "under the published replacement probabilities",
    "group": "among the released records whose published values contain yours",
    "permutation": "among the released records closest to yours in rank",
    "none": "among all released records",
}


def release_facts(release: VerifiedRelease, found: FormulaCells | None = None) -> list[tuple[str, str]]:
    """What was verified, for people: who signed, which dataset and version, when, and every method parameter.

    Strings from the manifest are JSON-quoted (so control characters are
    escaped); parameters that are null are left out, as in ``verifier verify``.
    ``found``, the formula-like cells of the data, adds a warning when there are any.
    """
    import json

    facts = [
        ("fingerprint", release.key.fingerprint),
        ("dataset", json.dumps(release.dataset_id)),
        ("version", str(release.release_version)),
        ("created", json.dumps(release.created_at)),
    ]
    for step in release.methods:
        params = step.get("parameters") if isinstance(step, dict) else None
        facts.append(("method", json.dumps(step.get("method") if isinstance(step, dict) else step)))
        for name, value in (params or {}).items() if isinstance(params, dict) else ():
            if isinstance(step, dict) and step.get("method") == "m_invariant" and name == "counterfeits":
                facts.append(("  counterfeits", f"{plural(len(value or []), 'group')} (each count in the manifest)"))
            elif value is not None:
                facts.append((f"  {literal(name)}", json.dumps(value)))
    facts.append(("withheld", WITHHELD))
    # the publisher's word, signed, not recomputed here: labelled so, as verify says it (issue 59, item 9)
    facts.append(("claims", f"as the publisher signed them, not recomputed here (verifier audit recomputes "
                            f"them): {claims_summary(release)}"))
    facts += composition_facts(release.claims.get("composition"))
    warning = formula_warning(release, found) if found is not None else None
    if warning:
        facts.append(("warning", warning.removeprefix("WARNING: ")))
    return facts


WITHHELD = "the random seed only (paper 003, Def. 4)"


def composition_facts(figures: dict | None) -> list[tuple[str, str]]:
    """What a release signs of the earlier releases of the same people it was checked with (issue 40): each one by
    its manifest's digest and the people they share (``earlier``), then the joint levels and risks of those people
    (``together``)."""
    if not figures:
        return []
    facts = [("earlier", f"{literal(e['datasetId'])} version {e['releaseVersion']} ({e['records']:,} records, "
                         f"manifest SHA-256 {e['manifest_sha256']}): {plural(e['linked'], 'person', plural_form='people')}"
                         " of this release") for e in figures["earlier"]]
    levels = figures["policy_levels"]
    of = (f"all {levels['checked']:,}" if levels["checked"] == figures["linked"]
          else f"{levels['checked']:,} drawn at random from {figures['linked']:,}")
    facts.append(("together", f"of {of} people released before: exposed {levels['exposed']:,}, at risk "
                              f"{levels['at_risk']:,}, protected {levels['protected']:,}; exposed in no release alone: "
                              f"{figures['newly_exposed']:,}"))
    facts += [("together", f"{literal(name)}: largest joint risk {_fig(entry['max'], share=True)}, certain for "
                           f"{_fig(entry['certain_share'], share=True)} of them")
              for name, entry in figures["attribute_disclosure"].items()]
    return facts


def composition_lines(figures: dict | None) -> list[str]:
    """:func:`composition_facts` as the command line prints them, under one heading."""
    facts = composition_facts(figures)
    return ["checked with the earlier releases of the same people:", *[f"  {k}: {v}" for k, v in facts]] if facts \
        else []


def _fig(value: Any, *, share: bool = False) -> str:
    return number(value, share=share) if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def claims_summary(release: VerifiedRelease) -> str:
    """The publisher's main claims in one line, by the release's family: records, k, and D and the
    confidently linked share where ranks apply, the disclosure risk of each sensitive attribute otherwise."""
    claims = release.claims if isinstance(release.claims, dict) else {}
    parts = [plural(claims.get('n_records') or 0, "record"), f"k = {claims.get('k')}"]
    if release.family == "generalized":
        parts.append(plural(claims.get("classes") or 0, "class", plural_form="classes"))
    else:
        pp = claims.get("permuted_privacy") or {}
        it = claims.get("intruder") or {}
        parts.insert(1, f"D = {pp.get('distance')}")
        parts.append(f"confidently linked {_fig(it.get('confidently_linked_share'), share=True)} at alpha {it.get('alpha')}")
    disclosure = claims.get("attribute_disclosure")
    for name, entry in (disclosure.items() if isinstance(disclosure, dict) else ()):
        if isinstance(entry, dict):
            parts.append(f"risk of {literal(name)} at most {_fig(entry.get('max'), share=True)} ({literal(entry.get('mode'))})")
    return ", ".join(parts)


def counterfeits_text(params: dict) -> str:
    """An m_invariant step in one line: m, and its counterfeit records with the groups they are in (the counts
    themselves are in the manifest, one per group)."""
    fakes, groups = params.get("counterfeit_records") or 0, len(params.get("counterfeits") or [])
    if not fakes:
        return f"m = {params.get('m')}, no counterfeit record"
    return (f"m = {params.get('m')}, {plural(fakes, 'counterfeit record')} in {plural(groups, 'group')}, each group's "
            "count in the manifest (a counterfeit hides a value, not a person: group sizes count people)")


def external_text(params: dict) -> str:
    """An external step in one line: the tool, the model its cells fit, the suppressed records, and each file
    it publishes by name and SHA-256 (the files themselves are in the manifest)."""
    config = params.get("configuration")
    files = params.get("hierarchy_files") or {}
    parts = [f"produced by {json.dumps(params.get('produced_by'), ensure_ascii=False)} outside this tool, so no one "
             "can rerun it here",
             f"{params.get('model')} cells",
             plural(params.get("suppressed_records") or 0, "record") + " suppressed",
             "configuration: " + (f"{json.dumps(config.get('name'), ensure_ascii=False)} (sha256 {config.get('sha256')})"
                                  if isinstance(config, dict) else "none given")]
    if files:
        parts.append("hierarchies: " + ", ".join(
            f"{literal(column)} from {json.dumps(f.get('name'), ensure_ascii=False)} (sha256 {str(f.get('sha256'))[:16]}...)"
            for column, f in files.items() if isinstance(f, dict)))
    matrices = params.get("transition_matrices")
    if isinstance(matrices, dict) and matrices:
        parts.append("post-randomized by the transition matrices in the manifest: " +
                     ", ".join(literal(column) for column in matrices))
    return "external: " + "; ".join(parts)


def p_value_words(p: float, alpha: float, *, whose: str = "your") -> str:
    """A p-value for people (SPEC section 10.1, item 4); ``whose`` is ``your`` for a subject, ``the`` otherwise."""
    share = number(p, share=True)
    if p < alpha:
        return (f"a random record matches as closely only {share} of the time: an intruder who finds {whose} match "
                "can be confident it is the right one")
    return f"a random record matches as closely {share} of the time: an intruder cannot tell {whose} match from chance"
