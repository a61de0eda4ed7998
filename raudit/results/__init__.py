"""Result tables: the versioned Parquet schema, the append-only store, trial ids."""

from raudit.results.ids import canonical_json, spec_hash, trial_id
from raudit.results.schema import SCHEMA_VERSION, TABLES, SchemaError, add_column, arrow_schema
from raudit.results.store import ResultStore

__all__ = ["SCHEMA_VERSION", "TABLES", "ResultStore", "SchemaError", "add_column",
           "arrow_schema", "canonical_json", "spec_hash", "trial_id"]
