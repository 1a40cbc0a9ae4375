"""A user's profile: the facts that audiences, participation policies and decision trees test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

# A free attribute's value: the JSON types, and dates (written as ISO 8601 "YYYY-MM-DD").
Attribute = str | int | float | bool | date


class Gender(StrEnum):
    FEMALE = "f"
    MALE = "m"
    OTHER = "x"


@dataclass(frozen=True, slots=True)
class Profile:
    """What an operator knows of a player; every field but the id may be unknown (None).

    `phone` is E.164 ("+8613800138000"); `sn` is the device serial of seed 004."""

    user_id: str
    phone: str | None = None
    level: int = 0
    gender: Gender | None = None
    birth_date: date | None = None
    region: str | None = None
    channel: str | None = None  # the source channel the user came from
    sn: str | None = None
    attributes: Mapping[str, Attribute] = field(default_factory=dict)


def age(birth_date: date, today: date) -> int:
    """Whole years from `birth_date` to `today` (a 29 February birthday counts on 1 March)."""
    years = today.year - birth_date.year
    return years - ((today.month, today.day) < (birth_date.month, birth_date.day))


def facts(profile: Profile, today: date) -> dict[str, object]:
    """The profile as the names conditions test: unknown fields are absent (so that `exists`
    is false for them), `age` is derived for `today` (in the activity's zone), and the free
    attributes are under `attrs`."""
    known: dict[str, object] = {"user_id": profile.user_id, "level": profile.level}
    for name in ("phone", "gender", "birth_date", "region", "channel", "sn"):
        if (value := getattr(profile, name)) is not None:
            known[name] = str(value) if name == "gender" else value
    if profile.birth_date is not None:
        known["age"] = age(profile.birth_date, today)
    known["attrs"] = dict(profile.attributes)
    return known
