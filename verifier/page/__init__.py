"""The subject's page: one self-contained HTML file that checks her record in her own browser.

The page is plain JavaScript in this folder (``dsse.js``, ``strict_json.js``, ``verification.js``,
``manifest_schema.js`` with the published manifest schema inlined, ``coherence.js``, ``data_columns.js``,
``sampling_weights.js``, ``ranks.js``,
``spreads.js``, ``disclosure.js``, ``distortion.js`` (a randomized attribute's keep probability or transition
matrix), ``rr_model.js``, ``ra_model.js``, ``tree.js``, ``randommatch.js``, ``policy.js``
with the verifier's default verdict policy inlined byte for byte, ``verdict.js``, ``mask_class.js`` (MaskClass rerun:
a two-step release's masks read as the intruder who reruns it reads them), ``group.js``,
``joint.js`` (several releases of her at once), ``transparency.js`` (the release log's proof, checkpoint and
witnesses), ``plain_words.js`` (her verdict in plain words, then the details and what she can do), ``pictures.js`` (her
verdict drawn in inline SVG), ``check.js``, ``ui.js``: small functions named after their Python twins), and one dependency: the Parquet reader hyparquet, built once
and committed (``vendor/``, with its licence, which the page carries too), inlined into ``page.html`` with no build step. Its
Content-Security-Policy forbids every network request (``connect-src
'none'``, ``default-src 'none'``) and allows only its own inline script, by
its SHA-256 hash; nothing is fetched, and nothing she types leaves the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources

from verifier.releases.coherence import MOST_CHECKED
from verifier.releases.policy import DEFAULT_POLICY

__all__ = ["SCRIPTS", "VENDORED", "page_html"]

#: the page's scripts, in the order they are inlined
SCRIPTS = ("dsse.js", "strict_json.js", "manifest_schema.js", "coherence.js", "datapackage.js", "verification.js",
           "data_columns.js", "sampling_weights.js", "ranks.js", "spreads.js", "disclosure.js",
           "distortion.js", "rr_model.js", "ra_model.js", "tree.js", "randommatch.js", "policy.js", "verdict.js", "mask_class.js",
           "group.js",
           "joint.js", "transparency.js", "plain_words.js", "pictures.js", "check.js", "ui.js")


#: the vendored Parquet reader (vendor/README.md says how it was built) and its SHA-256
VENDORED = ("vendor/hyparquet.min.js", "b21aea6afb4f4df4bc855b645259e5983aaa1135b72aa38c69624a4a5abab0fd")


def page_html() -> str:
    """The page: its template with the scripts inlined and a Content-Security-Policy that names their hash."""
    here = resources.files("verifier.page")
    schema = resources.files("verifier.releases").joinpath("manifest.schema.json").read_text(encoding="utf-8")
    published = "globalThis.permutedPrivacy.MANIFEST_SCHEMA = " + json.dumps(json.loads(schema)) + ";"
    # the default policy's exact text: the page hashes it to the SHA-256 the command line names
    policy = resources.files("verifier.releases").joinpath(DEFAULT_POLICY).read_bytes().decode("utf-8")
    published += "\nglobalThis.permutedPrivacy.DEFAULT_POLICY_TEXT = " + json.dumps(policy) + ";"
    digest = hashlib.sha256(policy.encode("utf-8")).hexdigest()  # coherence.js holds signed counts to it at once
    published += "\nglobalThis.permutedPrivacy.DEFAULT_POLICY_SHA256 = " + json.dumps(digest) + ";"
    # the public draw earlier manifests signed their level counts from, which coherence.js allows as coherence.py does
    published += f"\nglobalThis.permutedPrivacy.MOST_CHECKED = {MOST_CHECKED};"
    scripts = [here.joinpath(name).read_text(encoding="utf-8") for name in SCRIPTS]
    licence = here.joinpath("vendor/hyparquet.LICENSE").read_text(encoding="utf-8").replace("*/", "* /")
    vendored = (f"/* hyparquet 1.31.5, the page's Parquet reader:\n{licence}*/\n"
                + here.joinpath(VENDORED[0]).read_text(encoding="utf-8"))
    # the schema after dsse.js, which makes the namespace; the reader first, on its own name
    script = "\n".join([vendored, scripts[0], published, *scripts[1:]])
    if "</script" in script.lower():
        raise ValueError("a script of the page holds </script")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; worker-src blob:; style-src 'unsafe-inline'; "
           "connect-src 'none'; img-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'")
    template = here.joinpath("page.html").read_text(encoding="utf-8")
    return template.replace("{{CSP}}", csp).replace("{{SCRIPT}}", script)
