"""The HTTP shapes of claiming won prizes: a prize's terms, my prize's claim, a claim made."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, Field

from raffle.domain.prize_claims import ClaimTerms
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.examples import examples_of
from raffle.service.prize_claims import ClaimStatus


class ValidityOut(BaseModel):
    kind: str = Field(
        description="activity (until it ends), fixed (first to last day) or days (from the "
        "win's day, `later` days on); days are whole days in the activity's time zone."
    )
    first: date | None
    last: date | None
    days: int | None
    later: int


class ClaimTermsOut(BaseModel):
    model_config = examples_of(examples.CLAIM_TERMS)

    validity: ValidityOut | None = Field(description="Null: the prize never expires.")
    conditions: list[str] = Field(
        description="Profile fields the winner must have before the prize ships or its code is "
        "shown: `phone` (a phone on the profile), `region`, ..., `attrs.<name>`."
    )

    @classmethod
    def of(cls, terms: ClaimTerms) -> ClaimTermsOut | None:
        if not terms.any:
            return None
        v = terms.validity
        validity = (
            None
            if v is None
            else ValidityOut(kind=v.kind.value, first=v.first, last=v.last, days=v.days,
                             later=v.later)
        )  # fmt: skip
        return cls(validity=validity, conditions=list(terms.conditions))


class ClaimOut(BaseModel):
    model_config = examples_of(examples.CLAIM)

    state: str = Field(description="not_yet (valid later), open, claimed or expired.")
    valid_from: datetime | None = Field(description="Null: from the win.")
    valid_until: datetime | None = Field(description="Null: no deadline.")
    missing: list[str] = Field(description="Conditions the profile does not meet yet.")
    terms: ClaimTermsOut

    @classmethod
    def of(cls, c: ClaimStatus) -> ClaimOut:
        terms = ClaimTermsOut.of(c.terms)
        assert terms is not None  # only prizes with terms have a claim
        return cls(
            state=c.state.value, valid_from=c.window.opens, valid_until=c.window.closes,
            missing=list(c.missing), terms=terms,
        )  # fmt: skip


class ClaimedOut(BaseModel):
    model_config = examples_of(examples.CLAIMED)

    order_id: str
    state: str = Field(description="claimed.")
    coupon_code: str | None = Field(description="Null until the delivery handed one out.")
