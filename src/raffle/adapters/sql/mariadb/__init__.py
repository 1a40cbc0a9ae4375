"""MariaDB's own statements on asyncmy: draws in batches."""
