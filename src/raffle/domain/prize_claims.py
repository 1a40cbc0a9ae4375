"""Claiming a won prize (seed 004 `deadline`, `draw_condition`): until when, and on what terms."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Protocol
from zoneinfo import ZoneInfo

from raffle.domain.awards import Award, AwardKind
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.policies import local_day
from raffle.domain.profiles import Profile

MAX_DAYS = 3650  # ten years: a validity longer than that is a typing mistake
MAX_CONDITIONS = 8
# The profile fields a claim may require; a free attribute is written `attrs.<name>`.
CONDITION_FIELDS = ("phone", "gender", "birth_date", "region", "channel", "sn")
_ATTRIBUTE = re.compile(r"attrs\.[a-z][a-z0-9_]{0,31}")


class ValidityKind(StrEnum):
    ACTIVITY = "activity"  # until the activity ends
    FIXED = "fixed"  # from one day to another, inclusive, in the activity's zone
    DAYS = "days"  # N days from the win, optionally starting M days later


@dataclass(frozen=True, slots=True)
class Validity:
    """How long a won prize may be claimed. Days are whole days in the activity's zone: a
    prize of "7 days" won on the 1st may be claimed up to the end of the 7th."""

    kind: ValidityKind
    first: date | None = None  # FIXED: the first day
    last: date | None = None  # FIXED: the last day
    days: int | None = None  # DAYS: how many days it may be claimed
    later: int = 0  # DAYS: days after the win's day before it may be (0: the win's day)

    def __post_init__(self) -> None:
        fixed = self.kind is ValidityKind.FIXED
        if fixed != (self.first is not None and self.last is not None):
            raise InvalidConfig("a fixed validity, and only it, has a first and a last day")
        if fixed and self.first is not None and self.last is not None and self.last < self.first:
            raise InvalidConfig("a fixed validity's last day is before its first", ("last",))
        counted = self.kind is ValidityKind.DAYS
        if counted != (self.days is not None) or (not counted and self.later):
            raise InvalidConfig("a validity in days, and only it, counts days (and later)")
        if self.days is not None and not 1 <= self.days <= MAX_DAYS:
            raise InvalidConfig(f"days is 1 to {MAX_DAYS}", ("days",))
        if not 0 <= self.later <= MAX_DAYS:
            raise InvalidConfig(f"later is 0 to {MAX_DAYS}", ("later",))

    def window(self, won_at: datetime, activity_end: datetime, zone: str) -> Window:
        """When a prize won at `won_at` may be claimed, as UTC instants."""
        if self.kind is ValidityKind.ACTIVITY:
            return Window(None, activity_end)
        if self.kind is ValidityKind.FIXED:
            assert self.first is not None
            assert self.last is not None
            return Window(_midnight(self.first, zone), _midnight(self.last, zone, 1))
        assert self.days is not None
        day = local_day(zone, won_at)
        opens = _midnight(day, zone, self.later) if self.later else None
        return Window(opens, _midnight(day, zone, self.later + self.days))

    def won_before(self, now: datetime, activity_end: datetime, zone: str) -> datetime | None:
        """The wins made before this instant have expired at `now`; None: none has. For a
        validity in days, a win expires at the start of a later day in the zone, so the wins
        expired are those of the days up to `today - later - days`."""
        if self.kind is not ValidityKind.DAYS:
            closes = self.window(now, activity_end, zone).closes
            return now if closes is not None and now >= closes else None
        assert self.days is not None
        today = local_day(zone, now)
        return _midnight(today, zone, 1 - self.later - self.days)


def _midnight(day: date, zone: str, plus_days: int = 0) -> datetime:
    """The start of `day` + `plus_days` in `zone`, in UTC."""
    start = datetime.combine(day + timedelta(days=plus_days), time(), ZoneInfo(zone))
    return start.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Window:
    opens: datetime | None  # None: from the win
    closes: datetime | None  # None: never


@dataclass(frozen=True, slots=True)
class ClaimTerms:
    """What a prize asks of its winner before it ships or its code is shown: a validity (None:
    no deadline) and profile fields that must be present (`phone`: a phone on the profile —
    profiles have no verified-phone notion)."""

    validity: Validity | None = None
    conditions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.conditions) > MAX_CONDITIONS:
            raise InvalidConfig(f"at most {MAX_CONDITIONS} conditions", ("conditions",))
        for i, name in enumerate(self.conditions):
            if name not in CONDITION_FIELDS and not _ATTRIBUTE.fullmatch(name):
                known = ", ".join(CONDITION_FIELDS)
                raise InvalidConfig(
                    f"unknown condition {name!r}: use {known} or attrs.<name>", ("conditions", i)
                )
            if name in self.conditions[:i]:
                raise InvalidConfig(f"condition {name!r} is listed twice", ("conditions", i))

    @property
    def any(self) -> bool:
        """Whether a claim must be made at all: prizes without terms need none."""
        return self.validity is not None or bool(self.conditions)

    def missing(self, profile: Profile) -> list[str]:
        """The conditions `profile` does not meet, in the order they are written."""
        return [name for name in self.conditions if not _present(profile, name)]


NO_TERMS = ClaimTerms()
# The kinds a winner claims: a coupon's code is shown, a physical prize is addressed. Points,
# chances and content are theirs at delivery.
CLAIMED_KINDS = frozenset({AwardKind.COUPON, AwardKind.PHYSICAL})


class _Prize(Protocol):
    @property
    def award_id(self) -> int: ...

    @property
    def claim(self) -> ClaimTerms: ...


def terms_problems(prizes: Sequence[_Prize], awards: Mapping[int, Award]) -> list[InvalidConfig]:
    """Claim terms on prizes nobody claims (points, chances, content, thanks)."""
    return [
        InvalidConfig(
            f"only coupon and physical prizes are claimed; award {p.award_id} is "
            f"{awards[p.award_id].kind.value}",
            ("prizes", i, "claim"),
        )
        for i, p in enumerate(prizes)
        if p.claim.any and p.award_id in awards and awards[p.award_id].kind not in CLAIMED_KINDS
    ]


def _present(profile: Profile, name: str) -> bool:
    if name.startswith("attrs."):
        value = profile.attributes.get(name.removeprefix("attrs."))
    else:
        value = getattr(profile, name)
    return value is not None and value != ""


class ClaimState(StrEnum):
    """A won prize's claim; only `claimed` and `expired` are stored, one of them once."""

    NOT_YET = "not_yet"  # its validity starts later
    OPEN = "open"  # it may be claimed now
    CLAIMED = "claimed"
    EXPIRED = "expired"


def claim_state(stored: ClaimState | None, window: Window, now: datetime) -> ClaimState:
    """The state of a claim: what was stored, else what the window says at `now`."""
    if stored is not None:
        return stored
    if window.closes is not None and now >= window.closes:
        return ClaimState.EXPIRED
    if window.opens is not None and now < window.opens:
        return ClaimState.NOT_YET
    return ClaimState.OPEN


class PrizeExpired(RaffleError):
    """The won prize's validity has ended: it can no longer be claimed."""

    code = "prize_expired"


class PrizeNotYetValid(RaffleError):
    """The won prize's validity has not started yet."""

    code = "prize_not_yet_valid"


class ClaimConditionUnmet(RaffleError):
    """The winner's profile lacks what the prize asks for; `missing` names each field."""

    code = "claim_condition_unmet"

    def __init__(self, missing: list[str]) -> None:
        super().__init__(f"add to your profile first: {', '.join(missing)}")
        self.missing = missing


def check_claim(
    terms: ClaimTerms, state: ClaimState, profile: Profile, window: Window | None = None
) -> None:
    """Refuse a claim the terms do not allow now; a claimed prize stays claimed."""
    if state is ClaimState.EXPIRED:
        closes = window.closes.isoformat() if window and window.closes else "its deadline"
        raise PrizeExpired(f"the prize could be claimed until {closes}")
    if state is ClaimState.NOT_YET:
        opens = window.opens.isoformat() if window and window.opens else "later"
        raise PrizeNotYetValid(f"the prize may be claimed from {opens}")
    if state is ClaimState.OPEN and (missing := terms.missing(profile)):
        raise ClaimConditionUnmet(missing)


def terms_json(terms: ClaimTerms) -> dict[str, object]:
    """The terms as plain JSON values (storage and files): absent parts left out."""
    written: dict[str, object] = {}
    if (v := terms.validity) is not None:
        validity: dict[str, object] = {"kind": v.kind.value}
        if v.first is not None and v.last is not None:
            validity |= {"first": v.first.isoformat(), "last": v.last.isoformat()}
        if v.days is not None:
            validity["days"] = v.days
        if v.later:
            validity["later"] = v.later
        written["validity"] = validity
    if terms.conditions:
        written["conditions"] = list(terms.conditions)
    return written


def terms_of_json(data: Mapping[str, object]) -> ClaimTerms:
    """`terms_json` read back; a malformed mapping is InvalidConfig."""
    raw = data.get("validity")
    validity = None
    if raw is not None:
        if not isinstance(raw, Mapping):
            raise InvalidConfig("validity is a mapping", ("validity",))
        try:
            validity = Validity(
                ValidityKind(str(raw.get("kind"))),
                _day(raw.get("first"), "first"),
                _day(raw.get("last"), "last"),
                _whole(raw.get("days"), "days"),
                _whole(raw.get("later"), "later") or 0,
            )
        except ValueError:
            kinds = ", ".join(k.value for k in ValidityKind)
            raise InvalidConfig(f"validity kind is one of {kinds}", ("validity", "kind")) from None
        except InvalidConfig as error:
            raise error.at("validity") from None
    conditions = data.get("conditions") or []
    if not isinstance(conditions, list) or not all(isinstance(c, str) for c in conditions):
        raise InvalidConfig("conditions is a list of profile fields", ("conditions",))
    return ClaimTerms(validity, tuple(conditions))


def _day(value: object, name: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise InvalidConfig(f"{name} is a day, YYYY-MM-DD", (name,)) from None


def _whole(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidConfig(f"{name} is a whole number of days", (name,))
    return value
