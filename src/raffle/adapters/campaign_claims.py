"""A prize's claim terms in campaign files: read into `ClaimTerms`, written back the same."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_claims import (
    MAX_CONDITIONS,
    MAX_DAYS,
    ClaimTerms,
    Validity,
    ValidityKind,
    terms_json,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ValidityIn(_Model):
    kind: ValidityKind
    first: date | None = None
    last: date | None = None
    days: Annotated[int, Field(ge=1, le=MAX_DAYS)] | None = None
    later: Annotated[int, Field(ge=0, le=MAX_DAYS)] = 0


class ClaimIn(_Model):
    validity: ValidityIn | None = None
    conditions: list[Annotated[str, Field(max_length=40)]] = Field([], max_length=MAX_CONDITIONS)


def claim_terms(claim: ClaimIn | None) -> ClaimTerms:
    """The terms a prize's `claim:` writes; InvalidConfig located under `claim`."""
    if claim is None:
        return ClaimTerms()
    try:
        v = claim.validity
        validity = None if v is None else Validity(v.kind, v.first, v.last, v.days, v.later)
        return ClaimTerms(validity, tuple(claim.conditions))
    except InvalidConfig as error:
        raise error.at("claim") from None


def written(terms: ClaimTerms) -> dict[str, Any] | None:
    """The `claim:` of a prize with terms, as the reader takes it; None without terms."""
    return terms_json(terms) if terms.any else None
