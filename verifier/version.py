"""The package's version, importable from anywhere without loading the rest of the package."""

__version__ = "0.1.0"
