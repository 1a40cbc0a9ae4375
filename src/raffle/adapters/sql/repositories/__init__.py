"""Repositories over the SQL tables, portable across SQLite, PostgreSQL and MariaDB."""
