"""What the `raffle` commands share: settings read, services checked, failures in one line."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import NoReturn

import click
from pydantic import ValidationError
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text
from sqlalchemy.exc import DBAPIError

from raffle.adapters.campaign_file import InvalidCampaignFile, read_campaign
from raffle.adapters.probes import failures, reason
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.campaign import Campaign
from raffle.domain.errors import RaffleError
from raffle.settings import Settings, problems

campaign_path = click.Path(exists=True, dir_okay=False, path_type=Path)

# How long a service may take to answer at start: a down one is told well within 5 s.
STARTUP_PROBE_SECONDS = 2.0


class Stop(Exception):
    """Ends a command with its message as the one line an operator reads."""


def settings() -> Settings:
    try:
        return Settings()
    except ValidationError as error:
        fail("; ".join(problems(error)))


def read(file: Path) -> Campaign:
    """The campaign of a file, or every problem of it, each with its line."""
    try:
        return read_campaign(file)
    except InvalidCampaignFile as error:
        fail("\n".join([f"{file} is invalid:", *(f"  {p}" for p in error.problems)]))


def fail(message: str) -> NoReturn:
    click.echo(f"raffle: {message}", err=True)
    sys.exit(2)


def run(
    work: Callable[[], Awaitable[None]],
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
) -> None:
    """Run `work` on a new event loop; a raffle error or a Stop ends the command in one line."""

    async def main() -> None:
        await work()

    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(main())
    except RaffleError as error:
        fail(f"{error.code}: {error}")
    except Stop as error:
        fail(str(error))
    except DBAPIError as error:  # most often a database no migration has reached yet
        fail(f"the database refused: {reason(error)} (has `raffle migrate` run on it?)")


async def require_services(raffle: Raffle) -> None:
    """Stop, naming the first service that does not answer and the setting pointing at it."""
    # Clients log their own failure to connect (aiormq does, at ERROR): the one line below
    # says it, with the setting to change.
    logging.disable(logging.CRITICAL)
    try:
        found = await failures(raffle.probes, STARTUP_PROBE_SECONDS)
    finally:
        logging.disable(logging.NOTSET)
    for probe in raffle.probes:
        if (why := found[probe.name]) is not None:
            raise Stop(probe.unreachable(why))


def with_raffle(use: Callable[[Raffle], Awaitable[None]]) -> None:
    """Run `use` on an application wired from the settings, once its services answer."""

    async def work() -> None:
        raffle = bootstrap(settings())
        try:
            await require_services(raffle)
            await use(raffle)
        finally:
            await raffle.close()

    run(work)


def print_table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> None:
    """A table on stdout whose columns line up whatever the script: a Chinese character
    takes two columns of a terminal, and rich counts it so. Numbers align right; text is
    shown as written (no rich markup)."""
    table = Table(*columns, title=title or None, box=box.SIMPLE_HEAD, title_justify="left")
    for row in rows:
        table.add_row(*(Text(_cell(value)) for value in row))
    for column, first in zip(table.columns, rows[0] if rows else (), strict=False):
        if isinstance(first, int | float) and not isinstance(first, bool):
            column.justify = "right"
    Console(highlight=False).print(table)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
