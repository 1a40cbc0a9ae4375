"""The HTTP shapes of profiles: the player's own (phone masked), operators' (in full), imports."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.profile_fields import (
    MAX_ATTRIBUTE_TEXT,
    MAX_ATTRIBUTES,
    MAX_INTEGER,
    MAX_LEVEL,
    MAX_PHONE_INPUT,
    MAX_TEXT,
    plain,
)
from raffle.domain.profiles import Gender, Profile
from raffle.domain.users import UserStatus
from raffle.entrypoints.http.examples import WHEN, examples_of
from raffle.service.ports.profile_care import Phones
from raffle.service.profile_import import ImportReport
from raffle.service.profiles import OperatorView

MAX_NUMBER = 1e300  # a number attribute: finite, and these bounds say so in the document

AttributeValue = (
    Annotated[str, Field(max_length=MAX_ATTRIBUTE_TEXT)]
    | bool
    | Annotated[int, Field(ge=-MAX_INTEGER - 1, le=MAX_INTEGER)]
    | Annotated[float, Field(ge=-MAX_NUMBER, le=MAX_NUMBER)]
)
Attributes = Annotated[
    dict[Annotated[str, Field(max_length=32)], AttributeValue | None],
    Field(
        max_length=MAX_ATTRIBUTES,
        description="Free attributes by name (a-z, 0-9, _): text, integers, numbers, "
        'true/false, and dates as "YYYY-MM-DD" text; null removes one.',
    ),
]
Text = Annotated[str | None, Field(max_length=MAX_TEXT)]

ATTRIBUTES_EXAMPLE: dict[str, Any] = {"vip": True, "city": "杭州", "joined": "2024-05-01"}
PROFILE_EXAMPLE: dict[str, Any] = {
    "user_id": "alice",
    "phone": "+86 138****8000",
    "level": 3,
    "gender": "f",
    "birth_date": "1990-05-17",
    "region": "浙江",
    "channel": "app",
    "sn": "SN-2208-0001",
    "attributes": ATTRIBUTES_EXAMPLE,
    "editable": ["region", "sn"],
}
EDIT_EXAMPLE: dict[str, Any] = {"region": "上海", "attributes": {"city": "上海"}}
PUT_EXAMPLE: dict[str, Any] = {
    "phone": "138 0013 8000",
    "level": 3,
    "gender": "f",
    "birth_date": "1990-05-17",
    "region": "浙江",
    "channel": "app",
    "sn": "SN-2208-0001",
    "attributes": ATTRIBUTES_EXAMPLE,
}
OPERATOR_EXAMPLE: dict[str, Any] = {
    **{k: v for k, v in PROFILE_EXAMPLE.items() if k != "editable"},
    "phone": "+8613800138000",
    "updated_at": WHEN,
    "status": "active",
}
PAGE_EXAMPLE: dict[str, Any] = {"items": [OPERATOR_EXAMPLE], "next": "alice"}
PROBLEM_EXAMPLE: dict[str, Any] = {
    "line": 3,
    "code": "invalid_phone",
    "field": "phone",
    "message": "'12345' is not a valid phone number",
}
REPORT_EXAMPLE: dict[str, Any] = {
    "rows": 1000,
    "created": 990,
    "updated": 0,
    "unchanged": 9,
    "refused": 1,
    "problems": [PROBLEM_EXAMPLE],
}
CSV_EXAMPLE = "user_id,phone,level,gender,birth_date,region,attr.vip\nalice,138 0013 8000,3,f,1990-05-17,浙江,true\n"  # noqa: E501
JSON_LINES_EXAMPLE = '{"user_id": "alice", "level": 3, "attributes": {"vip": true}}\n'


class ProfileEditIn(BaseModel):
    """The fields to change (others are kept); null clears one."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [EDIT_EXAMPLE]})

    phone: Annotated[str | None, Field(max_length=MAX_PHONE_INPUT)] = None
    level: Annotated[int | None, Field(ge=0, le=MAX_LEVEL)] = None
    gender: Gender | None = None
    birth_date: date | None = None
    region: Text = None
    channel: Text = None
    sn: Text = None
    attributes: Attributes | None = None


class ProfileIn(ProfileEditIn):
    """The whole profile: a field left out is cleared."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [PUT_EXAMPLE]})


class ProfileOut(BaseModel):
    """The player's own profile; the phone number's middle digits are hidden."""

    model_config = examples_of(PROFILE_EXAMPLE)

    user_id: str
    phone: str | None
    level: int
    gender: Gender | None
    birth_date: date | None
    region: str | None
    channel: str | None
    sn: str | None
    attributes: dict[str, str | bool | int | float]
    editable: list[str] = Field(description="The fields operators let players change now.")

    @classmethod
    def of(cls, profile: Profile, phones: Phones, editable: frozenset[str]) -> ProfileOut:
        phone = None if profile.phone is None else phones.masked(profile.phone)
        return cls(**{**plain(profile), "phone": phone}, editable=sorted(editable))


class OperatorProfileOut(BaseModel):
    model_config = examples_of(OPERATOR_EXAMPLE)

    user_id: str
    phone: str | None = Field(description="In full, E.164.")
    level: int
    gender: Gender | None
    birth_date: date | None
    region: str | None
    channel: str | None
    sn: str | None
    attributes: dict[str, str | bool | int | float]
    updated_at: datetime | None = Field(description="None: nothing stored yet.")
    status: UserStatus | None = Field(description="The account's; None: not signed up yet.")

    @classmethod
    def of(cls, view: OperatorView) -> OperatorProfileOut:
        status = None if view.account is None else view.account.status
        return cls(**plain(view.profile), updated_at=view.updated_at, status=status)


class ProfilePageOut(BaseModel):
    model_config = examples_of(PAGE_EXAMPLE)

    items: list[OperatorProfileOut]
    next: str | None = Field(description="The `after` of the next page; None on the last.")


class RowProblemOut(BaseModel):
    model_config = examples_of(PROBLEM_EXAMPLE)

    line: int = Field(description="The row's first line in the file, from 1.")
    code: str
    field: str = Field(description="The field at fault; empty when the row as a whole is.")
    message: str


class ImportReportOut(BaseModel):
    model_config = examples_of(REPORT_EXAMPLE)

    rows: int
    created: int
    updated: int
    unchanged: int = Field(description="Rows equal to the stored profile: nothing written.")
    refused: int = Field(description="Rows with a problem: nothing of them applied.")
    problems: list[RowProblemOut]

    @classmethod
    def of(cls, report: ImportReport) -> ImportReportOut:
        problems = [
            RowProblemOut(line=p.line, code=p.code, field=p.field, message=p.message)
            for p in report.problems
        ]
        return cls(
            rows=report.rows,
            created=report.created,
            updated=report.updated,
            unchanged=report.unchanged,
            refused=report.refused,
            problems=problems,
        )
