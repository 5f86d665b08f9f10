"""Data input and output: tables (CSV and Parquet, strict), schemas, strict JSON, and the
papers' running example shipped with the package (``paper/``).
"""

from verifier.data.schema import Attribute, Schema
from verifier.data.schema_file import load_schema
from verifier.data.tables import Table, read_table

__all__ = ["Attribute", "Schema", "Table", "load_schema", "read_table"]
