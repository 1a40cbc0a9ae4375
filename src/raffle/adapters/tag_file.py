"""A campaign file's `tags:` section: each tag read, its condition compiled, at its line."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.errors import InvalidConfig
from raffle.domain.tags import (
    MAX_CONDITION,
    Clause,
    InvalidTag,
    MalformedCondition,
    Operator,
    Tag,
    TagDefinition,
    TagKind,
)

_LANGUAGE = RuleEngineLanguage()
Scalar = str | bool | int | float | date


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClauseFileIn(_Model):
    """Seed 004's structured condition: data source, field, operator, target value."""

    source: str = Field("profile", max_length=16)
    field: str = Field(max_length=80)
    operator: Operator
    value: Scalar | Annotated[list[Scalar], Field(max_length=100)] | None = None


class TagFileIn(_Model):
    name: str = Field(max_length=64)
    kind: TagKind
    description: str = Field("", max_length=200)
    condition: str | None = Field(None, max_length=MAX_CONDITION)
    clause: ClauseFileIn | None = None
    members: list[Annotated[str, Field(min_length=1, max_length=32)]] = []

    @model_validator(mode="after")
    def _one_way(self) -> TagFileIn:
        if self.condition is not None and self.clause is not None:
            raise ValueError("give a condition or a clause, not both")
        return self


def tag_definition(item: TagFileIn) -> TagDefinition:
    """The tag of a file's item; a condition that does not compile is an InvalidConfig at
    `condition`, its message giving the line and column inside the condition."""
    condition = item.condition or ""
    if item.clause is not None:
        c = item.clause
        try:
            condition = Clause(c.field, c.operator, c.value, c.source).condition()
        except InvalidTag as error:
            raise InvalidConfig(error.message, ("clause",)) from None
    tag = Tag(item.name, item.kind, condition, item.description)
    if tag.kind is TagKind.DYNAMIC and condition.strip():
        try:
            _LANGUAGE.compile(condition)
        except MalformedCondition as error:
            raise InvalidConfig(error.message, ("condition",)) from None
    return TagDefinition(tag, tuple(dict.fromkeys(item.members)))
