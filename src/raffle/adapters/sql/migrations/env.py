"""Alembic's entry point: runs the migrations on the database the caller's config names."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from raffle.adapters.sql.tables.config import metadata
from raffle.adapters.sql.unit_of_work import create_engine

config = context.config


def _url() -> str:
    # Set by raffle.adapters.sql.migrate (or an ini file); never read from the environment,
    # so a test can never migrate the database a shell happens to point at.
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: set config.attributes['url'] or sqlalchemy.url")
    return str(url)


def do_run_migrations(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    # Without enforced foreign keys: on SQLite, rebuilding a table would cascade otherwise.
    connectable = create_engine(_url(), foreign_keys=False)
    try:
        async with connectable.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await connectable.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(run_async_migrations())
