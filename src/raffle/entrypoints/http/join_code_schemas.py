"""The join codes' shapes on the wire: a redemption, a batch to generate or import, counts."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from raffle.domain.join_codes import (
    MAX_LENGTH,
    MAX_PER_REQUEST,
    REMARK_MAX,
    SOURCE_MAX,
    JoinCode,
    JoinCodeCounts,
    shown,
)
from raffle.entrypoints.http.examples import examples_of
from raffle.service.join_codes import Imported, Redeemed

# Typed by people: hyphens and spaces are allowed between the symbols.
TypedCode = Annotated[
    str, Field(min_length=1, max_length=2 * MAX_LENGTH, examples=["7KQ3-M9XD-2HFT"])
]
Source = Annotated[str, Field(min_length=1, max_length=SOURCE_MAX, examples=["2026-双十一-海报"])]
Remark = Annotated[str, Field(max_length=REMARK_MAX, examples=["printed on the store posters"])]


class RedeemIn(BaseModel):
    model_config = examples_of({"code": "7KQ3-M9XD-2HFT"})

    code: TypedCode


class RedeemedOut(BaseModel):
    model_config = examples_of(
        {
            "activity_id": 100301,
            "code": "7KQ3-M9XD-2HFT",
            "bound_at": "2026-11-25T02:00:00Z",
            "redeemed": True,
        }
    )

    activity_id: int
    code: str = Field(description="The code bound to the player, hyphenated.")
    bound_at: datetime
    redeemed: bool = Field(
        description="True: bound by this request; false: the player held it (or another "
        "code of the activity, answered here) already, and nothing changed."
    )

    @classmethod
    def of(cls, found: Redeemed) -> RedeemedOut:
        code = found.code
        assert code.bound_at is not None  # a redeemed code is bound
        return cls(
            activity_id=code.activity_id,
            code=shown(code.code),
            bound_at=code.bound_at,
            redeemed=found.redeemed,
        )


class HeldOut(BaseModel):
    model_config = examples_of(
        {"activity_id": 100301, "code": "7KQ3-M9XD-2HFT", "bound_at": "2026-11-25T02:00:00Z"}
    )

    activity_id: int
    code: str | None = Field(description="The player's code, hyphenated; null: none yet.")
    bound_at: datetime | None

    @classmethod
    def of(cls, activity_id: int, code: JoinCode | None) -> HeldOut:
        if code is None:
            return cls(activity_id=activity_id, code=None, bound_at=None)
        return cls(activity_id=activity_id, code=shown(code.code), bound_at=code.bound_at)


class GenerateIn(BaseModel):
    model_config = examples_of({"count": 1000, "source": "2026-双十一-海报", "remark": ""})

    count: Annotated[int, Field(ge=1, le=MAX_PER_REQUEST)]
    source: Source
    remark: Remark = ""


class GeneratedOut(BaseModel):
    model_config = examples_of({"generated": 1000, "entropy_bits": 60.0})

    generated: int
    entropy_bits: float = Field(description="Of each generated code: log2 of the codes possible.")


class ImportIn(BaseModel):
    model_config = examples_of(
        {"codes": ["PARTNER-0001", "PARTNER-0002"], "source": "partner", "remark": ""}
    )

    codes: Annotated[list[TypedCode], Field(min_length=1, max_length=MAX_PER_REQUEST)]
    source: Source
    remark: Remark = ""


class ImportedOut(BaseModel):
    model_config = examples_of({"added": 2, "existing": 0})

    added: int
    existing: int = Field(description="Codes the activity had already: left as they were.")

    @classmethod
    def of(cls, imported: Imported) -> ImportedOut:
        return cls(added=imported.added, existing=imported.existing)


class CountsOut(BaseModel):
    model_config = examples_of({"activity_id": 100301, "total": 1000, "used": 12, "unused": 988})

    activity_id: int
    total: int
    used: int
    unused: int

    @classmethod
    def of(cls, counts: JoinCodeCounts) -> CountsOut:
        return cls(
            activity_id=counts.activity_id,
            total=counts.total,
            used=counts.used,
            unused=counts.unused,
        )
