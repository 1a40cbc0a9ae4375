import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from raffle.domain.receipts import FIELDS, OUT, SEALED, BadReceipt, Receipt
from tests.unit.receipt_world import ReceiptWorld
from tests.unit.usecase_world import PRIZE, THANKS

RULES = (("listed", "2:vip"), ("guarantee", "1:win"))


def flipped(value: Any) -> Any:
    """The value with one byte of its text changed."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value ^ 1
    if value is None:
        return 0
    if isinstance(value, str):
        return ("0" if value[-1] != "0" else "1").join([value[:-1], ""]) if value else "x"
    if isinstance(value, dict) and "exhausted" in value:  # the trail
        return {**value, "exhausted": [*value["exhausted"], 99]}
    raise AssertionError(value)


async def test_every_receipt_of_a_run_with_stock_running_out_matches() -> None:
    rw = ReceiptWorld(rate="0.3", stock=40, rules=RULES)
    receipts = [(await rw.draw("vip")).receipt]
    receipts += [(await rw.draw(f"u{u}")).receipt for u in range(50) for _ in range(8)]
    receipts += [(await rw.draw("vip")).receipt]
    assert all(r is not None for r in receipts)
    ok = [r for r in receipts if r is not None]
    assert (ok[0].award_id, ok[0].rule, ok[0].listed) == (PRIZE, "listed", True)
    assert (ok[-1].award_id, ok[-1].listed, ok[-1].trail.exhausted) == (THANKS, True, (PRIZE,))
    assert any(step[0] == OUT for r in ok for step in r.trail.steps)
    assert sum(r.award_id == PRIZE for r in ok) == 40
    for r in ok:
        assert await rw.differences(r) == [], r


async def test_one_byte_changed_in_any_field_is_named() -> None:
    rw = ReceiptWorld(rate="0.3", stock=5, rules=RULES)
    receipts = [(await rw.draw(f"u{n}")).receipt for n in range(12)]
    for receipt in receipts:
        assert receipt is not None
        data = receipt.to_json()
        for name in FIELDS:
            changed = Receipt.from_json({**data, name: flipped(data[name])})
            assert name in await rw.differences(changed), name
        for name in SEALED:
            seals = {**data["seals"], name: flipped(data["seals"][name])}
            assert await rw.differences(Receipt.from_json({**data, "seals": seals})) == [name]


async def test_an_outcome_that_differs_from_the_seeds_is_named_even_when_sealed() -> None:
    rw = ReceiptWorld(rate="0.5")
    receipt = (await rw.draw("alice")).receipt
    assert receipt is not None
    other = PRIZE if receipt.award_id == THANKS else THANKS
    from raffle.domain.receipts import sealed

    values = {n: getattr(receipt, n) for n in FIELDS}
    forged = sealed(rw.seed(receipt).secret, **{**values, "award_id": other})
    assert await rw.differences(forged) == ["award_id"]


async def test_a_receipt_reads_back_from_its_json() -> None:
    rw = ReceiptWorld(rate="0.5")
    receipt = (await rw.draw("alice")).receipt
    assert receipt is not None
    assert Receipt.from_json(json.loads(json.dumps(receipt.to_json()))) == receipt
    with pytest.raises(BadReceipt, match="nonce"):
        Receipt.from_json({k: v for k, v in receipt.to_json().items() if k != "nonce"})
    with pytest.raises(BadReceipt):
        Receipt.from_json({**receipt.to_json(), "nonce": "seven"})
    assert replace(receipt, nonce=2) != receipt


async def test_the_draws_answer_carries_the_receipt_as_its_schema_writes_it() -> None:
    from raffle.entrypoints.http.schemas import DrawOut, draw_json

    rw = ReceiptWorld(rate="0.3", stock=1, rules=RULES)
    results = [await rw.draw(u) for u in ("vip", "vip", "bob")]
    award = rw.w.config.awards[PRIZE]
    for result in results:
        assert result.receipt is not None
        assert draw_json(result, award) == DrawOut.of(result, award).model_dump_json()
        assert json.loads(draw_json(result, award))["receipt"] == result.receipt.to_json()


def test_a_seal_hashes_the_values_canonical_json() -> None:
    import hashlib
    import hmac

    from raffle.domain.fairness import canonical
    from raffle.domain.receipts import Trail, seal

    key = bytes(32)
    for value in (0, 7, 2**40, True, False, None, "abc123", "lucky-7", 'q"uote', Trail((2,), ())):
        plain = value.to_json() if isinstance(value, Trail) else value
        mac = hmac.new(key, b"name=" + canonical(plain), hashlib.sha256)
        assert seal(key, "name", value) == mac.hexdigest()[:32], value


async def test_closing_an_activity_early_ends_its_period_and_reveals_the_seed() -> None:
    from raffle.domain.activity import ActivityState
    from raffle.service.fairness import ROTATION_GRACE, fairness
    from raffle.service.receipts import verify

    rw = ReceiptWorld(rate="0.5")
    receipt = (await rw.draw("alice")).receipt
    assert receipt is not None
    now = rw.w.clock.now()
    activity = await rw.w.catalogue.activity(1)
    running = await fairness(activity, seeds=rw.seeds, uow=rw.uow(), now=now)
    assert running.current.ends_at - now > ROTATION_GRACE  # not before midnight
    rw.w.set_state(ActivityState.CLOSED)
    closed = await rw.w.catalogue.activity(1)
    ended = await fairness(closed, seeds=rw.seeds, uow=rw.uow(), now=now)
    assert ended.current.period == running.current.period
    assert ended.current.ends_at == now + ROTATION_GRACE
    after = now + ROTATION_GRACE
    found = await verify(
        receipt, config=rw.uow, catalogue=rw.w.catalogue, seeds=rw.seeds, now=after
    )
    assert (found.revealed, found.differs) == (True, ())


async def test_receipts_issued_with_kept_seals_are_those_sealed_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from raffle.domain import receipts
    from raffle.domain.receipts import sealed

    monkeypatch.setattr(receipts, "KEPT_SEALS", 7)  # dropped and made again along the way
    rw = ReceiptWorld(rate="0.3", stock=5, rules=RULES)
    drawn = [(await rw.draw(u)).receipt for u in ("vip", "ann", "bob") * 6]
    assert len({r.seals["order_id"] for r in drawn if r is not None}) == len(drawn)
    for receipt in drawn:
        assert receipt is not None
        values = {n: getattr(receipt, n) for n in FIELDS}
        assert receipt == sealed(rw.seed(receipt).secret, **values)
        assert list(receipt.seals) == list(SEALED)
        assert len(rw.seed(receipt).seals) <= 7


def test_a_proofs_text_is_its_canonical_json_and_reads_back() -> None:
    from raffle.domain.fairness import canonical
    from raffle.domain.receipts import CAP, Proof, Trail

    trails = [Trail(), Trail((2, 3)), Trail((), ((OUT, 2, (2,)), (CAP, "规则")))]
    for client in ("lucky-7", 'q"uote\\', "0123456789abcdef"):
        for listed in (False, True):
            for trail in trails:
                proof = Proof(12, client, listed, trail)
                data: dict[str, Any] = {"p": 12, "c": client}
                if listed:
                    data["l"] = 1
                if trail != Trail():
                    data["t"] = trail.to_json()
                assert proof.to_text() == canonical(data).decode()
                assert Proof.from_text(proof.to_text()) == proof


async def test_a_seed_read_again_unchanged_is_the_one_held_with_its_seals() -> None:
    from raffle.service.fairness import SeedBook

    rw = ReceiptWorld(rate="0.5")
    book = SeedBook(rw.uow, ttl=0)  # reads its seeds again at every look
    activity = await rw.w.catalogue.activity(1)
    now = rw.w.clock.now()
    first = await book.current(activity, now)
    assert await book.current(activity, now) is first
    await book.rotate(activity, now)
    later = now + timedelta(seconds=5)
    assert (await book.current(activity, later)).period == first.period + 1


async def test_a_trail_holding_what_no_draw_writes_is_named_not_a_crash() -> None:
    rw = ReceiptWorld(rate="0.5")
    receipt = (await rw.draw("alice")).receipt
    assert receipt is not None
    for odd in ([["out", 2, [{"x": 1}]]], [["cap", [[1]]]]):
        data = {**receipt.to_json(), "trail": {"exhausted": [], "steps": odd}}
        assert await rw.differences(Receipt.from_json(data)) == ["trail"]
