"""The subject's TUI (SPEC section 10.1): verify a release, enter her record, see her protection.

Started by ``verifier tui [DIR] --key public.pem``. Four tabs, in the order
she needs them:

1. **Release** (F2): the verification result first (key fingerprint, dataset,
   version, date, method and every parameter); if verification fails, its
   reason and nothing else.
2. **Your record** (F3): a form generated from the signed schema (numbers
   checked as she types, categories from a list), or a JSON / one-row CSV
   record file.
3. **Results** (F4): permutation distance, the matching released records and
   their rank deviations, the spreads around her record against the claimed
   (D, v) and against her own thresholds, attribute disclosure per sensitive
   attribute, and a verdict in plain words.
4. **Random match** (F5): the random-match test in a worker thread with a
   progress bar and a cancel key, a histogram with her distance marked, and
   her p-value in words.

Her report is written (JSON or Markdown, mode 0600, atomically) only when
she asks (Ctrl+E). Her record stays in memory: it is not logged, and an
unexpected error ends the app with one line that names the error's type,
never Textual's traceback with local variables. Every publisher-supplied
string (column names, categories, manifest values) is shown literally:
Static widgets have markup off and control characters are escaped.

The package holds one module per tab (``release_tab``, ``record_tab``,
``results_tab``, ``random_tab``), the help and export screens, and ``app``,
which composes them and owns the workers and what she has computed.
"""

from verifier.tui.app import INTERNAL_ERROR_EXIT, SubjectApp
from verifier.tui.random_tab import histogram_lines

__all__ = ["INTERNAL_ERROR_EXIT", "SubjectApp", "histogram_lines"]
