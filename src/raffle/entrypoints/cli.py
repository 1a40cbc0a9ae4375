"""The `raffle` command line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NoReturn

import click
import uvloop
from pydantic import ValidationError

from raffle.adapters.campaign_file import InvalidCampaignFile, read_campaign
from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.bootstrap import bootstrap
from raffle.domain.campaign import Campaign
from raffle.domain.errors import RaffleError
from raffle.domain.rules import DrawContext
from raffle.entrypoints import logs, serving, worker
from raffle.service.auth import create_user
from raffle.service.campaigns import load_campaign
from raffle.service.simulation import Simulation, simulate
from raffle.settings import Settings

campaign_path = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group()
def main() -> None:
    """raffle: a marketing raffle platform with exact odds."""


@main.command()
def migrate() -> None:
    """Create or upgrade the schema of every database (RAFFLE_DATABASE_URL, RAFFLE_SHARD_URLS)."""
    settings = _settings()
    asyncio.run(serving.migrate(settings))
    click.echo(f"{len(settings.database_urls)} database(s) up to date")


@main.command()
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True)
def serve(workers: int) -> None:
    """Run the HTTP API and the pages (RAFFLE_HOST:RAFFLE_PORT). On the embedded SQLite
    default it also migrates, and loads the demo campaign into an empty database."""
    settings = _settings()
    if workers > 1 and settings.redis_url is None:
        # Without Redis, stock and rate limits are counted in the process: two processes
        # would each hand out the whole stock.
        _fail("more than one worker needs RAFFLE_REDIS_URL (stock is counted in-process)")
    if settings.database_url.startswith("sqlite"):
        _run_or_exit(lambda: serving.prepare_embedded(settings))
    base = f"http://{settings.host}:{settings.port}"
    click.echo(f"raffle on {base}/ (console {base}/console, API {base}/docs)", err=True)
    serving.serve(settings, workers)


@main.command()
def demo() -> None:
    """Run the embedded service on a fresh database with the demo campaign running and an
    operator account, and print the address of each page (RAFFLE_HOST:RAFFLE_PORT)."""
    with tempfile.TemporaryDirectory(prefix="raffle-demo-") as folder:
        settings = serving.demo_settings(Path(folder))
        password = ""

        async def prepare() -> None:
            nonlocal password
            password = await serving.prepare_demo(settings)

        _run_or_exit(prepare)
        base = f"http://{settings.host}:{settings.port}"
        operator = f"log in as {serving.DEMO_OPERATOR} / {password}"
        click.echo(f"raffle demo: the campaign {serving.DEMO.name}, activity 100301 running")
        click.echo(f"  player page       {base}/")
        click.echo(f"  operator console  {base}/console  ({operator})")
        click.echo(f"  API               {base}/docs")
        sys.stdout.flush()
        serving.serve(settings)


@main.command("worker")
@click.option("--relay/--no-relay", default=True, help="Publish the outbox to the broker.")
@click.option("--consumers/--no-consumers", default=True, help="Deliver wins; dead letters.")
@click.option("--jobs/--no-jobs", default=True, help="Activity clock, sweeps, compensation.")
def worker_command(relay: bool, consumers: bool, jobs: bool) -> None:
    """Run the outbox relay, the delivery consumers and the scheduled jobs until stopped
    (RAFFLE_BROKER_URL names RabbitMQ; several workers may run at once)."""
    settings = _settings()
    if settings.broker_url is None and not (relay and consumers):
        _fail("without RAFFLE_BROKER_URL the relay and consumers run in one process: keep both")

    async def run() -> None:
        raffle = bootstrap(settings)
        try:
            await raffle.start()
            if settings.worker_metrics_port is not None:
                raffle.metrics.serve(settings.host, settings.worker_metrics_port)
            click.echo("raffle worker running", err=True)
            await worker.run(raffle, worker.Parts(relay, consumers, jobs))
        finally:
            await raffle.close()

    logs.configure(settings)
    with contextlib.suppress(KeyboardInterrupt):
        # uvloop, as `raffle serve` runs on: its socket writes and callbacks are C, and a
        # worker is mostly round trips to the databases and the broker (~15 % less CPU per
        # delivery in bench/delivery.py).
        _run_or_exit(run, loop_factory=uvloop.new_event_loop)


@main.group()
def user() -> None:
    """Accounts."""


@user.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="An operator account.")
@click.password_option(help="Asked for when not given.")
def create_user_command(name: str, admin: bool, password: str) -> None:
    """Create the account NAME (an operator with --admin)."""

    async def run() -> None:
        raffle = bootstrap(_settings())
        try:
            await create_user(name, password, admin, raffle.uow(), raffle.hasher)
        finally:
            await raffle.close()
        click.echo(f"created {'operator' if admin else 'player'} {name}")

    _run_or_exit(run)


@main.command()
@click.argument("file", type=campaign_path)
def load(file: Path) -> None:
    """Store the awards and strategies of a campaign FILE, all or nothing."""
    campaign = _read(file)

    async def run() -> None:
        raffle = bootstrap(_settings())
        try:
            loaded = await load_campaign(campaign, raffle.uow())
        finally:
            await raffle.close()
        click.echo(
            f"loaded {loaded.awards} awards, {loaded.strategies} strategies, "
            f"{loaded.activities} activities and {loaded.skus} SKUs"
        )

    _run_or_exit(run)


@main.command("simulate")
@click.argument("file", type=campaign_path)
@click.option("--strategy", "strategy_id", type=int, help="Strategy id; default: every one.")
@click.option("--draws", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option(
    "--draw-count",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="The user's draw count (this draw included) seen by every simulated draw.",
)
@click.option("--user", default="simulated-user", show_default=True, help="The drawing user id.")
@click.option("--seed", type=int, help="Reproducible run from a seeded PRNG instead of the CSPRNG.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def simulate_command(
    file: Path,
    strategy_id: int | None,
    draws: int,
    draw_count: int,
    user: str,
    seed: int | None,
    as_json: bool,
) -> None:
    """Run DRAWS draws of a FILE's strategies with in-memory stock and compare with the odds."""
    campaign = _read(file)
    engines = campaign.engines()
    if strategy_id is not None and strategy_id not in engines:
        _fail(f"strategy {strategy_id} is not in {file}; it has {', '.join(map(str, engines))}")
    chosen = [engines[strategy_id]] if strategy_id is not None else list(engines.values())
    rng = SeededRandomSource(seed) if seed is not None else SystemRandomSource()
    ctx = DrawContext(user, draw_count)
    results = []
    for engine in chosen:
        stock = MemoryStock([engine.strategy])
        with click.progressbar(
            length=draws, label=f"strategy {engine.strategy.id}", file=sys.stderr
        ) as bar:
            last = 0

            def advance(done: int) -> None:
                nonlocal last
                bar.update(done - last)
                last = done

            results.append(simulate(engine, ctx, draws, rng, stock, advance))
    titles = {a.id: a.title for a in campaign.awards}
    if as_json:
        payload = [_as_json(r, titles) for r in results]
        click.echo(json.dumps(payload[0] if strategy_id is not None else payload, indent=2))
    else:
        for result in results:
            _print_table(result, titles)


def _as_json(result: Simulation, titles: dict[int, str]) -> dict[str, object]:
    return {
        "strategy": result.strategy_id,
        "draws": result.draws,
        "p_value": result.p_value,
        "prizes": [
            {
                "id": p.award_id,
                "title": titles.get(p.award_id, ""),
                "count": p.count,
                "expected_probability": p.expected_probability,
                "observed_probability": p.observed_probability,
            }
            for p in result.prizes
        ],
    }


def _print_table(result: Simulation, titles: dict[int, str]) -> None:
    click.echo(f"\nstrategy {result.strategy_id}: {result.draws:,} draws")
    click.echo(f"{'award':>8}  {_pad('title', 20)} {'count':>10} {'observed':>10} {'expected':>10}")
    for p in result.prizes:
        click.echo(
            f"{p.award_id:>8}  {_pad(titles.get(p.award_id, ''), 20)} {p.count:>10,} "
            f"{p.observed_probability:>10.6f} {p.expected_probability:>10.6f}"
        )
    click.echo(f"chi-square p-value: {result.p_value:.4g}")


def _pad(text: str, width: int) -> str:
    """Left-align in `width` terminal columns; CJK characters take two."""
    used = 0
    for i, char in enumerate(text):
        wide = 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if used + wide > width:
            return text[:i] + " " * (width - used)
        used += wide
    return text + " " * (width - used)


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        _fail("invalid settings: " + "; ".join(e["msg"] for e in error.errors()))


def _read(file: Path) -> Campaign:
    try:
        return read_campaign(file)
    except InvalidCampaignFile as error:
        _fail("\n".join([f"{file} is invalid:", *(f"  {p}" for p in error.problems)]))


def _run_or_exit(
    run: Callable[[], Awaitable[None]],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> None:
    async def main() -> None:
        await run()

    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(main())
    except RaffleError as error:
        _fail(f"{error.code}: {error}")


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(2)
