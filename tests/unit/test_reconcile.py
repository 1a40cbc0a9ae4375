"""Stock reconciliation on fakes: the counter, the claims and the award rows of every shard."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self, cast

from raffle.service.ports import Shards
from raffle.service.reconcile import PrizeDrift, reconcile
from tests.unit.builders import strategy

STRATEGY = strategy({101: "0.1", 102: "0.2", 103: "0.3"}, stock={101: 10, 103: 5})
S = STRATEGY.id


class FakeWins:
    def __init__(self, counts: Mapping[int, int], shard: FakeShard) -> None:
        self._counts, self._shard = counts, shard

    async def count(self, strategy_id: int, award_id: int) -> int:
        assert self._shard.open, "counted outside the shard's transaction"
        return self._counts.get(award_id, 0) if strategy_id == S else 0


class FakeShard:
    def __init__(self, counts: Mapping[int, int]) -> None:
        self.wins = FakeWins(counts, self)
        self.open = False
        self.entered = 0

    async def __aenter__(self) -> Self:
        self.open, self.entered = True, self.entered + 1
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.open = False


class FakeShards:
    def __init__(self, *shards: Mapping[int, int]) -> None:
        self.shards = [FakeShard(counts) for counts in shards]

    def every(self) -> list[Any]:
        return list(self.shards)


async def _reconcile(
    wins: list[Mapping[int, int]], claims: Mapping[int, int], left: Mapping[int, int | None]
) -> dict[int, PrizeDrift]:
    async def claim_counts(strategy_id: int) -> Mapping[int, int]:
        return claims if strategy_id == S else {}

    async def units_left(strategy_id: int, award_id: int) -> int | None:
        assert strategy_id == S
        return left[award_id]

    shards = cast(Shards, FakeShards(*wins))
    found = await reconcile(STRATEGY, shards, claim_counts, units_left)
    return {drift.award_id: drift for drift in found}


async def test_agreeing_counter_claims_and_wins_report_no_drift() -> None:
    found = await _reconcile([{101: 3, 103: 5}, {101: 1}], {101: 4, 103: 5}, {101: 6, 103: 0})
    assert list(found) == [101, 103]  # stocked prizes only, in the strategy's order
    assert found[101] == PrizeDrift(S, 101, stock=10, claims=4, wins=4, left=6)
    assert (found[101].drift, found[101].leaked, found[101].unclaimed_wins) == (0, 0, 0)
    assert (found[103].drift, found[103].oversold) == (0, 0)


async def test_wins_are_summed_over_every_shard_each_in_its_transaction() -> None:
    shards = [{101: 2}, {101: 5}, {}, {101: 1}]
    found = await _reconcile(shards, {101: 8}, {101: 2, 103: 5})
    assert found[101].wins == 8
    assert found[103].wins == 0


async def test_a_counter_that_lost_units_shows_positive_drift() -> None:
    found = await _reconcile([{101: 4}], {101: 4}, {101: 2, 103: 5})
    assert found[101].drift == 4  # 6 unclaimed units, 2 in the counter: 4 never handed out


async def test_a_counter_offering_claimed_slots_shows_negative_drift() -> None:
    found = await _reconcile([{101: 4}], {101: 4}, {101: 7, 103: 5})
    assert found[101].drift == -1


async def test_claims_without_an_award_row_are_leaked_units() -> None:
    found = await _reconcile([{101: 3}], {101: 5}, {101: 5, 103: 5})
    assert (found[101].leaked, found[101].unclaimed_wins, found[101].drift) == (2, 0, 0)


async def test_wins_without_claims_and_beyond_stock_are_reported() -> None:
    found = await _reconcile([{103: 4}, {103: 3}], {103: 5}, {101: 10, 103: 0})
    assert found[103].unclaimed_wins == 2
    assert found[103].oversold == 2
    assert found[103].leaked == 0


async def test_a_counter_not_loaded_has_no_drift_to_report() -> None:
    found = await _reconcile([{}], {}, {101: None, 103: None})
    assert found[101].left is None
    assert found[101].drift is None
    assert found[101].claims == 0
