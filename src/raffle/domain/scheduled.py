"""Scheduled draws: their terms, the frozen entrant list's hash, and the winners' uniform pick."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from raffle.domain.errors import IllegalState, InvalidConfig, RaffleError
from raffle.domain.fairness import HmacStream, commitment

CUTOFF_BEFORE = timedelta(minutes=30)  # seed 000: sign-up closes 30 minutes before the draw
BATCH = 1024  # the most entrant positions one step of the pick asks for


class EntryClosed(RaffleError):
    code = "entry_closed"


class NotScheduled(RaffleError):
    """An entry to an activity that draws at once (a draw is the way in)."""

    code = "not_scheduled"


class DrawsAtSetTime(RaffleError):
    """A draw from an activity whose winners are picked at its draw time."""

    code = "draws_at_set_time"


class NotEntered(RaffleError):
    code = "not_entered"


class NotFrozen(IllegalState):
    code = "entrants_not_frozen"


@dataclass(frozen=True, slots=True)
class Schedule:
    """An activity of kind `scheduled`: entries until `cutoff`, then at `draw_at` `winners`
    of each prize picked among the entrants (in `audience` then, if it names a tag), each
    person winning at most `per_person` prizes (seed 004's one_person_lottery_number) and
    no prize twice."""

    draw_at: datetime  # aware, UTC
    cutoff: datetime
    winners: int
    per_person: int = 1
    audience: str | None = None

    def __post_init__(self) -> None:
        if self.draw_at.tzinfo is None or self.cutoff.tzinfo is None:
            raise InvalidConfig("draw_at and cutoff need a time zone offset", ("draw_at",))
        if self.cutoff > self.draw_at:
            raise InvalidConfig("the cutoff comes before the draw time", ("cutoff",))
        if self.winners < 1:
            raise InvalidConfig("a scheduled draw picks one winner or more", ("winners",))
        if self.per_person < 1:
            raise InvalidConfig("a person may win one prize or more", ("per_person",))

    def open(self, now: datetime) -> bool:
        return now < self.cutoff


def scheduled(
    draw_at: datetime,
    winners: int,
    *,
    cutoff: datetime | None = None,
    per_person: int = 1,
    audience: str | None = None,
) -> Schedule:
    """A schedule whose cutoff is, unless given, 30 minutes before the draw."""
    closes = draw_at - CUTOFF_BEFORE if cutoff is None else cutoff
    return Schedule(draw_at, closes, winners, per_person, audience)


class EntrantHash:
    """SHA-256 over the entrant ids in ascending order of their UTF-8 bytes, each followed by
    one line feed and nothing else: the entrant list as a text file, so `sha256sum` of that
    file is the published hash. Fed in order, a page at a time; refuses an id out of order."""

    __slots__ = ("_count", "_last", "_sha")

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self._count = 0
        self._last: bytes | None = None

    def add(self, user_ids: Iterable[str]) -> None:
        lines = [user_id.encode() for user_id in user_ids]
        last = self._last
        for line in lines:
            if last is not None and line <= last:
                raise ValueError(f"entrant {line.decode()!r} is not after {last.decode()!r}")
            last = line
        if any(b"\n" in line for line in lines):
            raise ValueError("an entrant id has no line feed")
        if lines:
            self._sha.update(b"\n".join(lines) + b"\n")  # one update a page
            self._last = last
            self._count += len(lines)

    @property
    def count(self) -> int:
        return self._count

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def entrants_hash(user_ids: Iterable[str]) -> str:
    found = EntrantHash()
    found.add(user_ids)
    return found.hexdigest()


@dataclass(frozen=True, slots=True)
class Terms:
    """What a scheduled draw is bound to once its entrants are frozen: the prizes in the
    order they are drawn with how many winners each, the per-person limit, and the list."""

    activity_id: int
    prizes: tuple[tuple[int, int], ...]  # (award_id, winners)
    per_person: int
    entrants: int
    entrants_hash: str


@dataclass(frozen=True, slots=True)
class Pick:
    """One winner: the `rank`-th of prize `award_id`, at `position` of the sorted list."""

    award_id: int
    rank: int  # 1, 2, ... within the prize
    position: int
    user_id: str


class Shuffle:
    """A Fisher–Yates shuffle of 0..n-1, drawn one position at a time from `rng` and kept
    sparse (only the swapped places are held): each prefix is a uniform sample without
    replacement, in memory proportional to its length, not to n."""

    __slots__ = ("_moved", "_n", "_next", "_rng")

    def __init__(self, n: int, rng: HmacStream) -> None:
        self._n, self._next, self._rng = n, 0, rng
        self._moved: dict[int, int] = {}

    def take(self, count: int) -> list[int]:
        taken = []
        moved = self._moved
        while count > 0 and self._next < self._n:
            k = self._next
            j = k + self._rng.below(self._n - k)
            taken.append(moved.get(j, j))
            moved[j] = moved.pop(k, k)  # the place k is never asked for again
            self._next = k + 1
            count -= 1
        return taken


def prize_stream(seed: bytes, terms: Terms, award_id: int) -> HmacStream:
    """HMAC-SHA256(seed, entrants hash | "scheduled-" activity | award | counter): the
    randomness of one prize's pick, bound to the frozen list."""
    return HmacStream(seed, terms.entrants_hash, f"scheduled-{terms.activity_id}", award_id)


# What the pick asks for (entrant positions) and is answered (for each: the entrant id and
# whether they may win, i.e. are in the draw's audience).
Candidates = Sequence[tuple[str, bool]]
Picking = Generator[list[int], Candidates, list[Pick]]


def picking(terms: Terms, seed: bytes) -> Picking:
    """The winners, prize after prize: each prize's winners are the first `winners`
    entrants of a shuffle of the list (its own stream) who may win and have not won
    `per_person` prizes yet. Skipping an entrant never favours the next one: each is as
    likely as any other to come first. Yields the positions it needs next, in batches, and
    is sent their entrants; what it returns does not depend on the batches' sizes."""
    won: Counter[str] = Counter()
    picks: list[Pick] = []
    for award_id, winners in terms.prizes:
        shuffle = Shuffle(terms.entrants, prize_stream(seed, terms, award_id))
        rank = 0
        while rank < winners:
            positions = shuffle.take(min(BATCH, 2 * (winners - rank)))
            if not positions:
                break  # fewer who may win than winners
            found = yield positions
            if len(found) != len(positions):
                raise ValueError("the pick is answered an entrant per position asked")
            for position, (user_id, may_win) in zip(positions, found, strict=True):
                if rank == winners:
                    break
                if may_win and won[user_id] < terms.per_person:
                    rank += 1
                    won[user_id] += 1
                    picks.append(Pick(award_id, rank, position, user_id))
    return picks


def pick_winners(
    terms: Terms,
    seed: bytes,
    entrants: Sequence[str],
    may_win: Callable[[str], bool] = lambda _: True,
) -> list[Pick]:
    """`picking` over a list held in memory (the verifier's, the tests')."""
    if len(entrants) != terms.entrants:
        raise ValueError(f"the terms have {terms.entrants} entrants, the list {len(entrants)}")
    steps = picking(terms, seed)
    try:
        asked = next(steps)
        while True:
            asked = steps.send([(entrants[p], may_win(entrants[p])) for p in asked])
    except StopIteration as done:
        picks: list[Pick] = done.value
        return picks


class DrawStage(StrEnum):
    """Where a scheduled draw stands: taking entries, frozen, drawn."""

    OPEN = "open"
    FROZEN = "frozen"
    DRAWN = "drawn"


@dataclass(frozen=True, slots=True)
class ScheduledDraw:
    """A scheduled activity's draw as stored: its seed (secret until `drawn_at`, its
    commitment public from the start), the frozen list's size and hash, the entrants the
    draw skipped (not in the audience at the draw) and when it was drawn."""

    activity_id: int
    secret: bytes = field(repr=False)
    entrants: int | None = None
    entrants_hash: str | None = None
    frozen_at: datetime | None = None
    drawn_at: datetime | None = None
    skipped: tuple[str, ...] = ()
    commitment: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "commitment", commitment(self.secret))

    @property
    def seed(self) -> bytes | None:
        """The seed once revealed (after the draw), else None."""
        return self.secret if self.drawn_at is not None else None

    def terms(self, prizes: tuple[tuple[int, int], ...], per_person: int) -> Terms:
        if self.entrants is None or self.entrants_hash is None:
            said = f"activity {self.activity_id}'s entrants are not frozen"
            raise NotFrozen(said, DrawStage.OPEN)
        return Terms(self.activity_id, prizes, per_person, self.entrants, self.entrants_hash)


def stage(draw: ScheduledDraw | None) -> DrawStage:
    if draw is None or draw.frozen_at is None:
        return DrawStage.OPEN
    return DrawStage.FROZEN if draw.drawn_at is None else DrawStage.DRAWN


def differences(published: Sequence[Pick], recomputed: Sequence[Pick]) -> list[str]:
    """What differs between the winners published and those recomputed: empty if none."""
    said = []
    if len(published) != len(recomputed):
        said.append(f"{len(published)} winners published, {len(recomputed)} recomputed")
    for mine, theirs in zip(published, recomputed, strict=False):
        if mine != theirs:
            said.append(
                f"prize {theirs.award_id} winner {theirs.rank}: published {mine.user_id!r} "
                f"(prize {mine.award_id}), recomputed {theirs.user_id!r}"
            )
    return said


def verified(
    terms: Terms,
    seed: bytes,
    promised: str,
    listed: bytes,
    skipped: Sequence[str],
    published: Sequence[Pick],
) -> list[str]:
    """What differs when the winners are computed again from the entrant list file
    (`listed`), the revealed `seed` (against its commitment `promised`) and the published
    terms and skipped entrants: empty if the published winners match."""
    said = []
    if commitment(seed) != promised:
        said.append("the seed is not the one committed to")
    if hashlib.sha256(listed).hexdigest() != terms.entrants_hash:
        said.append("the entrant list's SHA-256 is not the published entrants_hash")
    entrants = listed.decode().split("\n")
    if entrants[-1] != "":
        said.append("the entrant list does not end with a line feed")
    entrants = entrants[:-1]
    if len(entrants) != terms.entrants:
        said.append(f"the list has {len(entrants)} entrants, the terms {terms.entrants}")
    if said:
        return said
    out = frozenset(skipped)
    return differences(published, pick_winners(terms, seed, entrants, lambda u: u not in out))
