"""The HTTP shapes of decision trees (their document, `route_tree_documents`) and routes."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.route_tree_checks import MAX_NODES
from raffle.domain.route_tree_documents import to_document
from raffle.domain.route_trees import MISSING, Op, Route, TreeVersion
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import Id
from raffle.entrypoints.http.examples import examples_of

MAX_LINES = 50
Name = Annotated[str, Field(min_length=1, max_length=64)]
# A value a line compares with: bounded as the stored columns of profiles are.
Scalar = (
    Annotated[str, Field(max_length=255)]
    | Annotated[int, Field(ge=-(2**63), lt=2**63)]
    | Annotated[float, Field(ge=-1e18, le=1e18)]
    | bool
)


class LineIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Op
    value: Scalar | Annotated[list[Scalar], Field(max_length=100)] | None = Field(
        None,
        description="What the fact is compared with: a list for `in`/`not in`, none for "
        "`exists` and `default`; dates as `YYYY-MM-DD`.",
    )
    to: Name = Field(description="The node or leaf the line leads to.")


class NodeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Name
    field: Name | None = Field(
        None,
        description="The profile fact tested: user_id, phone, level, gender, birth_date, age, "
        "region, channel, sn, or attrs.<name>. Or `tag` instead.",
    )
    tag: Name | None = Field(None, description="The tag whose membership is tested.")
    lines: Annotated[list[LineIn], Field(max_length=MAX_LINES)] = Field(
        description="Tried in order; the `default` line when none holds. A fact the profile "
        "does not know holds only for `default` (`exists` is false)."
    )


class LeafIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Name
    activity: Id


class RouteTreeIn(BaseModel):
    model_config = examples_of(examples.ROUTE_TREE_IN) | ConfigDict(extra="forbid")

    description: Annotated[str, Field(max_length=255)] = ""
    time_zone: Annotated[str, Field(max_length=64)] = Field(
        "Asia/Shanghai", description="Where today is taken for the ages the tree tests."
    )
    root: Name
    nodes: Annotated[list[NodeIn], Field(max_length=MAX_NODES)]
    leaves: Annotated[list[LeafIn], Field(max_length=MAX_NODES)]
    base_version: int | None = Field(
        None,
        ge=0,
        lt=2**63,
        description="Save only over this version (0: only if new), else 409 "
        "`route_tree_conflict`; none: over whatever is stored.",
    )

    def document(self, name: str) -> dict[str, Any]:
        return {"name": name, **self.model_dump(exclude={"base_version"}, exclude_none=True)}


class RouteTreeOut(BaseModel):
    model_config = examples_of(examples.ROUTE_TREE)

    name: str
    description: str
    time_zone: str
    root: str
    nodes: list[NodeIn]
    leaves: list[LeafIn]
    version: int
    saved_by: str = Field(description="The operator who saved this version.")
    saved_at: datetime

    @classmethod
    def of(cls, saved: TreeVersion) -> RouteTreeOut:
        return cls.model_validate(
            {
                **to_document(saved.tree),
                "version": saved.version,
                "saved_by": saved.saved_by,
                "saved_at": saved.saved_at,
            }
        )


class RouteTreeDeletedOut(BaseModel):
    model_config = examples_of(examples.ROUTE_TREE_DELETED)

    name: str
    version: int = Field(description="The version the deletion took.")


class StepOut(BaseModel):
    node: str
    known: bool = Field(description="Whether the profile knows the fact the node tests.")
    fact: str | int | float | bool | date | None = Field(
        None, description="The user's fact the node tested (for a tag: whether it holds)."
    )
    line: int = Field(description="The index of the line taken among the node's lines.")
    op: Op
    value: Any = None


class RouteOut(BaseModel):
    model_config = examples_of(examples.ROUTE)

    tree: str
    activity_id: int = Field(description="Your activity: draw in it.")
    leaf: str
    path: list[StepOut]

    @classmethod
    def of(cls, name: str, route: Route) -> RouteOut:
        path = [
            StepOut(
                node=s.node,
                known=s.fact is not MISSING,
                fact=None if s.fact is MISSING else s.fact,
                line=s.line,
                op=s.op,
                value=list(s.value) if isinstance(s.value, tuple) else s.value,
            )
            for s in route.path
        ]
        return cls(tree=name, activity_id=route.activity_id, leaf=route.leaf, path=path)
