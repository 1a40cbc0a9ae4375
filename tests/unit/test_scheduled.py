from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from raffle.domain.errors import InvalidConfig
from raffle.domain.fairness import commitment
from raffle.domain.scheduled import (
    CUTOFF_BEFORE,
    EntrantHash,
    Pick,
    Shuffle,
    Terms,
    differences,
    entrants_hash,
    pick_winners,
    prize_stream,
    scheduled,
    verified,
)
from raffle.service.statistics import chi_square_p_value

ENTRANTS = [f"u{n:06d}" for n in range(100_000)]
HASH = entrants_hash(ENTRANTS)
EXCLUDED = frozenset(ENTRANTS[::10])  # every tenth: not in the draw's audience
AFTER_EXCLUDED = frozenset(ENTRANTS[1::10])  # each right after an excluded one
RUNS = 6000  # each eligible entrant is expected to win RUNS * 100 / 90,000 = 6.7 times


def terms(prizes: tuple[tuple[int, int], ...], per_person: int = 1) -> Terms:
    return Terms(7, prizes, per_person, len(ENTRANTS), HASH)


def test_the_cutoff_is_half_an_hour_before_the_draw_unless_given() -> None:
    at = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert scheduled(at, 3).cutoff == at - CUTOFF_BEFORE == at - timedelta(minutes=30)
    assert scheduled(at, 3, cutoff=at - timedelta(hours=2)).cutoff == at - timedelta(hours=2)
    with pytest.raises(InvalidConfig):
        scheduled(at, 3, cutoff=at + timedelta(seconds=1))
    with pytest.raises(InvalidConfig):
        scheduled(at, 0)
    with pytest.raises(InvalidConfig):
        scheduled(at, 1, per_person=0)


def test_the_entrant_hash_is_the_sha256_of_the_sorted_list_one_id_a_line() -> None:
    import hashlib

    assert entrants_hash(["a1", "b2", "b3"]) == hashlib.sha256(b"a1\nb2\nb3\n").hexdigest()
    paged = EntrantHash()
    paged.add(["a1"])
    paged.add(["b2", "b3"])
    assert (paged.hexdigest(), paged.count) == (entrants_hash(["a1", "b2", "b3"]), 3)
    with pytest.raises(ValueError, match="not after"):
        entrants_hash(["b2", "a1"])
    with pytest.raises(ValueError, match="not after"):
        entrants_hash(["a1", "a1"])  # an entrant is on the list once


def test_winners_are_uniform_even_next_to_excluded_entrants() -> None:
    counts: Counter[str] = Counter()
    for run in range(RUNS):
        seed = run.to_bytes(32, "big")
        picks = pick_winners(terms(((1, 100),)), seed, ENTRANTS, lambda u: u not in EXCLUDED)
        assert len({p.user_id for p in picks}) == 100
        counts.update(p.user_id for p in picks)
    assert not EXCLUDED & counts.keys()
    eligible = [u for u in ENTRANTS if u not in EXCLUDED]
    expected = RUNS * 100 / len(eligible)
    assert chi_square_p_value([counts[u] for u in eligible], [expected] * len(eligible)) > 1e-6
    # Seed 004's "first eligible at or after a random index" would give these twice the
    # wins: as a group they win their share, no more.
    after = sum(counts[u] for u in AFTER_EXCLUDED)
    group = [after, RUNS * 100 - after]
    share = len(AFTER_EXCLUDED) / len(eligible)
    assert chi_square_p_value(group, [RUNS * 100 * share, RUNS * 100 * (1 - share)]) > 1e-6


def test_no_one_wins_a_prize_twice_nor_more_prizes_than_the_limit() -> None:
    few = ENTRANTS[:150]
    three = Terms(7, ((1, 100), (2, 100), (3, 100)), 2, len(few), entrants_hash(few))
    picks = pick_winners(three, b"s" * 32, few)
    per_prize = Counter((p.award_id, p.user_id) for p in picks)
    assert max(per_prize.values()) == 1
    assert max(Counter(p.user_id for p in picks).values()) == 2
    # The first two prizes go in full; the third to as many as have won fewer than two.
    first_two = Counter(p.user_id for p in picks if p.award_id != 3)
    assert len(first_two) < 150
    twice = sum(n == 2 for n in first_two.values())
    assert Counter(p.award_id for p in picks) == {1: 100, 2: 100, 3: min(100, 150 - twice)}
    assert [p.rank for p in picks if p.award_id == 1] == list(range(1, 101))


def test_fewer_eligible_entrants_than_winners_leave_places_empty() -> None:
    few = ENTRANTS[:10]
    small = Terms(7, ((1, 5), (2, 5)), 1, 10, entrants_hash(few))
    picks = pick_winners(small, b"s" * 32, few, lambda u: u != few[3])
    assert len(picks) == 9
    assert few[3] not in {p.user_id for p in picks}


def test_the_pick_is_the_first_who_may_win_of_each_shuffle_and_recomputed_identically() -> None:
    seed = b"k" * 32
    drawn = pick_winners(terms(((1, 100), (2, 50)), 2), seed, ENTRANTS)
    assert drawn == pick_winners(terms(((1, 100), (2, 50)), 2), seed, ENTRANTS)
    assert differences(drawn, drawn) == []
    # The first `winners` who may win of each prize's shuffle, taken one position at a time.
    one_by_one: list[Pick] = []
    won: Counter[str] = Counter()
    for award_id, winners in ((1, 100), (2, 50)):
        shuffle = Shuffle(len(ENTRANTS), prize_stream(seed, terms(()), award_id))
        while sum(p.award_id == award_id for p in one_by_one) < winners:
            position = shuffle.take(1)[0]
            user = ENTRANTS[position]
            if won[user] < 2:
                won[user] += 1
                rank = sum(p.award_id == award_id for p in one_by_one) + 1
                one_by_one.append(Pick(award_id, rank, position, user))
    assert one_by_one == drawn
    other = pick_winners(terms(((1, 100), (2, 50)), 2), b"j" * 32, ENTRANTS)
    assert other != drawn
    changed = [*drawn[:-1], Pick(2, 50, 0, ENTRANTS[0])]
    said = differences(changed, drawn)
    assert said == [
        f"prize 2 winner 50: published {ENTRANTS[0]!r} (prize 2), recomputed {drawn[-1].user_id!r}"
    ]
    assert differences(drawn[:-1], drawn)[0] == "149 winners published, 150 recomputed"


def test_a_changed_list_or_seed_changes_the_winners() -> None:
    seed = b"k" * 32
    drawn = pick_winners(terms(((1, 100),)), seed, ENTRANTS)
    moved = Terms(7, ((1, 100),), 1, len(ENTRANTS), "0" * 64)  # another list's hash
    assert pick_winners(moved, seed, ENTRANTS) != drawn
    with pytest.raises(ValueError, match="entrants"):
        pick_winners(terms(((1, 100),)), seed, ENTRANTS[:-1])


def test_the_verifier_names_a_changed_list_seed_or_winner() -> None:
    few = [f"p{n:03d}" for n in range(300)]
    listed = "".join(f"{u}\n" for u in few).encode()
    seed = b"v" * 32
    small = Terms(7, ((1, 20), (2, 20)), 1, 300, entrants_hash(few))
    met = pick_winners(small, seed, few)
    skipped = [met[0].user_id, met[25].user_id]  # two the draw meets: it skips them
    drawn = pick_winners(small, seed, few, lambda u: u not in skipped)
    promised = commitment(seed)
    assert verified(small, seed, promised, listed, skipped, drawn) == []
    assert verified(small, b"w" * 32, promised, listed, skipped, drawn) == [
        "the seed is not the one committed to"
    ]
    changed = listed.replace(b"p001", b"p00x")
    assert verified(small, seed, promised, changed, skipped, drawn) == [
        "the entrant list's SHA-256 is not the published entrants_hash"
    ]
    assert verified(small, seed, promised, listed, [], drawn) != []  # skipped ones matter
    forged = [*drawn[:3], Pick(1, 4, 0, few[1]), *drawn[4:]]
    assert len(verified(small, seed, promised, listed, skipped, forged)) == 1
