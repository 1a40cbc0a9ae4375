"""SQL storage of awards and strategies: tables, repositories, unit of work, migrations."""
