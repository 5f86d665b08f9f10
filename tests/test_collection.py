"""A command runs with fewer cycle collections, and gives the caller's thresholds back."""

from __future__ import annotations

import argparse
import gc

import pytest

from verifier.errors import InvalidInputError
from verifier.frontend.collection import COMMAND_THRESHOLDS, fewer_collections
from verifier.frontend.commands import run_parsed


@pytest.fixture
def own_thresholds():
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield (700, 10, 10)
    gc.set_threshold(*before)


@pytest.mark.parametrize("fails", [False, True])
def test_a_command_runs_with_the_command_thresholds_and_puts_the_callers_back(own_thresholds, fails):
    seen = []

    def command(args):
        seen.append(gc.get_threshold())
        if fails:
            raise InvalidInputError("a bad cell", path="t.csv", reason="CELL_INVALID")
        return 0

    code = run_parsed(argparse.Namespace(func=command, json=True))
    assert seen == [COMMAND_THRESHOLDS] and gc.get_threshold() == own_thresholds
    assert code == (3 if fails else 0)


def test_the_thresholds_come_back_after_an_exception(own_thresholds):
    with pytest.raises(ZeroDivisionError):
        with fewer_collections():
            assert gc.get_threshold() == COMMAND_THRESHOLDS
            1 / 0
    assert gc.get_threshold() == own_thresholds
