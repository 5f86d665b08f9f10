"""The papers' experiments, rerun: ``python -m experiments NAME [--quick] [--json]`` (docs/experiments.md).

One module per seed paper reruns that paper's evaluation with the project's
own methods and checks, and compares each figure with what the paper
reports: the number where the paper prints one, the trend where it only
draws a figure. Each comparison gets a verdict (reproduced, reproduced in
trend, or differs, with the reason found); a difference is documented, never
tuned away. The package sits beside ``benchmarks/`` and is not installed
with the library.
"""

from experiments.registry import EXPERIMENTS

__all__ = ["EXPERIMENTS"]
