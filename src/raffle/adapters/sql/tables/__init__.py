"""The SQL tables and their rows: configuration tables, shard tables, column types."""
