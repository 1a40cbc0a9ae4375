"""Activities: a campaign's window, time zone, strategy and review workflow."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from raffle.domain.caps import NO_CAPS, Caps
from raffle.domain.errors import IllegalState, InvalidConfig, RaffleError
from raffle.domain.scheduled import Schedule
from raffle.domain.winners_feed import FeedDisplay


class ActivityState(StrEnum):
    EDIT = "edit"
    SUBMITTED = "submitted"
    APPROVED = "approved"
    REFUSED = "refused"
    RUNNING = "running"
    CLOSED = "closed"


# action -> (from, to). Storage applies them as compare-and-set on the state column.
TRANSITIONS: dict[str, tuple[ActivityState, ActivityState]] = {
    "submit": (ActivityState.EDIT, ActivityState.SUBMITTED),
    "approve": (ActivityState.SUBMITTED, ActivityState.APPROVED),
    "refuse": (ActivityState.SUBMITTED, ActivityState.REFUSED),
    "edit": (ActivityState.REFUSED, ActivityState.EDIT),
    "start": (ActivityState.APPROVED, ActivityState.RUNNING),
    "close": (ActivityState.RUNNING, ActivityState.CLOSED),
    "reopen": (ActivityState.CLOSED, ActivityState.RUNNING),
}
# Odds and stock are published once an activity runs, and may not change after that.
FROZEN = frozenset({ActivityState.RUNNING, ActivityState.CLOSED})


class ActivityKind(StrEnum):
    INSTANT = "instant"  # a draw any time while it runs, until the prizes run out
    SCHEDULED = "scheduled"  # entries until a cutoff, winners picked at a set time


class IllegalTransition(IllegalState):
    code = "illegal_transition"

    def __init__(self, action: str, current: ActivityState) -> None:
        super().__init__(f"cannot {action} an activity that is {current}", current)


class UnknownAction(RaffleError):
    code = "unknown_action"


class QueuedAndScheduled(InvalidConfig):
    """An activity marked both queued and scheduled: a scheduled one takes entries, never
    draws, so there would be no draw to queue, and its entrants would be told "queued"."""

    code = "queued_and_scheduled"


@dataclass(frozen=True, slots=True)
class Activity:
    id: int
    name: str
    strategy_id: int
    begin_at: datetime  # aware, UTC
    end_at: datetime
    time_zone: str = "Asia/Shanghai"
    description: str = ""
    state: ActivityState = ActivityState.EDIT
    welcome_pack: int | None = None  # quota pack granted on a user's first visit
    caps: Caps = NO_CAPS  # total winners and participants, every draw wins
    join_code_required: bool = False  # a draw needs a join code redeemed by the user
    winners_feed: FeedDisplay = FeedDisplay.HIDDEN  # how the player page shows recent wins
    queued: bool = False  # draws are accepted with a ticket and drawn in order (seed 000)
    schedule: Schedule | None = None  # None: an instant draw; else entries, then a set time

    def __post_init__(self) -> None:
        if self.begin_at.tzinfo is None or self.end_at.tzinfo is None:
            raise InvalidConfig("begin_at and end_at need a time zone offset", ("begin_at",))
        if self.end_at <= self.begin_at:
            raise InvalidConfig("end_at must be after begin_at", ("end_at",))
        try:
            ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidConfig(f"unknown time zone {self.time_zone!r}", ("time_zone",)) from None
        if self.schedule is not None and not (self.begin_at < self.schedule.draw_at <= self.end_at):
            raise InvalidConfig("the draw time is within the activity's window", ("draw_at",))
        if self.queued and self.schedule is not None:
            said = "an activity is queued or scheduled, not both: a scheduled one takes entries"
            raise QueuedAndScheduled(said, ("queued",))

    @property
    def kind(self) -> ActivityKind:
        return ActivityKind.INSTANT if self.schedule is None else ActivityKind.SCHEDULED

    def is_open(self, now: datetime) -> bool:
        return self.state is ActivityState.RUNNING and self.begin_at <= now < self.end_at

    def day(self, now: datetime) -> str:
        """The calendar day of `now` in the activity's time zone: quota days roll over there."""
        return self.periods(now)[0]

    def month(self, now: datetime) -> str:
        return self.periods(now)[1]

    def periods(self, now: datetime) -> tuple[str, str]:
        """day(now) and month(now), with one time zone conversion (the draw needs both).
        `date.isoformat` rather than `strftime`: the same text (years 1000-9999), for less
        (every draw computes them, more than once). Kept per zone for the UTC second of the
        last `now` converted: a zone's offsets and transitions are whole seconds, so every
        time within one UTC second has the same local date."""
        if now.tzinfo is not UTC:
            return _periods_in(self.time_zone, now)
        kept = _periods.get(self.time_zone)
        if kept is None or not kept[0] <= now < kept[1]:
            second = now.replace(microsecond=0)
            found = _periods_in(self.time_zone, now)
            kept = _periods[self.time_zone] = (second, second + _SECOND, found)
        return kept[2]


def _periods_in(time_zone: str, now: datetime) -> tuple[str, str]:
    day = now.astimezone(ZoneInfo(time_zone)).date().isoformat()
    return day, day[:7]


_SECOND = timedelta(seconds=1)
# By time zone: the UTC second [start, end) of the last periods() converted, and its periods.
_periods: dict[str, tuple[datetime, datetime, tuple[str, str]]] = {}


def transition(action: str, current: ActivityState) -> ActivityState:
    """The state `action` leads to from `current`, or an error naming the current state."""
    if action not in TRANSITIONS:
        raise UnknownAction(f"unknown action {action!r}; known: {', '.join(TRANSITIONS)}")
    source, target = TRANSITIONS[action]
    if current is not source:
        raise IllegalTransition(action, current)
    return target


def due_transitions(activity: Activity, now: datetime) -> str | None:
    """What the scheduler does now: start an approved activity whose window opened, close a
    running one whose window ended."""
    if activity.state is ActivityState.APPROVED and now >= activity.begin_at:
        return "start" if now < activity.end_at else None
    if activity.state is ActivityState.RUNNING and now >= activity.end_at:
        return "close"
    return None
