"""Join codes in the domain: the alphabet, the entropy stated, generation and normalising."""

from __future__ import annotations

import math
from collections import Counter

from raffle.adapters.randomness import SecretsRandomSource, SeededRandomSource
from raffle.domain.join_codes import (
    ALPHABET,
    ENTROPY_BITS,
    LENGTH,
    generate,
    normalise,
    shown,
)


class Sequence:
    """A source answering the numbers given, in order."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers

    def below(self, n: int) -> int:
        value = self.numbers.pop(0)
        assert value < n
        return value


def test_the_alphabet_is_crockford_base32_without_ambiguous_letters() -> None:
    assert len(ALPHABET) == len(set(ALPHABET)) == 32
    assert not set("ILOU") & set(ALPHABET)
    assert ENTROPY_BITS == LENGTH * 5 == 60
    assert math.isclose(2**ENTROPY_BITS, len(ALPHABET) ** LENGTH)


def test_each_symbol_is_one_uniform_draw_from_the_source() -> None:
    assert generate(Sequence(list(range(LENGTH)))) == ALPHABET[:LENGTH]
    assert generate(Sequence([31] * LENGTH)) == "Z" * LENGTH


def test_ten_thousand_codes_from_the_csprng_are_unique_and_use_every_symbol() -> None:
    codes = [generate(SecretsRandomSource()) for _ in range(10_000)]
    assert len(set(codes)) == 10_000
    assert all(len(c) == LENGTH and set(c) <= set(ALPHABET) for c in codes)
    counts = Counter("".join(codes))
    # 120,000 symbols over 32: each expected 3,750 times; 6 standard deviations either way
    spread = 6 * math.sqrt(120_000 * (1 / 32) * (31 / 32))
    assert set(counts) == set(ALPHABET)
    assert all(abs(n - 3_750) < spread for n in counts.values()), counts


def test_a_typed_code_is_read_as_crockford_reads_it() -> None:
    code = generate(SeededRandomSource(7))
    assert normalise(shown(code)) == code
    assert normalise(shown(code).lower()) == code
    assert normalise(" 7kq3-m9xd 2hft ") == "7KQ3M9XD2HFT"
    assert normalise("IL0O-abcd") == "1100ABCD"  # I and L are 1, O is 0


def test_what_cannot_be_a_code_is_none() -> None:
    assert normalise("") is None
    assert normalise("ABC") is None  # too short
    assert normalise("A" * 33) is None  # too long
    assert normalise("UUUU") is None  # U is not a symbol
    assert normalise("ABCD!") is None
    assert normalise("卡券卡券") is None


def test_a_code_is_shown_in_groups_of_four() -> None:
    assert shown("7KQ3M9XD2HFT") == "7KQ3-M9XD-2HFT"
    assert shown("ABCDEF") == "ABCD-EF"
