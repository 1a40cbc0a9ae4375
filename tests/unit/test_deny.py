"""The deny list as a process holds it: exact keys, CIDR ranges of both IP versions, expiry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.blocking import BlockEvent, BlockRule, BlockSubject
from raffle.domain.deny import (
    DenyEntry,
    DenyKind,
    DenyList,
    InvalidDenyEntry,
    checked_value,
    network,
)
from raffle.service.deny_board import DenyBoard
from raffle.service.ports.deny import StoredDenials
from tests.unit.fakes import FakeClock

NOW = datetime(2026, 11, 25, 8, tzinfo=UTC)
IP, USER, PHONE, SN = DenyKind.IP, DenyKind.USER, DenyKind.PHONE, DenyKind.SN


def entry(kind: DenyKind, value: str, expires: datetime | None = None) -> DenyEntry:
    return DenyEntry(kind, checked_value(kind, value), "why", "root", NOW, expires)


def test_exact_keys_deny_only_their_own_kind() -> None:
    listed = DenyList([entry(USER, "mallory"), entry(PHONE, "+8613800138000"), entry(SN, "S1")])
    assert listed.denies(user="mallory")
    assert listed.denies(phone="+8613800138000")
    assert listed.denies(user="alice", sn="S1")
    assert not listed.denies(user="S1", sn="mallory")
    assert not listed.denies(user="alice", phone=None, ip="10.0.0.1")


@pytest.mark.parametrize(
    ("listed", "inside", "outside"),
    [
        ("203.0.113.0/24", "203.0.113.255", "203.0.114.0"),
        ("10.1.2.3/16", "10.1.250.7", "10.2.0.0"),  # host bits dropped: 10.1.0.0/16
        ("192.0.2.7", "192.0.2.7", "192.0.2.8"),  # an address alone is its /32
        ("0.0.0.0/0", "8.8.8.8", "::1"),  # every IPv4 address, no IPv6 one
        ("2001:db8::/32", "2001:db8:ffff::1", "2001:db9::1"),
        ("2001:db8::1", "2001:db8::1", "2001:db8::2"),
        ("198.51.100.0/24", "::ffff:198.51.100.20", "::ffff:198.51.101.20"),  # mapped IPv4
    ],
)
def test_a_range_denies_every_address_in_it_and_no_other(
    listed: str, inside: str, outside: str
) -> None:
    deny = DenyList([entry(IP, listed)])
    assert deny.denies(ip=inside)
    assert not deny.denies(ip=outside)


def test_many_ranges_of_many_lengths_are_each_found() -> None:
    ranges = [f"10.{i}.{j}.0/{24 - (i + j) % 9}" for i in range(40) for j in range(0, 250, 10)]
    deny = DenyList([entry(IP, r) for r in ranges])
    for text in ranges:
        net = network(text)
        first = net.split("/")[0]
        assert deny.denies(ip=first), net
    assert not deny.denies(ip="11.0.0.1")


def test_an_expired_entry_no_longer_denies_and_the_latest_expiry_wins() -> None:
    soon, later = NOW + timedelta(minutes=5), NOW + timedelta(hours=2)
    deny = DenyList(
        [
            entry(USER, "mallory", soon),
            entry(USER, "mallory", later),
            entry(USER, "trudy", soon),
            entry(IP, "203.0.113.0/24", soon),
            entry(IP, "203.0.113.0/24"),  # for ever
            entry(IP, "198.51.100.0/24", soon),
        ]
    )
    assert deny.valid_until == soon
    after = deny.at(NOW + timedelta(hours=1))
    assert after.valid_until == later
    assert after.denies(user="mallory")
    assert not after.denies(user="trudy")
    assert after.denies(ip="203.0.113.1")
    assert not after.denies(ip="198.51.100.1")
    assert not after.at(NOW + timedelta(hours=3)).denies(user="mallory")
    assert after.at(NOW + timedelta(hours=3)).valid_until is None
    assert DenyList([entry(USER, "gone", soon)], NOW + timedelta(hours=1)).entries == []


def test_nested_overlapping_and_adjacent_ranges_are_merged_without_losing_an_address() -> None:
    ranges = ["10.0.0.0/8", "10.1.0.0/16", "10.255.255.255", "11.0.0.0/24", "11.0.1.0/24",
              "12.0.0.128/25", "12.0.0.0/25", "2001:db8::/64", "2001:db8::1"]  # fmt: skip
    deny = DenyList([entry(IP, r) for r in ranges])
    for inside in ("10.0.0.0", "10.255.255.255", "11.0.0.0", "11.0.1.255", "12.0.0.0",
                   "12.0.0.255", "2001:db8::ffff"):  # fmt: skip
        assert deny.denies(ip=inside), inside
    for outside in ("9.255.255.255", "11.0.2.0", "12.0.1.0", "2001:db8:0:1::", "::"):
        assert not deny.denies(ip=outside), outside


def test_a_client_that_is_no_address_is_in_no_range() -> None:
    assert not DenyList([entry(IP, "0.0.0.0/0")]).denies(ip="testclient")


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "300.1.1.1", "", "a" * 65, "2001:db8::/129"])
def test_values_that_cannot_be_listed_are_refused(bad: str) -> None:
    with pytest.raises(InvalidDenyEntry):
        checked_value(IP if "a" not in bad else USER, bad)


def test_a_rule_out_of_bounds_is_refused() -> None:
    with pytest.raises(InvalidDenyEntry):
        BlockRule(BlockEvent.REFUSED_DRAW, BlockSubject.USER, 0, 1, 60, "root", NOW)
    with pytest.raises(InvalidDenyEntry):
        BlockRule(BlockEvent.FAILED_LOGIN, BlockSubject.IP, 5, 1, 10**9, "root", NOW)
    rule = BlockRule(BlockEvent.REFUSED_DRAW, BlockSubject.USER, 30, 1, 60, "root", NOW, 4)
    assert rule.subject.kind is USER
    assert rule.reason == "automatic: more than 30 refused_draw in 1 min (rule 4)"


def test_an_ipv4_mapped_range_is_kept_as_the_ipv4_range() -> None:
    assert network("::ffff:10.0.0.0/104") == "10.0.0.0/8"
    assert DenyList([entry(IP, "::ffff:10.0.0.0/104")]).denies(ip="10.9.9.9")


class Store:
    """The store's part the board reads: a version, and what a load returns."""

    def __init__(self) -> None:
        self.stored = StoredDenials(0, [], [])
        self.loads = 0

    async def version(self) -> int:
        return self.stored.version

    async def load(self, now: datetime) -> StoredDenials:
        self.loads += 1
        return self.stored


class NoNews:
    async def announce(self, version: int) -> None:
        return None

    async def changes(self) -> AsyncIterator[None]:
        yield


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_board_reads_on_a_new_version_and_again_after_the_reload_interval() -> None:
    store, clock, ticks = Store(), FakeClock(NOW), Ticks()
    board = DenyBoard(store, NoNews(), clock, reload_seconds=300, monotonic=ticks)
    await board.refresh()
    assert store.loads == 1
    await board.refresh()
    assert store.loads == 1  # same version, read recently: nothing read
    store.stored = StoredDenials(1, [entry(USER, "mallory", NOW + timedelta(minutes=5))], [])
    await board.refresh()
    assert (store.loads, board.version) == (2, 1)
    assert board.denies(user="mallory")
    ticks.now = 301
    await board.refresh()
    assert store.loads == 3  # the safety net: read whole again, whatever the version

    clock.advance(301)  # the entry expired: the list in memory is built again without it
    assert not board.denies(user="mallory")
    assert board.list.entries == []
