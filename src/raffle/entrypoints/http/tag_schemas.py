"""The HTTP shapes of tags: a tag, seed 004's clause, member lists, a preview."""

from __future__ import annotations

import contextlib
from datetime import date
from typing import Annotated

from pydantic import BaseModel, Field, model_validator

from raffle.domain.profile_fields import ISO_DATE
from raffle.domain.tags import MAX_CONDITION, Clause, Operator, Tag, TagKind, Value
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import UserId
from raffle.entrypoints.http.examples import examples_of
from raffle.service.tags import Preview

MAX_MEMBERS = 10_000  # user ids in one request: a larger list is sent in parts
Scalar = (
    Annotated[str, Field(max_length=200)]
    | Annotated[int, Field(ge=-(2**53), le=2**53)]
    | Annotated[float, Field(ge=-1e15, le=1e15)]
    | bool
    | date
)


class ClauseIn(BaseModel):
    """Seed 004's condition: data source, field, operator, target value."""

    model_config = examples_of(examples.CLAUSE)

    source: str = Field("profile", max_length=16, description="The data source: `profile`.")
    field: str = Field(
        max_length=80,
        description="A profile fact (`age`, `level`, `sn`, `birth_date`…) or `attrs.NAME`.",
    )
    operator: Operator
    value: Scalar | Annotated[list[Scalar], Field(max_length=100)] | None = Field(
        None, description="A value, a list for `in` / `not in`, none for `exists`."
    )

    def clause(self) -> Clause:
        value = self.value
        if self.field == "birth_date" or self.field.startswith("attrs."):
            # JSON has no dates: "YYYY-MM-DD" means one here, as in profiles' attributes.
            if isinstance(value, list):
                value = [_dated(v) for v in value]
            elif value is not None:
                value = _dated(value)
        return Clause(self.field, self.operator, value, self.source)


def _dated(value: Value) -> Value:
    if isinstance(value, str) and ISO_DATE.fullmatch(value):
        with contextlib.suppress(ValueError):
            return date.fromisoformat(value)
    return value


class TagIn(BaseModel):
    """A static tag (members added apart), or a dynamic one: a condition, or a clause."""

    model_config = examples_of(examples.TAG_IN)

    kind: TagKind
    condition: str | None = Field(None, max_length=MAX_CONDITION, description="docs/tags.md")
    clause: ClauseIn | None = None
    description: str = Field("", max_length=200)

    @model_validator(mode="after")
    def _one_way(self) -> TagIn:
        if self.condition is not None and self.clause is not None:
            raise ValueError("give a condition or a clause, not both")
        return self

    def tag(self, name: str) -> Tag:
        condition = self.clause.clause().condition() if self.clause else self.condition or ""
        return Tag(name, self.kind, condition, self.description)


class TagOut(BaseModel):
    model_config = examples_of(examples.TAG)

    name: str
    kind: TagKind
    condition: str
    description: str
    references: list[str] = Field(description="The tags the condition refers to.")

    @classmethod
    def of(cls, tag: Tag) -> TagOut:
        return cls(
            name=tag.name,
            kind=tag.kind,
            condition=tag.condition,
            description=tag.description,
            references=sorted(tag.references()),
        )


class MembersIn(BaseModel):
    model_config = examples_of(examples.MEMBERS_IN)

    user_ids: list[UserId] = Field(min_length=1, max_length=MAX_MEMBERS)


class MembersChanged(BaseModel):
    model_config = examples_of(examples.MEMBERS_CHANGED)

    tag: str
    changed: int = Field(description="Users added (not members before) or removed.")


class TagDeleted(BaseModel):
    model_config = examples_of(examples.TAG_DELETED)

    tag: str
    deleted: bool


class MembersOut(BaseModel):
    model_config = examples_of(examples.MEMBERS)

    tag: str
    user_ids: list[str]
    next: str | None = Field(description="The cursor of the next page; none after the last.")


class PreviewOut(BaseModel):
    model_config = examples_of(examples.PREVIEW)

    tag: str
    matched: int = Field(description="Profiles scanned that the tag holds today.")
    scanned: int
    complete: bool = Field(description="Every profile was scanned (not stopped at `scan`).")
    sample: list[str] = Field(description="The first users it holds, by user id.")

    @classmethod
    def of(cls, tag: str, p: Preview) -> PreviewOut:
        return cls(
            tag=tag, matched=p.matched, scanned=p.scanned, complete=p.complete, sample=p.sample
        )
