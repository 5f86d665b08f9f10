"""The kit every front end shares: exit codes, the FAIL line, JSON and text output, progress, argument checks.

Both command lines (``verifier`` and ``publisher``) and the DataFrame API's
callers build on these public names; neither front end imports the other.
"""

from verifier.errors import UsageError
from verifier.frontend.arguments import (
    COUNTS,
    count,
    check_fraction,
    check_non_negative,
    check_out_file,
    check_positive,
    check_probability,
    check_record_number,
    parse_v,
    same_file,
)
from verifier.frontend.engine_args import add_engine_args, engine_client
from verifier.frontend.commands import ExitCode, add_command, new_parser, parse_or_fail, run_parsed
from verifier.frontend.output import command_lines, finite, output_width, print_json, text_table
from verifier.frontend.progress import Phases, ProgressBar
from verifier.frontend.release_args import add_release_args, verified
from verifier.frontend.steps import run_steps

__all__ = [
    "COUNTS", "count", "ExitCode", "Phases", "ProgressBar", "UsageError", "add_command", "add_engine_args", "engine_client", "add_release_args", "verified", "check_fraction", "check_non_negative", "check_out_file", "check_positive", "check_record_number",
    "check_probability", "command_lines", "finite", "new_parser", "output_width", "parse_or_fail", "parse_v", "print_json", "run_parsed",
    "run_steps", "same_file", "text_table",
]
