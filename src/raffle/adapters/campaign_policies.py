"""The `policies:` and `person_caps:` of an activity in a campaign file: read, written back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.limits import MAX_COUNT, MAX_ID
from raffle.domain.policies import Limit, Participation, Period, PersonCaps, Policy

Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LimitIn(_Model):
    count: Count
    period: Period = Period.PERMANENT


class PolicyIn(_Model):
    id: Annotated[int, Field(ge=1, le=MAX_ID)]
    priority: Count
    tag: Annotated[str, Field(max_length=64)] | None = None
    levels: list[Count] = []
    points_cost: Count = 0
    joins: LimitIn | None = None
    wins: LimitIn | None = None


class PersonCapsIn(_Model):
    wins: LimitIn | None = None
    once_per_prize: bool = False


def participation(
    activity_id: int, policies: list[PolicyIn], caps: PersonCapsIn | None
) -> Participation:
    """An activity's participation from its file items (InvalidConfig at `policies`)."""
    built = tuple(
        Policy(p.id, p.priority, p.tag, frozenset(p.levels), p.points_cost,
               _limit(p.joins), _limit(p.wins))
        for p in policies
    )  # fmt: skip
    return Participation(
        activity_id,
        built,
        PersonCaps(_limit(caps.wins), caps.once_per_prize) if caps else PersonCaps(),
    )


def _limit(limit: LimitIn | None) -> Limit | None:
    return None if limit is None else Limit(limit.count, limit.period)


Flow = Callable[[dict[str, Any]], dict[str, Any]]


def written(participation: Participation, flow: Flow = dict) -> dict[str, Any]:
    """The activity's `policies:` and `person_caps:` as the file writes them, none when empty; each
    policy and the caps a `flow` mapping (the writer's one-line kind)."""
    found: dict[str, Any] = {}
    if participation.policies:
        found["policies"] = [flow(_policy(p)) for p in participation.policies]
    caps = participation.caps
    if caps.any:
        found["person_caps"] = flow({
            **({"wins": _limit_out(caps.wins)} if caps.wins else {}),
            **({"once_per_prize": True} if caps.once_per_prize else {}),
        })  # fmt: skip
    return found


def _policy(p: Policy) -> dict[str, Any]:
    out: dict[str, Any] = {"id": p.policy_id, "priority": p.priority}
    if p.tag is not None:
        out["tag"] = p.tag
    if p.levels:
        out["levels"] = sorted(p.levels)
    if p.points_cost:
        out["points_cost"] = p.points_cost
    for name, limit in (("joins", p.joins), ("wins", p.wins)):
        if limit is not None:
            out[name] = _limit_out(limit)
    return out


def _limit_out(limit: Limit) -> dict[str, Any]:
    return {"count": limit.count, "period": limit.period.value}
