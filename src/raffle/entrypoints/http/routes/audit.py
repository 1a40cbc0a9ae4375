"""Operators: the audit chains' heads, to be written down where this system cannot change them."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from raffle.domain.audit import ChainHead
from raffle.entrypoints.http.deps import AdminSession, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.problems import documented
from raffle.service import audit

router = APIRouter(prefix="/api/admin/audit", tags=["operator"])

HEAD = {"chain": "shard-0-003", "seq": 1024, "hash": "9f2c" + "0" * 60}


class ChainHeadOut(BaseModel):
    model_config = examples_of(HEAD)

    chain: str  # `config`, or `shard-<database>-<table>`
    seq: int  # the last entry's sequence number (0: none yet)
    hash: str  # its SHA-256, hex: it pins every entry up to it

    @classmethod
    def of(cls, head: ChainHead) -> ChainHeadOut:
        return cls(chain=head.chain, seq=head.seq, hash=head.hash)


@router.get("/heads", responses=documented(401, 403))
async def heads(session: AdminSession, raffle: RaffleDep) -> list[ChainHeadOut]:
    """Every chain's head: the configuration's, then each shard's. `raffle audit verify`
    walks each chain to it."""
    return [ChainHeadOut.of(h) for h in await audit.heads(raffle.uow, raffle.shards)]
