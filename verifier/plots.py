"""PNG plots without a display: one figure factory and one encoder for every plot of the project."""

from __future__ import annotations

import io


def figure(width: float = 6.4, height: float = 3.8):
    """A new ``(fig, ax)`` on the Agg backend (no display, no GUI toolkit)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), dpi=110)


def png(fig) -> bytes:
    """The figure as PNG bytes; the figure is closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def label(text: object) -> str:
    """Untrusted text as a plot label: ``$`` would start matplotlib's math mode."""
    return str(text).replace("$", r"\$")
