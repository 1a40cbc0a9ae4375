"""Operators' stock warnings: an activity's prizes at or below their threshold (the badges)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from raffle.entrypoints.http.bounds import ActivityId
from raffle.entrypoints.http.deps import AdminSession, RaffleDep
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.problems import documented
from raffle.service.stock_warnings import PrizeWarning, stock_warnings

router = APIRouter(prefix="/api/admin", tags=["operator"])


class StockWarningOut(BaseModel):
    model_config = examples_of(
        {
            "award_id": 101,
            "title": "iPhone",
            "stock": 300,
            "left": 18,
            "warning_surplus": 20,
            "warned": True,
        }
    )

    award_id: int
    title: str
    stock: int
    left: int | None = Field(description="Units left; null until the counter is loaded.")
    warning_surplus: int = Field(description="The stock left at which operators are warned.")
    warned: bool = Field(description="At or below the threshold: the console shows a badge.")

    @classmethod
    def of(cls, w: PrizeWarning) -> StockWarningOut:
        return cls(
            award_id=w.award_id, title=w.title, stock=w.stock, left=w.left,
            warning_surplus=w.warning_surplus, warned=w.warned,
        )  # fmt: skip


@router.get("/activities/{activity_id}/stock-warnings", responses=documented(401, 403, 404))
async def warnings(
    activity_id: ActivityId, session: AdminSession, raffle: RaffleDep
) -> list[StockWarningOut]:
    """Each prize of the activity with a warning threshold (`warning_surplus`): its stock
    left and whether it is at or below the threshold."""
    found = await stock_warnings(activity_id, catalogue=raffle.catalogue, stock=raffle.stock)
    return [StockWarningOut.of(w) for w in found]
