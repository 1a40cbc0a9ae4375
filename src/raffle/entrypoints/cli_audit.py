"""`raffle audit`: every audit chain walked to its head, and the heads to write down."""

from __future__ import annotations

import sys

import click

from raffle.bootstrap import Raffle
from raffle.domain.audit import ChainHead
from raffle.entrypoints.cli_common import with_raffle
from raffle.service import audit as audit_log


@click.group("audit")
def audit() -> None:
    """The hash-chained audit log of operators' actions, payments and grants."""


@audit.command("verify")
def verify_command() -> None:
    """Walk every chain (the configuration's, each shard's) from its first entry to its
    head. Prints each chain's head, or its first broken link: the entry's sequence number
    and what differs. Exits 1 if any chain is broken."""
    broken = 0

    async def use(raffle: Raffle) -> None:
        nonlocal broken
        for report in await audit_log.verify(raffle.uow, raffle.shards):
            if report.broken is None:
                click.echo(f"{_head(report.head)}: ok")
            else:
                broken += 1
                click.echo(f"{report.head.chain}: BROKEN at #{report.broken.seq}: "
                           f"{report.broken.what}")  # fmt: skip

    with_raffle(use)
    if broken:
        click.echo(f"{broken} chain(s) broken", err=True)
        sys.exit(1)


@audit.command("heads")
def heads_command() -> None:
    """Print each chain's head (sequence number and hash), to be written down elsewhere."""

    async def use(raffle: Raffle) -> None:
        for head in await audit_log.heads(raffle.uow, raffle.shards):
            click.echo(_head(head))

    with_raffle(use)


def _head(head: ChainHead) -> str:
    return f"{head.chain} #{head.seq} {head.hash}"
