"""`raffle deny`: add, list and lift deny entries from a shell."""

from __future__ import annotations

from datetime import timedelta

import click

from raffle.bootstrap import Raffle
from raffle.domain.deny import DenyKind
from raffle.entrypoints.cli_common import print_table, with_raffle
from raffle.service import deny_lists
from raffle.service.deny_lists import NewEntry
from raffle.service.ports.deny import DenyQuery

ACTOR = "cli"  # who added an entry from a shell: no session there, the host's operator


@click.group()
def deny() -> None:
    """Deny lists: users, phones, addresses or CIDR ranges, device serials."""


@deny.command("add")
@click.argument("kind", type=click.Choice([k.value for k in DenyKind]))
@click.argument("value")
@click.option("--reason", required=True)
@click.option("--minutes", type=click.IntRange(min=1), help="Until lifted, if not given.")
def add_command(kind: str, value: str, reason: str, minutes: int | None) -> None:
    """Deny VALUE (a user id, phone, IP address or CIDR range, or device serial)."""

    async def use(raffle: Raffle) -> None:
        expires = raffle.clock.now() + timedelta(minutes=minutes) if minutes else None
        new = NewEntry(DenyKind(kind), value, reason, expires)
        entry = await deny_lists.add_entry(new, ACTOR, raffle.deny, raffle.phones)
        click.echo(f"denied {entry.kind} {entry.value} (entry {entry.id})")

    with_raffle(use)


@deny.command("list")
@click.option("--kind", type=click.Choice([k.value for k in DenyKind]))
@click.option("--limit", type=click.IntRange(min=1, max=1000), default=100, show_default=True)
def list_command(kind: str | None, limit: int) -> None:
    """Entries in force, newest first."""

    async def use(raffle: Raffle) -> None:
        query = DenyQuery(DenyKind(kind) if kind else None, in_force_at=raffle.clock.now())
        found = await deny_lists.entries(query, None, limit, raffle.deny, raffle.phones)
        rows = [
            (e.id, e.kind.value, e.value, e.reason, e.added_by, _when(e.expires_at)) for e in found
        ]
        print_table(("id", "kind", "value", "reason", "added by", "expires (UTC)"), rows)

    with_raffle(use)


@deny.command("lift")
@click.argument("entry_id", type=click.IntRange(min=1))
def lift_command(entry_id: int) -> None:
    """Lift entry ENTRY_ID: it denies no more."""

    async def use(raffle: Raffle) -> None:
        entry = await deny_lists.lift(entry_id, raffle.deny, raffle.blocking, by=ACTOR)
        click.echo(f"lifted {entry.kind} {entry.value}")

    with_raffle(use)


def _when(at: object) -> str:
    return "never" if at is None else f"{at:%Y-%m-%d %H:%M}"
