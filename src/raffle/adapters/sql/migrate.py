"""Schema migrations run from code: `await upgrade(url)`, no alembic.ini needed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str, shard_tables: int = 1) -> Config:
    """Alembic's configuration for the database at `url`, for its command API."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # An attribute, not a main option: the .ini parser would take a '%' in a password as
    # interpolation.
    config.attributes["url"] = url
    config.attributes["shard_tables"] = shard_tables
    return config


# Alembic's commands are synchronous and env.py runs its own event loop, which cannot start
# inside a running one: the commands run in a worker thread.


async def upgrade(url: str, revision: str = "head", *, shard_tables: int = 1) -> None:
    await asyncio.to_thread(command.upgrade, alembic_config(url, shard_tables), revision)


async def downgrade(url: str, revision: str, *, shard_tables: int = 1) -> None:
    await asyncio.to_thread(command.downgrade, alembic_config(url, shard_tables), revision)
