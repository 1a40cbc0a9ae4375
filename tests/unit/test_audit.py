"""The audit chain on fakes: entries chained and walked, every kind of break named, and the
use cases that append (a review step, an unlock, a resend, a grant) doing so in their own
transaction, and not when they change nothing."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.activity import ActivityState, IllegalTransition
from raffle.domain.audit import (
    GENESIS,
    Action,
    AuditEntry,
    BrokenLink,
    ChainHead,
    ChainWalk,
    entry_hash,
)
from raffle.domain.draws import Win, WinState
from raffle.domain.fulfilment import AccessGrant
from raffle.domain.users import User
from raffle.service import accounts
from raffle.service.activities import change_state
from raffle.service.audit import verify
from raffle.service.delivery import resend
from raffle.service.effects import grant_access
from tests.unit.auth_fakes import FakeUserUnitOfWork
from tests.unit.fakes import FakeClock
from tests.unit.usecase_world import ACTIVITY, STRATEGY, world

T0 = datetime(2026, 11, 25, 6, tzinfo=UTC)


def chain(count: int, name: str = "config") -> list[AuditEntry]:
    head, entries = ChainHead(name), []
    for n in range(count):
        action = Action("account.lock", f"user{n}", T0 + timedelta(seconds=n), "root", {"n": n})
        entries.append(entry := AuditEntry.after(head, action))
        head = ChainHead(name, entry.seq, entry.hash)
    return entries


def walked(entries: list[AuditEntry], head: ChainHead | None = None) -> BrokenLink | None:
    last = entries[-1] if entries else None
    if head is None:
        head = ChainHead("config") if last is None else ChainHead("config", last.seq, last.hash)
    walk = ChainWalk(head)
    walk.walk(entries)
    return walk.end()


def test_each_entry_holds_the_hash_of_the_one_before() -> None:
    entries = chain(3)
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev == GENESIS
    assert [e.prev for e in entries[1:]] == [e.hash for e in entries[:-1]]
    assert len({e.hash for e in entries}) == 3
    assert walked(entries) is None
    assert walked([]) is None


def test_the_hash_covers_every_field_and_the_previous_hash() -> None:
    entry = chain(1)[0]
    for name, other in [("chain", "shard-0-000"), ("seq", 2), ("at", T0 + timedelta(1)),
                        ("kind", "account.unlock"), ("subject", "user9"), ("actor", None),
                        ("details", '{"n":1}'), ("prev", "1" * 64)]:  # fmt: skip
        assert dataclasses.replace(entry, **{name: other}).recomputed() != entry.hash, name


def test_the_encoding_is_canonical_whatever_the_order_of_details() -> None:
    one = AuditEntry.after(ChainHead("config"), Action("k", "s", T0, None, {"a": 1, "b": "中"}))
    two = AuditEntry.after(ChainHead("config"), Action("k", "s", T0, None, {"b": "中", "a": 1}))
    assert one == two
    assert one.details == '{"a":1,"b":"中"}'
    fields = ("config", 1, T0, "k", "s", None, one.details, GENESIS)
    assert one.hash == entry_hash(*fields)


def test_an_altered_entry_is_named() -> None:
    entries = chain(5)
    entries[2] = dataclasses.replace(entries[2], actor="mallory")
    broken = walked(entries, ChainHead("config", 5, entries[4].hash))
    assert broken is not None
    assert broken.seq == 3
    assert "altered" in broken.what


def test_an_entry_rehashed_after_a_change_breaks_the_next_link() -> None:
    entries = chain(5)
    changed = dataclasses.replace(entries[1], subject="user9")
    entries[1] = dataclasses.replace(changed, hash=changed.recomputed())
    broken = walked(entries, ChainHead("config", 5, entries[4].hash))
    assert broken is not None
    assert broken.seq == 3
    assert "previous hash" in broken.what


def test_a_deleted_entry_is_named_and_so_is_a_deleted_last_one() -> None:
    entries = chain(5)
    head = ChainHead("config", 5, entries[4].hash)
    middle = walked(entries[:1] + entries[2:], head)
    assert middle is not None
    assert (middle.seq, middle.what) == (2, "missing (the next entry is #3)")
    last = walked(entries[:4], head)
    assert last is not None
    assert last.seq == 5
    assert "entries missing" in last.what
    first = walked(entries[1:], head)
    assert first is not None
    assert first.seq == 1


def test_a_whole_chain_rewritten_differs_from_a_head_written_down() -> None:
    written_down = ChainHead("config", 5, chain(5)[4].hash)
    first = chain(4)
    other = Action("account.unlock", "x", T0)
    rewritten = [*first, AuditEntry.after(ChainHead("config", 4, first[3].hash), other)]
    assert walked(rewritten) is None  # consistent with itself, with its own head
    assert walked(rewritten, written_down) is not None


def test_long_subjects_and_actors_are_cut_to_the_columns() -> None:
    entry = AuditEntry.after(ChainHead("config"), Action("k" * 60, "s" * 200, T0, "a" * 100))
    assert (len(entry.kind), len(entry.subject), len(entry.actor or "")) == (48, 128, 64)
    assert entry.recomputed() == entry.hash


async def test_a_review_step_is_appended_with_its_states_and_a_refused_one_is_not() -> None:
    w = world()
    w.set_state(ActivityState.EDIT)
    await change_state(ACTIVITY, "submit", w.uow(), now=T0, by="root")
    with pytest.raises(IllegalTransition):
        await change_state(ACTIVITY, "close", w.uow(), now=T0, by="root")
    [entry] = w.config.audit
    assert (entry.kind, entry.subject, entry.actor) == ("activity.submit", str(ACTIVITY), "root")
    assert entry.details_json() == {"from": "edit", "to": "submitted"}
    assert [r.broken for r in await verify(w.uow, w.shards)] == [None, None]


async def test_an_unlock_is_appended_with_who_and_why() -> None:
    uow = FakeUserUnitOfWork()
    async with uow:
        await uow.users.add(User("alice", "hash"))
        await uow.commit()
    await accounts.unlock("alice", by="root", reason="paid back", uow=uow, clock=FakeClock())
    [entry] = uow.committed_audit
    assert (entry.kind, entry.subject, entry.actor) == ("account.unlock", "alice", "root")
    assert entry.details_json() == {"reason": "paid back"}


async def test_a_resend_is_appended_on_the_winner_shard() -> None:
    w = world()
    win = Win("order-1", "alice", ACTIVITY, STRATEGY, 2, None, "", T0, WinState.FAILED)
    w.shards.store.wins[win.order_id] = win
    await resend("order-1", w.shards, T0, by="root")
    [entry] = w.shards.store.audit
    assert (entry.kind, entry.subject, entry.actor) == ("delivery.resend", "order-1", "root")
    assert entry.chain == "shard-0-000"


async def test_a_grant_is_appended_once_however_often_it_is_given() -> None:
    w = world()
    grant = AccessGrant("alice", "course-1", "order-1", T0)
    for _ in range(2):
        async with w.shards.for_user("alice") as uow:
            await grant_access(uow, grant)
            await uow.commit()
    [entry] = w.shards.store.audit
    assert (entry.kind, entry.subject) == ("grant.access", "course-1")
    assert entry.details_json() == {"user_id": "alice", "order_id": "order-1"}
