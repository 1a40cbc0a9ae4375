"""Starting the HTTP service: the embedded default prepared on first start, and the demo."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import click

from raffle.adapters import metrics
from raffle.adapters.campaign_file import read_campaign
from raffle.bootstrap import bootstrap
from raffle.entrypoints import logs
from raffle.entrypoints.demo_payments import put_on_sale
from raffle.service.auth import create_user
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings

DEMO = Path(__file__).parent / "demo" / "big-market.yaml"
DEMO_OPERATOR = "operator"


async def migrate(settings: Settings) -> None:
    # Imported here: alembic is a tenth of the command line's start-up, which a failing
    # start (a service down, a bad setting) should not wait for.
    from raffle.adapters.sql.migrate import upgrade

    for url in settings.database_urls:
        await upgrade(url, shard_tables=settings.shard_tables)


async def prepare_embedded(settings: Settings) -> None:
    """Migrate, and load the demo campaign into an empty database (when `load_demo`)."""
    await migrate(settings)
    raffle = bootstrap(settings)
    try:
        async with raffle.uow() as uow:
            empty = not await uow.activities.all()
        if empty and settings.load_demo:
            await load_campaign(read_campaign(DEMO), raffle.uow(), raffle.tags, clock=raffle.clock)
            click.echo(f"loaded the demo campaign {DEMO.name}", err=True)
    finally:
        await raffle.close()


def demo_settings(folder: Path) -> Settings:
    """The embedded default on a database of its own in `folder` (a fresh temporary one), so
    each demo starts from the same ready campaign whatever an earlier one did. The uvicorn
    factory reads its settings from the environment: the database is set there."""
    os.environ["RAFFLE_DATABASE_URL"] = f"sqlite:///{folder / 'raffle.db'}"
    os.environ["RAFFLE_LOAD_DEMO"] = "true"
    os.environ.pop("RAFFLE_REDIS_URL", None)
    os.environ.pop("RAFFLE_BROKER_URL", None)
    os.environ.pop("RAFFLE_SHARD_URLS", None)
    return Settings()


async def prepare_demo(settings: Settings) -> str:
    """The demo database with its campaign and an operator; answers the operator's password
    (fresh from the CSPRNG each time: the demo's console is reachable by anyone on the host)."""
    await prepare_embedded(settings)
    password = secrets.token_urlsafe(12)
    raffle = bootstrap(settings)
    try:
        await create_user(DEMO_OPERATOR, password, True, raffle.uow(), raffle.hasher)
        if raffle.gateway is not None:
            await put_on_sale(raffle.uow, raffle.clock)
    finally:
        await raffle.close()
    return password


WORKER_STARTUP_SECONDS = 120


def serve(settings: Settings, workers: int = 1) -> None:
    logs.configure(settings)  # this process's; each worker process's in http/main.create
    with metrics.shared_between(workers):
        _uvicorn(settings, workers)


def _uvicorn(settings: Settings, workers: int) -> None:
    import uvicorn

    from raffle.entrypoints.http.one_write import OneWriteHttp

    uvicorn.run(
        "raffle.entrypoints.http.main:create",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level="warning",
        log_config=None,  # uvicorn's lines go through the root logger, as ours (logs.py)
        access_log=False,  # ours is http/observe.AccessLog
        loop="uvloop",
        http=OneWriteHttp,  # uvicorn's httptools protocol, a response in one write
        # A worker answers the supervisor's health check only once its imports are done; on
        # a busy machine that took longer than uvicorn's 5 s, and the supervisor killed and
        # started it again, for ever, with nothing in the log at "warning".
        timeout_worker_healthcheck=WORKER_STARTUP_SECONDS,
    )
