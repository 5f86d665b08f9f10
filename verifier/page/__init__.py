"""The subject's page: one self-contained HTML file that checks her record in her own browser.

The page is plain JavaScript in this folder (``dsse.js``, ``verification.js``,
``manifest_schema.js`` with the published manifest schema inlined, ``ranks.js``,
``spreads.js``, ``disclosure.js``, ``rr_model.js``, ``ra_model.js``, ``tree.js``, ``randommatch.js``, ``verdict.js``,
``group.js``,
``check.js``, ``ui.js``: small functions named after their Python twins), inlined into ``page.html`` with no build step. Its
Content-Security-Policy forbids every network request (``connect-src
'none'``, ``default-src 'none'``) and allows only its own inline script, by
its SHA-256 hash; nothing is fetched, and nothing she types leaves the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib import resources

__all__ = ["SCRIPTS", "page_html"]

#: the page's scripts, in the order they are inlined
SCRIPTS = ("dsse.js", "manifest_schema.js", "verification.js", "ranks.js", "spreads.js", "disclosure.js",
           "rr_model.js", "ra_model.js", "tree.js", "randommatch.js", "verdict.js", "group.js", "check.js", "ui.js")


def page_html() -> str:
    """The page: its template with the scripts inlined and a Content-Security-Policy that names their hash."""
    here = resources.files("verifier.page")
    schema = resources.files("verifier.releases").joinpath("manifest.schema.json").read_text(encoding="utf-8")
    published = "globalThis.permutedPrivacy.MANIFEST_SCHEMA = " + json.dumps(json.loads(schema)) + ";"
    scripts = [here.joinpath(name).read_text(encoding="utf-8") for name in SCRIPTS]
    script = "\n".join([scripts[0], published, *scripts[1:]])  # the schema after dsse.js, which makes the namespace
    if "</script" in script.lower():
        raise ValueError("a script of the page holds </script")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; worker-src blob:; style-src 'unsafe-inline'; "
           "connect-src 'none'; img-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'")
    template = here.joinpath("page.html").read_text(encoding="utf-8")
    return template.replace("{{CSP}}", csp).replace("{{SCRIPT}}", script)
