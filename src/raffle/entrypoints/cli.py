"""The `raffle` command line."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

import click
import uvloop

from raffle.bootstrap import Raffle, bootstrap
from raffle.entrypoints import logs, serving, worker
from raffle.entrypoints.cli_audit import audit
from raffle.entrypoints.cli_common import (
    campaign_path,
    fail,
    read,
    require_services,
    run,
    settings,
    with_raffle,
)
from raffle.entrypoints.cli_deny import deny
from raffle.entrypoints.cli_profiles import profile
from raffle.entrypoints.cli_route import route_command
from raffle.entrypoints.cli_simulate import simulate_command
from raffle.entrypoints.cli_users import user
from raffle.entrypoints.cli_verify import verify_command, verify_draw_command
from raffle.entrypoints.demo_payments import start_simulator
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings


@click.group()
@click.version_option(package_name="raffle", message="%(prog)s %(version)s")
def main() -> None:
    """raffle: a marketing raffle platform with exact odds."""


main.add_command(user)
main.add_command(simulate_command)
main.add_command(profile)
main.add_command(route_command)
main.add_command(deny)
main.add_command(verify_command)
main.add_command(audit)
main.add_command(verify_draw_command)


@main.command()
def migrate() -> None:
    """Create or upgrade the schema of every database (RAFFLE_DATABASE_URL, RAFFLE_SHARD_URLS)."""
    chosen = settings()

    async def work() -> None:
        raffle = bootstrap(chosen)
        try:
            await require_services(raffle)
        finally:
            await raffle.close()
        await serving.migrate(chosen)

    run(work)
    click.echo(f"{len(chosen.database_urls)} database(s) up to date")


@main.command()
@click.option("--host", help="Listen on this address.  [default: RAFFLE_HOST, 127.0.0.1]")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    help="Listen on this port.  [default: RAFFLE_PORT, 8000]",
)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True)
def serve(host: str | None, port: int | None, workers: int) -> None:
    """Run the HTTP API and the pages. It first checks that every service it is configured
    with answers. On the embedded SQLite default it also migrates, and loads the demo
    campaign into an empty database."""
    chosen = settings()
    chosen = chosen.model_copy(update={"host": host or chosen.host, "port": port or chosen.port})
    if workers > 1 and chosen.redis_url is None:
        # Without Redis, stock and rate limits are counted in the process: two processes
        # would each hand out the whole stock.
        fail("more than one worker needs RAFFLE_REDIS_URL (stock is counted in-process)")
    if workers > 1 and chosen.database_url.startswith("sqlite"):
        # SQLite has one writer: the processes' draws and relays wait on each other's lock
        # until it times out ("database is locked").
        fail("more than one worker needs PostgreSQL or MariaDB (RAFFLE_DATABASE_URL is SQLite)")

    async def check() -> None:
        raffle = bootstrap(chosen)
        try:
            await require_services(raffle)
        finally:
            await raffle.close()
        if chosen.database_url.startswith("sqlite"):
            await serving.prepare_embedded(chosen)

    run(check)
    base = f"http://{chosen.host}:{chosen.port}"
    click.echo(f"raffle on {base}/ (console {base}/console, API {base}/docs)", err=True)
    serving.serve(chosen, workers)


@main.command()
def demo() -> None:
    """Run the embedded service on a fresh database with the demo campaign running and an
    operator account, and print the address of each page (RAFFLE_HOST:RAFFLE_PORT)."""
    with tempfile.TemporaryDirectory(prefix="raffle-demo-") as folder:
        chosen = serving.demo_settings(Path(folder))
        base = f"http://{chosen.host}:{chosen.port}"
        simulator, sim_url = start_simulator(Path(folder), base)
        chosen = Settings()  # now with the simulator as its payment gateway
        password = ""

        async def prepare() -> None:
            nonlocal password
            password = await serving.prepare_demo(chosen)

        run(prepare)
        operator = f"log in as {serving.DEMO_OPERATOR} / {password}"
        click.echo(f"raffle demo: the campaign {serving.DEMO.name}, activity 100301 running")
        click.echo(f"  player page       {base}/")
        click.echo(f"  operator console  {base}/console  ({operator})")
        click.echo(f"  API               {base}/docs")
        click.echo(f"  Alipay simulator  {sim_url}/  (pay the demo's QR codes there)")
        sys.stdout.flush()
        try:
            serving.serve(chosen)
        finally:
            simulator.terminate()
            simulator.wait(10)


@main.command("worker")
@click.option("--relay/--no-relay", default=True, help="Publish the outbox to the broker.")
@click.option("--consumers/--no-consumers", default=True, help="Deliver wins; dead letters.")
@click.option("--jobs/--no-jobs", default=True, help="Activity clock, sweeps, compensation.")
def worker_command(relay: bool, consumers: bool, jobs: bool) -> None:
    """Run the outbox relay, the delivery consumers and the scheduled jobs until stopped
    (RAFFLE_BROKER_URL names RabbitMQ; several workers may run at once). It first checks
    that every service it is configured with answers."""
    chosen = settings()
    if chosen.broker_url is None and not (relay and consumers):
        fail("without RAFFLE_BROKER_URL the relay and consumers run in one process: keep both")

    async def work() -> None:
        raffle = bootstrap(chosen)
        try:
            await require_services(raffle)
            await raffle.start()
            if chosen.worker_metrics_port is not None:
                raffle.metrics.serve(chosen.host, chosen.worker_metrics_port)
            click.echo("raffle worker running", err=True)
            await worker.run(raffle, worker.Parts(relay, consumers, jobs))
        finally:
            await raffle.close()

    logs.configure(chosen)
    with contextlib.suppress(KeyboardInterrupt):
        # uvloop, as `raffle serve` runs on: its socket writes and callbacks are C, and a
        # worker is mostly round trips to the databases and the broker (bench/delivery.py).
        run(work, loop_factory=uvloop.new_event_loop)


@main.command()
@click.argument("file", type=campaign_path)
def load(file: Path) -> None:
    """Store the awards and strategies of a campaign FILE, all or nothing."""
    campaign = read(file)

    async def use(raffle: Raffle) -> None:
        loaded = await load_campaign(campaign, raffle.uow(), raffle.tags, clock=raffle.clock)
        click.echo(
            f"loaded {loaded.awards} awards, {loaded.strategies} strategies, "
            f"{loaded.activities} activities and {loaded.skus} SKUs"
            + (f", and {loaded.tags} tags" if loaded.tags else "")
        )

    with_raffle(use)
