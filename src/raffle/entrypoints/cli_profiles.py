"""`raffle profile import` and `export`: profiles in CSV or JSON Lines files."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from raffle.adapters.profile_file import FORMATS, Format, read_profiles, write_profiles
from raffle.bootstrap import Raffle
from raffle.entrypoints.cli_common import fail, print_table, with_raffle
from raffle.service.profile_import import ImportReport, import_profiles
from raffle.service.profiles import every_profile

PARTLY_REFUSED = 1  # the exit status when some rows were refused (2: nothing could run)


format_option = click.option(
    "--format",
    "kind",
    type=click.Choice(["csv", "jsonl"]),
    help="The file's format.  [default: by its extension: .csv, .jsonl or .ndjson]",
)


@click.group()
def profile() -> None:
    """Players' profiles."""


@profile.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@format_option
def import_command(file: Path, kind: Format | None) -> None:
    """Import profiles from FILE: each row sets the fields the file names; importing it again
    changes nothing. Bad rows are listed by line and skipped whole (exit status 1)."""
    chosen = _format(file, kind)
    data = file.read_bytes()

    async def use(raffle: Raffle) -> None:
        rows = read_profiles(data, chosen)  # a file refused whole: one line, as any error
        columns = (TextColumn("importing"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn())  # fmt: skip
        with Progress(*columns, console=Console(stderr=True)) as bar:
            task = bar.add_task("import", total=len(rows))
            report = await import_profiles(
                rows, raffle.profile_care(), lambda done: bar.update(task, completed=done)
            )
        _print(file, report)
        if report.problems:
            sys.exit(PARTLY_REFUSED)

    with_raffle(use)


@profile.command("export")
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
@format_option
def export_command(file: Path, kind: Format | None) -> None:
    """Write every profile to FILE, as `raffle profile import` reads it back unchanged."""
    chosen = _format(file, kind)
    found: list[str] = []  # written once the event loop is done: no blocking file I/O in it

    async def use(raffle: Raffle) -> None:
        profiles = await every_profile(raffle.uow)
        found.append(write_profiles(profiles, chosen))
        click.echo(f"{len(profiles)} profiles to {file.name}")

    with_raffle(use)
    file.write_text(found[0], encoding="utf-8")


def _format(file: Path, kind: Format | None) -> Format:
    """The format asked for, else the one the file's extension names."""
    found = kind or FORMATS.get(file.suffix.lower())
    if found is None:
        fail(f"cannot tell the format of {file.name}: pass --format csv or --format jsonl")
    return found


def _print(file: Path, report: ImportReport) -> None:
    click.echo(
        f"{file.name}: {report.rows} rows: {report.created} created, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.refused} refused"
    )
    if report.problems:
        rows = [(p.line, p.code, p.field, p.message) for p in report.problems]
        print_table(("line", "code", "field", "problem"), rows)
