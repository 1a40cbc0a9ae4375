"""A profile's fields as written by people (forms, files): read, bounded, merged, masked."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

from raffle.domain.errors import RaffleError
from raffle.domain.profiles import Attribute, Gender, Profile
from raffle.domain.users import NAME

# Every field a profile has besides its user id, in the order files and forms show them.
FIELDS = ("phone", "level", "gender", "birth_date", "region", "channel", "sn", "attributes")
# The fields an operator may open to players (runtime switches `profile.edit.<field>`): never
# the level, which participation policies admit by.
PLAYER_FIELDS = tuple(field for field in FIELDS if field != "level")

MAX_LEVEL = 999
MAX_TEXT = 64  # region, channel, device serial
MAX_PHONE_INPUT = 32  # characters of a phone number as typed, spaces and dashes included
EARLIEST_BIRTH = date(1900, 1, 1)
MAX_ATTRIBUTES = 32
MAX_ATTRIBUTE_TEXT = 256
MAX_INTEGER = 2**63 - 1  # a signed 64-bit integer, as every JSON reader keeps it exactly
ATTRIBUTE_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

Changes = Mapping[str, Any]  # field -> value; None clears it (an attribute: removes it)


class InvalidProfile(RaffleError):
    """A field that cannot be stored as written; `field` names it."""

    code = "invalid_profile"

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class InvalidPhone(InvalidProfile):
    code = "invalid_phone"


class PhoneTaken(RaffleError):
    """Another user's profile has this phone number: a number belongs to one user."""

    code = "phone_taken"


class FieldNotEditable(RaffleError):
    """A player sent a field operators have not opened to players."""

    code = "field_not_editable"


def user_id(value: object) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise InvalidProfile("user_id is 3-32 letters, digits, '_', '.' or '-'", "user_id")
    return value


def changes_of(raw: Changes) -> dict[str, Any]:
    """Typed values of the fields in `raw` (JSON values, or text from a file); the phone is
    left as typed, for the phone book to normalise. An unknown field is refused."""
    typed: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in FIELDS:
            raise InvalidProfile(f"unknown field {name!r}: use {', '.join(FIELDS)}", name)
        typed[name] = None if value is None or value == "" else _READERS[name](value)
    return typed


def edited(profile: Profile, changes: Changes, today: date) -> Profile:
    """The profile with typed `changes` applied: attributes merge by name (None removes
    one); the result is checked against every bound."""
    fields = {n: v for n, v in changes.items() if n != "attributes"}
    if fields.get("level", 0) is None:
        fields["level"] = 0
    attributes = dict(profile.attributes)
    for name, value in (changes.get("attributes") or {}).items():
        if value is None:
            attributes.pop(name, None)
        else:
            attributes[name] = value
    if len(attributes) > MAX_ATTRIBUTES:
        raise InvalidProfile(f"at most {MAX_ATTRIBUTES} attributes", "attributes")
    updated = replace(profile, **fields, attributes=attributes)
    if updated.birth_date is not None and not EARLIEST_BIRTH <= updated.birth_date <= today:
        raise InvalidProfile(f"birth_date is from {EARLIEST_BIRTH} to today", "birth_date")
    return updated


def attribute(value: object, where: str = "attributes") -> Attribute:
    """A free attribute from its JSON value: text that is an ISO date ("YYYY-MM-DD") is a
    date; other text, integers, finite numbers and booleans are themselves."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -MAX_INTEGER - 1 <= value <= MAX_INTEGER:
            raise InvalidProfile("an integer attribute is a signed 64-bit number", where)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidProfile("a number attribute is finite", where)
        return value
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        if len(value) > MAX_ATTRIBUTE_TEXT:
            raise InvalidProfile(f"a text attribute has at most {MAX_ATTRIBUTE_TEXT}", where)
        return _date(value, where) if ISO_DATE.fullmatch(value) else value
    raise InvalidProfile("an attribute is text, a number, true/false or a date", where)


def attribute_from_text(text: str, where: str) -> Attribute:
    """An attribute from a file's cell: a JSON number, true/false or quoted string where the
    cell is one, else the text itself (so "012345" stays text, and '"12"' is the text 12)."""
    try:
        value = json.loads(text)
    except ValueError:
        return attribute(text, where)
    return attribute(value if isinstance(value, bool | int | float | str) else text, where)


def attribute_text(value: Attribute) -> str:
    """A file's cell for the attribute, read back by attribute_from_text as the same value:
    text that would read as something else is written as a JSON string."""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, date):
        return value.isoformat()
    if not value or value != value.strip():  # a cell is read stripped, an empty one as none
        return json.dumps(value, ensure_ascii=False)
    try:
        json.loads(value)
    except ValueError:
        return value
    return json.dumps(value, ensure_ascii=False)


def attribute_json(value: Attribute) -> str | int | float | bool:
    return value.isoformat() if isinstance(value, date) else value


def attributes_json(profile: Profile) -> dict[str, str | int | float | bool]:
    return {name: attribute_json(value) for name, value in sorted(profile.attributes.items())}


def plain(profile: Profile) -> dict[str, object]:
    """The profile's fields as JSON values (dates as ISO text), by their names."""
    return {
        "user_id": profile.user_id,
        "phone": profile.phone,
        "level": profile.level,
        "gender": None if profile.gender is None else profile.gender.value,
        "birth_date": None if profile.birth_date is None else profile.birth_date.isoformat(),
        "region": profile.region,
        "channel": profile.channel,
        "sn": profile.sn,
        "attributes": attributes_json(profile),
    }


def mask(country_code: int, national: str) -> str:
    """A phone number as shown outside the operator API: the country code, then the national
    number with its middle hidden ("+86 138****8000"): at least four digits, and at most its
    first three and last four shown."""
    hidden = min(len(national), max(4, len(national) - 7))
    shown = len(national) - hidden
    head = min(3, shown // 2)
    tail = shown - head
    return f"+{country_code} {national[:head]}{'*' * hidden}{national[len(national) - tail :]}"


def _level(value: object) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LEVEL:
        raise InvalidProfile(f"level is a whole number from 0 to {MAX_LEVEL}", "level")
    return value


def _gender(value: object) -> Gender:
    if isinstance(value, str) and value in set(Gender):
        return Gender(value)
    raise InvalidProfile("gender is f, m or x", "gender")


def _birth_date(value: object) -> date:
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not ISO_DATE.fullmatch(value):
        raise InvalidProfile("birth_date is a date as YYYY-MM-DD", "birth_date")
    return _date(value, "birth_date")


def _date(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidProfile(f"{text!r} is not a date", where) from None


def _text(name: str, limit: int) -> Any:
    def read(value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InvalidProfile(f"{name} is text", name)
        if len(text := value.strip()) > limit or not text.isprintable():
            raise InvalidProfile(f"{name} is at most {limit} printable characters", name)
        return text

    return read


def _attributes(value: object) -> dict[str, Attribute | None]:
    if not isinstance(value, Mapping):
        raise InvalidProfile("attributes is an object of named values", "attributes")
    found: dict[str, Attribute | None] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not ATTRIBUTE_NAME.fullmatch(name):
            raise InvalidProfile(
                f"attribute name {name!r}: a-z first, then a-z, 0-9 or _, at most 32",
                "attributes",
            )
        where = f"attributes.{name}"
        found[name] = None if item is None else attribute(item, where)
    return found


_READERS: dict[str, Any] = {
    "phone": _text("phone", MAX_PHONE_INPUT),
    "level": _level,
    "gender": _gender,
    "birth_date": _birth_date,
    "region": _text("region", MAX_TEXT),
    "channel": _text("channel", MAX_TEXT),
    "sn": _text("sn", MAX_TEXT),
    "attributes": _attributes,
}
