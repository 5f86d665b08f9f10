from importlib import import_module

from verifier.console import run_console

run_console(lambda: import_module("publisher.cli").main)
