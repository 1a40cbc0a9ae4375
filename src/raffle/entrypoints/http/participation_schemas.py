"""The HTTP shapes of an activity's participation policies and per-person caps."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from raffle.domain.policies import Limit, Participation, Period, PersonCaps, Policy
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import Id
from raffle.entrypoints.http.examples import examples_of

Count = Annotated[int, Field(ge=0, le=1_000_000)]
MAX_POLICIES = 20
MAX_LEVELS = 100


class LimitIO(BaseModel):
    count: Count
    period: Period = Field(description="permanent, day, week (ISO), month or year, in the "
                           "activity's time zone.")  # fmt: skip

    def limit(self) -> Limit:
        return Limit(self.count, self.period)

    @classmethod
    def of(cls, limit: Limit | None) -> LimitIO | None:
        return None if limit is None else cls(count=limit.count, period=limit.period)


class PolicyIO(BaseModel):
    model_config = examples_of(examples.POLICY)

    policy_id: Id
    priority: Annotated[int, Field(ge=0, le=1_000_000, description="Smaller first.")]
    tag: str | None = Field(None, max_length=64, description="The audience; none: everyone.")
    levels: list[Annotated[int, Field(ge=0, le=1_000_000)]] = Field(
        default_factory=list, max_length=MAX_LEVELS, description="Any of; empty: any level."
    )
    points_cost: Count = 0
    joins: LimitIO | None = None
    wins: LimitIO | None = Field(None, description="Reached: the join is refused.")

    def policy(self) -> Policy:
        return Policy(
            self.policy_id, self.priority, self.tag, frozenset(self.levels), self.points_cost,
            self.joins.limit() if self.joins else None, self.wins.limit() if self.wins else None,
        )  # fmt: skip

    @classmethod
    def of(cls, p: Policy) -> PolicyIO:
        return cls(
            policy_id=p.policy_id, priority=p.priority, tag=p.tag, levels=sorted(p.levels),
            points_cost=p.points_cost, joins=LimitIO.of(p.joins), wins=LimitIO.of(p.wins),
        )  # fmt: skip


class PersonCapsIO(BaseModel):
    """Per person in the activity; a capped win is the strategy's fallback."""

    wins: LimitIO | None = None
    once_per_prize: bool = Field(False, description="Each prize at most once per person.")

    def caps(self) -> PersonCaps:
        return PersonCaps(self.wins.limit() if self.wins else None, self.once_per_prize)

    @classmethod
    def of(cls, c: PersonCaps) -> PersonCapsIO:
        return cls(wins=LimitIO.of(c.wins), once_per_prize=c.once_per_prize)


class ParticipationIO(BaseModel):
    model_config = examples_of(examples.PARTICIPATION)

    policies: list[PolicyIO] = Field(default_factory=list, max_length=MAX_POLICIES)
    person_caps: PersonCapsIO = Field(default_factory=PersonCapsIO)

    def participation(self, activity_id: int) -> Participation:
        return Participation(
            activity_id, tuple(p.policy() for p in self.policies), self.person_caps.caps()
        )

    @classmethod
    def of(cls, p: Participation) -> ParticipationIO:
        return cls(
            policies=[PolicyIO.of(x) for x in p.policies], person_caps=PersonCapsIO.of(p.caps)
        )
