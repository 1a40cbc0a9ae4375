"""PostgreSQL's own statements on asyncpg: draws in batches, delivery and relay."""
