"""`raffle verify`: receipts recomputed from their revealed seeds and the published odds."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from raffle.bootstrap import Raffle
from raffle.domain.receipts import BadReceipt, Receipt
from raffle.entrypoints.cli_common import Stop, with_raffle
from raffle.service.receipts import Verdict, verify
from raffle.service.scheduled import verify_draw

receipt_path = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("verify")
@click.argument("files", nargs=-1, required=True, type=receipt_path)
def verify_command(files: tuple[Path, ...]) -> None:
    """Check receipts (FILES: a receipt as JSON, a JSON list of them, or one a line): each
    is computed again from its period's revealed seed and the activity's published odds.
    Prints "matches" or the fields that differ, a line per receipt; exits 1 if any differs,
    3 if any seed is still secret."""
    receipts = [(f"{file}:{n}", r) for file in files for n, r in enumerate(_read(file), 1)]

    counts = {"matches": 0, "differs": 0, "secret": 0}

    async def use(raffle: Raffle) -> None:
        now = raffle.clock.now()
        for where, receipt in receipts:
            verdict = await verify(
                receipt, config=raffle.uow, catalogue=raffle.catalogue, seeds=raffle.seeds,
                now=now,
            )  # fmt: skip
            kind, line = _said(verdict)
            counts[kind] += 1
            click.echo(f"{where} order {receipt.order_id}: {line}")
        click.echo(
            f"{len(receipts)} receipt(s): {counts['matches']} match, {counts['differs']} differ, "
            f"{counts['secret']} not revealed yet"
        )

    with_raffle(use)
    if counts["differs"] or counts["secret"]:
        sys.exit(1 if counts["differs"] else 3)


def _said(verdict: Verdict) -> tuple[str, str]:
    if not verdict.revealed:
        return "secret", "its seed is not revealed yet"
    if verdict.matches:
        return "matches", "matches"
    return "differs", f"differs: {', '.join(verdict.differs)}"


def _read(file: Path) -> Iterator[Receipt]:
    text = file.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text)
        items = data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        try:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as error:
            raise Stop(f"{file} is not JSON: {error}") from None
    for n, item in enumerate(items, 1):
        try:
            yield Receipt.from_json(item)
        except BadReceipt as error:
            raise Stop(f"{file}: receipt {n}: {error}") from None


@click.command("verify-draw")
@click.argument("activity_id", type=int)
@click.argument("entrants", type=receipt_path)
def verify_draw_command(activity_id: int, entrants: Path) -> None:
    """Check a scheduled activity's winners: computed again from ENTRANTS (the entrant list
    file, as `GET /api/admin/activities/{id}/entrants` gives it: its SHA-256 is the published
    hash), the revealed seed and the published terms. Prints "matches" or what differs;
    exits 1 if anything differs, 3 if the draw has not been made yet."""
    listed = entrants.read_bytes()
    said: list[str] = []
    drawn = [True]

    async def use(raffle: Raffle) -> None:
        activity = await raffle.catalogue.activity(activity_id)
        verdict = await verify_draw(activity, listed, uow=raffle.uow, catalogue=raffle.catalogue)
        drawn[0] = verdict.drawn
        said.extend(verdict.differs)

    with_raffle(use)
    if not drawn[0]:
        click.echo(f"activity {activity_id}: not drawn yet, its seed is secret")
        sys.exit(3)
    for line in said:
        click.echo(f"activity {activity_id}: differs: {line}")
    if said:
        sys.exit(1)
    click.echo(f"activity {activity_id}: matches")
