"""Participation policies (who may join an activity, how often, at what cost), per-person caps."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from functools import lru_cache
from zoneinfo import ZoneInfo

from raffle.domain.errors import InvalidConfig, RaffleError

# Why a policy refused a user (seed 004's 活动参与策略), in the order they are checked.
NOT_IN_AUDIENCE = "not_in_audience"
LEVEL_REQUIRED = "level_required"
INSUFFICIENT_POINTS = "insufficient_points"
JOIN_LIMIT_REACHED = "join_limit_reached"
WIN_LIMIT_REACHED = "win_limit_reached"

# The rule of a draw whose win a per-person cap turned into the fallback (the activity-wide
# caps of service/caps.py record "cap").
PERSON_CAP_RULE = "person_cap"


class Period(StrEnum):
    PERMANENT = "permanent"
    DAY = "day"
    WEEK = "week"  # ISO weeks, Monday first
    MONTH = "month"
    YEAR = "year"

    def key(self, now: datetime, zone: str) -> str:
        """The period `now` falls in, in the activity's time zone (`zone`)."""
        if self is Period.PERMANENT:
            return "all"
        return _period_of_minute(self, zone, int(now.timestamp() // 60))


def local_day(zone: str, now: datetime) -> date:
    """The day `now` falls on in `zone`."""
    return _day_of_minute(zone, int(now.timestamp() // 60))


@lru_cache(maxsize=4096)
def _day_of_minute(zone: str, minute: int) -> date:
    """The day in `zone` during the UTC minute `minute` (since the epoch): one for the whole
    minute, since zones are whole minutes from UTC, so every draw of a minute shares it."""
    return datetime.fromtimestamp(minute * 60, ZoneInfo(zone)).date()


@lru_cache(maxsize=4096)
def _period_of_minute(period: Period, zone: str, minute: int) -> str:
    """The key of the `period` (not permanent) holding the UTC minute `minute` in `zone`."""
    local = _day_of_minute(zone, minute)
    if period is Period.WEEK:
        year, week, _ = local.isocalendar()
        return f"{year}-W{week:02d}"
    width = {Period.DAY: 10, Period.MONTH: 7, Period.YEAR: 4}[period]
    return local.isoformat()[:width]


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `count` in each `period`."""

    count: int
    period: Period = Period.PERMANENT

    def __post_init__(self) -> None:
        if self.count < 0:
            raise InvalidConfig("a limit is zero or more", ("count",))


@dataclass(frozen=True, slots=True)
class Policy:
    """One way into an activity: the target group (everyone when `tag` is None), the levels
    admitted (any when empty), the points a join costs, and the joins and wins allowed."""

    policy_id: int
    priority: int  # smaller first
    tag: str | None = None
    levels: frozenset[int] = frozenset()
    points_cost: int = 0
    joins: Limit | None = None
    wins: Limit | None = None

    def __post_init__(self) -> None:
        if self.points_cost < 0:
            raise InvalidConfig("a points cost is zero or more", ("points_cost",))

    def counter(self, limit: Limit, now: datetime, zone: str) -> str:
        """The counter row of `limit`'s period at `now`: the policy's joins and wins of one
        period share it (their limits read its two counts)."""
        return f"p{self.policy_id}:{limit.period.key(now, zone)}"


@dataclass(frozen=True, slots=True)
class PersonCaps:
    """Per person, for the whole activity: wins per period, and each prize at most once
    (seed 004's one_person_is_repeat). A capped win becomes the strategy's fallback."""

    wins: Limit | None = None
    once_per_prize: bool = False

    @property
    def any(self) -> bool:
        return self.wins is not None or self.once_per_prize


@dataclass(frozen=True, slots=True)
class Participation:
    """An activity's policies (by priority) and caps; without either it admits everyone."""

    activity_id: int
    policies: tuple[Policy, ...] = ()
    caps: PersonCaps = field(default_factory=PersonCaps)
    # The counters' names by UTC minute and zone, the same for every draw of that minute.
    _named: dict[tuple[int, str], Names] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    # Worked out once from the policies, not by every draw: whether admitting needs the
    # user's profile (a tag or levels), and whether a join may cost points.
    needs_profile: bool = field(init=False, repr=False, compare=False)
    costs_points: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.policies, key=lambda p: (p.priority, p.policy_id)))
        object.__setattr__(self, "policies", ordered)
        ids = [p.policy_id for p in ordered]
        if len(set(ids)) != len(ids):
            raise InvalidConfig("policy ids are unique in an activity", ("policies",))
        needs = any(p.tag is not None or p.levels for p in ordered)
        object.__setattr__(self, "needs_profile", needs)
        object.__setattr__(self, "costs_points", any(p.points_cost for p in ordered))

    @property
    def empty(self) -> bool:
        return not self.policies and not self.caps.any

    def named(self, now: datetime, zone: str) -> Names:
        """Each policy's counter rows ("joins", "wins": one row when both limits have the
        same period) and the caps' counter row at `now`."""
        key = (int(now.timestamp() // 60), zone)
        if (names := self._named.get(key)) is None:
            if len(self._named) >= 4:  # a minute or two of each zone in use
                self._named.clear()
            limits = tuple(_limits(p, now, zone) for p in self.policies)
            wins = self.caps.wins
            cap = None if wins is None else f"cap:{wins.period.key(now, zone)}"
            names = self._named[key] = (limits, cap)
        return names


# Each policy's counter rows by what they count, and the caps' row (None: no such cap).
Names = tuple[tuple[Mapping[str, str], ...], str | None]
# What one counter row holds, or what a draw adds to it: its joins and its wins.
Counts = tuple[int, int]
NONE: Counts = (0, 0)
JOINED: Counts = (1, 0)
WON: Counts = (0, 1)


class NotAdmitted(RaffleError):
    """No policy of the activity admits the user: each one's reason, by policy id."""

    code = "not_admitted"

    def __init__(self, reasons: Mapping[int, str]) -> None:
        said = ", ".join(f"policy {p}: {r}" for p, r in reasons.items())
        super().__init__(f"no participation policy admits you ({said})")
        self.reasons = dict(reasons)


@dataclass(frozen=True, slots=True)
class Entry:
    """An activity's participation for one user's draw at one instant: each policy with the
    reason it refused before any count was read (audience, level), and the counters' names.

    Made before the draw's transaction (the profile and the audience are known then); the
    counts and the balance are read in it (`Standing`)."""

    participation: Participation
    early: tuple[str | None, ...]  # by policy, in priority order: None if it may admit
    now: datetime
    zone: str
    # Named once a draw: each policy's counters ("joins", "wins") and the caps' wins counter.
    limits: tuple[Mapping[str, str], ...] = field(init=False)
    cap: str | None = field(init=False)

    def __post_init__(self) -> None:
        limits, cap = self.participation.named(self.now, self.zone)
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "cap", cap)

    def counters(self, awards: Collection[int]) -> list[str]:
        """The counter rows the draw reads, each once: each policy's joins and wins in their
        period, the caps' wins, and a mark per prize of `awards` the user may have won
        (once_per_prize)."""
        names: dict[str, None] = {}
        for limits, early in zip(self.limits, self.early, strict=True):
            if early is None:
                names.update(dict.fromkeys(limits.values()))
        if self.cap is not None:
            names[self.cap] = None
        if self.participation.caps.once_per_prize:
            names.update((_prize_counter(a), None) for a in awards)
        return list(names)

    @property
    def costs_points(self) -> bool:
        return self.participation.costs_points


@dataclass(frozen=True, slots=True)
class Standing:
    """What the draw's transaction read for one user: the counter rows' joins and wins
    (missing rows are 0) and the points available."""

    counts: Mapping[str, Counts]
    balance: int = 0

    def joins(self, counter: str) -> int:
        return self.counts.get(counter, NONE)[0]

    def wins(self, counter: str) -> int:
        return self.counts.get(counter, NONE)[1]


@dataclass(frozen=True, slots=True)
class Admission:
    """The policy that admitted the draw (None: the activity has none), and what it counts."""

    entry: Entry
    standing: Standing
    policy: Policy | None
    limits: Mapping[str, str] = field(default_factory=dict)  # the policy's counters

    @property
    def cost(self) -> int:
        return self.policy.points_cost if self.policy else 0

    def capped(self, award_id: int, wins: bool) -> bool:
        """Whether a cap of the activity stops this draw winning `award_id` (a `wins`
        outcome: neither the fallback nor a thanks)."""
        caps = self.entry.participation.caps
        if not wins:
            return False
        if caps.once_per_prize and self.standing.wins(_prize_counter(award_id)):
            return True
        if caps.wins is None or self.entry.cap is None:
            return False
        return self.standing.wins(self.entry.cap) >= caps.wins.count

    def counted(self, award_id: int, wins: bool) -> dict[str, Counts]:
        """What this draw adds to each counter row (its joins, its wins), having handed out
        `award_id`: one more join on its policy's joins row, and if it `wins`, one more win
        on its policy's wins row (the same row when both have one period), the caps' row
        and the prize's mark."""
        limits, added = self.limits, {}
        if "joins" in limits:
            added[limits["joins"]] = JOINED
        if not wins:
            return added
        if "wins" in limits:
            row = limits["wins"]
            added[row] = (1, 1) if row in added else WON
        if self.entry.cap is not None:
            added[self.entry.cap] = WON
        if self.entry.participation.caps.once_per_prize:
            added[_prize_counter(award_id)] = WON
        return added


def admit(entry: Entry, standing: Standing) -> Admission:
    """The first policy by priority that admits the user; NotAdmitted with every policy's
    reason if none does. A policy's wins limit refuses the join (the user has won enough
    through it); the activity's caps never refuse, they turn a win into the fallback."""
    policies = entry.participation.policies
    if not policies:
        return Admission(entry, standing, None)
    reasons: dict[int, str] = {}
    for policy, early, limits in zip(policies, entry.early, entry.limits, strict=True):
        reason = early or _refusal(policy, limits, standing)
        if reason is None:
            return Admission(entry, standing, policy, limits)
        reasons[policy.policy_id] = reason
    raise NotAdmitted(reasons)


def early_refusal(policy: Policy, in_audience: bool, level: int) -> str | None:
    """The reason a policy refuses a user whatever their counts, if any."""
    if policy.tag is not None and not in_audience:
        return NOT_IN_AUDIENCE
    if policy.levels and level not in policy.levels:
        return LEVEL_REQUIRED
    return None


def _refusal(policy: Policy, limits: Mapping[str, str], standing: Standing) -> str | None:
    if standing.balance < policy.points_cost:
        return INSUFFICIENT_POINTS
    if policy.joins and standing.joins(limits["joins"]) >= policy.joins.count:
        return JOIN_LIMIT_REACHED
    if policy.wins and standing.wins(limits["wins"]) >= policy.wins.count:
        return WIN_LIMIT_REACHED
    return None


def _limits(policy: Policy, now: datetime, zone: str) -> dict[str, str]:
    named = {"joins": policy.joins, "wins": policy.wins}
    return {w: policy.counter(lim, now, zone) for w, lim in named.items() if lim is not None}


def _prize_counter(award_id: int) -> str:
    return f"won:{award_id}"
