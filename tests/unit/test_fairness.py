from datetime import UTC, datetime
from pathlib import Path

import pytest

from raffle.adapters.campaign_file import read_campaign
from raffle.adapters.memory_stock import MemoryStock
from raffle.domain.fairness import (
    BadClientSeed,
    HmacStream,
    check_client_seed,
    commitment,
    hmac_sha256,
    odds_hash,
    period_end,
)
from raffle.service.simulation import simulate_users
from raffle.service.statistics import chi_square_p_value
from tests.unit.builders import engine

SEED = bytes(range(32))
EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.yaml"))


class FreshStreams:
    """Every number from a stream of its own (another order id), as every draw has."""

    def __init__(self, seed: bytes) -> None:
        self.seed, self.n = seed, 0

    def below(self, n: int) -> int:
        self.n += 1
        return HmacStream(self.seed, "client", f"order-{self.n}", self.n).below(n)


def test_the_same_inputs_give_the_same_numbers_and_any_other_input_others() -> None:
    def numbers(seed: bytes, client: str, order: str, nonce: int) -> list[int]:
        stream = HmacStream(seed, client, order, nonce)
        return [stream.below(1_000_003) for _ in range(20)]  # past one HMAC block

    base = numbers(SEED, "c", "o1", 1)
    assert base == numbers(SEED, "c", "o1", 1)
    others = [
        numbers(bytes(32), "c", "o1", 1),
        numbers(SEED, "d", "o1", 1),
        numbers(SEED, "c", "o2", 1),
        numbers(SEED, "c", "o1", 2),
    ]
    assert all(o != base for o in others)


def test_hmac_sha256_is_the_standard_hmac_for_any_key_and_message() -> None:
    import hashlib
    import hmac

    for key in (b"", b"k", SEED, bytes(63), bytes(range(64)), bytes(range(65)), SEED * 5):
        for message in (b"", b"m", b"c|o|1|0", bytes(range(64)), bytes(200)):
            expected = hmac.digest(key, message, hashlib.sha256)
            assert hmac_sha256(key, message) == expected, (key, message)
            assert hmac_sha256(key, message) == expected, (key, message)  # its kept pads


def test_a_stream_gives_the_numbers_it_always_gave() -> None:
    """Known answers: receipts issued before stay verifiable whatever the stream's code."""
    stream = HmacStream(SEED, "c", "o", 1)
    assert [stream.below(1000) for _ in range(6)] == [744, 829, 626, 391, 746, 784]
    assert stream.below(2**64) == 14747642516546427282  # the seventh word: a second block


def test_a_stream_is_uniform_below_any_bound() -> None:
    for n in (2, 6, 7, 1000):
        stream = HmacStream(SEED, "c", f"o-{n}", 1)
        counts = [0] * n
        for _ in range(n * 200):
            counts[stream.below(n)] += 1
        assert chi_square_p_value(counts, [200.0] * n) > 1e-6, n


def test_bounds_outside_a_64_bit_word_are_refused() -> None:
    stream = HmacStream(SEED, "c", "o", 1)
    with pytest.raises(ValueError, match="positive"):
        stream.below(0)
    with pytest.raises(ValueError, match="2\\*\\*64"):
        stream.below(2**64 + 1)
    assert 0 <= stream.below(2**64) < 2**64


def test_the_commitment_is_the_seeds_sha256() -> None:
    assert commitment(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_client_seeds_are_bounded_printable_ascii() -> None:
    assert check_client_seed("lucky-7") == "lucky-7"
    for bad in ("", "x" * 65, "a|b", "tab\t", "幸运"):
        with pytest.raises(BadClientSeed):
            check_client_seed(bad)


def test_a_period_ends_at_the_next_midnight_in_the_zone_or_at_the_close() -> None:
    start = datetime(2026, 11, 21, 12, tzinfo=UTC)  # 20:00 in Shanghai
    far = datetime(2027, 1, 1, tzinfo=UTC)
    assert period_end(start, "Asia/Shanghai", far) == datetime(2026, 11, 21, 16, tzinfo=UTC)
    close = datetime(2026, 11, 21, 13, tzinfo=UTC)
    assert period_end(start, "Asia/Shanghai", close) == close
    assert period_end(start, "UTC", start) == datetime(2026, 11, 22, tzinfo=UTC)


def test_the_odds_hash_names_the_listed_group_by_its_size_only() -> None:
    def hashed(listed: str, rate: str = "0.5", perfect: bool = False) -> str:
        e = engine({2: rate}, rules=(("listed", listed),))
        return odds_hash(e.strategy, e.awards, perfect)

    assert hashed("2:ann,bob") == hashed("2:cid,dan")  # who they are is not published
    others = {hashed("2:ann"), hashed("2:ann,bob", rate="0.4"), hashed("2:ann,bob", perfect=True)}
    assert hashed("2:ann,bob") not in others
    assert len(others) == 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_100k_seeded_draws_of_every_example_campaign_fit_the_odds(path: Path) -> None:
    campaign = read_campaign(path)
    for e in campaign.engines().values():
        result = simulate_users(e, 10_000, 10, FreshStreams(SEED), MemoryStock([e.strategy]))
        assert result.draws == 100_000
        assert result.p_value is not None
        assert result.p_value > 1e-6, (path.stem, e.strategy.id, result.fit)
