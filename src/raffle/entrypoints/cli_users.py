"""`raffle user`: create, list, lock and unlock accounts, reset a password."""

from __future__ import annotations

import sys

import click

from raffle.bootstrap import Raffle
from raffle.entrypoints.cli_common import fail, print_table, with_raffle
from raffle.service import accounts
from raffle.service.auth import create_user


@click.group()
def user() -> None:
    """Accounts."""


@user.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="An operator account.")
@click.password_option(help="Asked for when not given.")
def create_command(name: str, admin: bool, password: str) -> None:
    """Create the account NAME (an operator with --admin)."""

    async def use(raffle: Raffle) -> None:
        await create_user(name, password, admin, raffle.uow(), raffle.hasher)
        click.echo(f"created {'operator' if admin else 'player'} {name}")

    with_raffle(use)


@user.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
def list_command(limit: int) -> None:
    """The accounts by name: role and status."""

    async def use(raffle: Raffle) -> None:
        found, total = await accounts.listed(raffle.uow(), limit)
        rows = [(u.id, "operator" if u.is_admin else "player", u.status.value) for u in found]
        print_table(("name", "role", "status"), rows)
        noun = "account" if total == 1 else "accounts"
        click.echo(f"{len(found)} of {total} {noun}" if total > len(found) else f"{total} {noun}")

    with_raffle(use)


@user.command("password")
@click.argument("name")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read it from the first line of stdin.")
def password_command(name: str, from_stdin: bool) -> None:
    """Set a new password for NAME (asked for twice, unless --stdin); its sessions end."""
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            fail("no password on stdin")
    else:
        password = click.prompt("New password", hide_input=True, confirmation_prompt=True)

    async def use(raffle: Raffle) -> None:
        await accounts.reset_password(
            name, password, uow=raffle.uow(), hasher=raffle.hasher, sessions=raffle.sessions
        )
        click.echo(f"password of {name} changed; its sessions ended")

    with_raffle(use)


@user.command("lock")
@click.argument("name")
@click.option("--reason", default="", help="Why, kept with the lock.")
def lock_command(name: str, reason: str) -> None:
    """Lock NAME: its sessions end and it cannot sign in; nothing it owns is lost."""

    async def use(raffle: Raffle) -> None:
        await accounts.lock(
            name,
            by=None,
            reason=reason,
            uow=raffle.uow(),
            sessions=raffle.sessions,
            clock=raffle.clock,
        )
        click.echo(f"locked {name}; its sessions ended")

    with_raffle(use)


@user.command("unlock")
@click.argument("name")
@click.option("--reason", default="", help="Why, kept with the unlock.")
def unlock_command(name: str, reason: str) -> None:
    """Let NAME sign in again."""

    async def use(raffle: Raffle) -> None:
        await accounts.unlock(name, by=None, reason=reason, uow=raffle.uow(), clock=raffle.clock)
        click.echo(f"unlocked {name}")

    with_raffle(use)
