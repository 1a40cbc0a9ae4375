"""A profile's fields as people write them: typed, bounded, merged, masked; phone numbers."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from raffle.adapters.phones import PhoneBook
from raffle.domain.profile_fields import (
    MAX_ATTRIBUTES,
    InvalidPhone,
    InvalidProfile,
    attribute,
    attribute_from_text,
    changes_of,
    edited,
    mask,
    user_id,
)
from raffle.domain.profiles import Gender, Profile

TODAY = date(2026, 11, 24)


@pytest.mark.parametrize(
    ("raw", "typed"),
    [
        ({"level": 3}, {"level": 3}),
        ({"level": " 7 "}, {"level": 7}),  # a file's cell
        ({"gender": "f"}, {"gender": Gender.FEMALE}),
        ({"birth_date": "1990-05-17"}, {"birth_date": date(1990, 5, 17)}),
        ({"region": "  浙江 "}, {"region": "浙江"}),
        ({"sn": ""}, {"sn": None}),  # empty clears, as null does
        ({"channel": None}, {"channel": None}),
        ({"phone": "138 0013 8000"}, {"phone": "138 0013 8000"}),  # for the phone book
        (
            {"attributes": {"vip": True, "joined": "2024-05-01", "note": "2024-5-1", "n": 1.5}},
            {
                "attributes": {
                    "vip": True,
                    "joined": date(2024, 5, 1),
                    "note": "2024-5-1",  # not ISO: text
                    "n": 1.5,
                }
            },
        ),
    ],
)
def test_fields_as_written_are_typed(raw: dict[str, Any], typed: dict[str, Any]) -> None:
    assert changes_of(raw) == typed


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"level": -1}, "level"),
        ({"level": 1000}, "level"),
        ({"level": True}, "level"),
        ({"level": "3.5"}, "level"),
        ({"gender": "female"}, "gender"),
        ({"birth_date": "17/05/1990"}, "birth_date"),
        ({"birth_date": "1990-02-30"}, "birth_date"),
        ({"region": "x" * 65}, "region"),
        ({"sn": "a\nb"}, "sn"),
        ({"region": 5}, "region"),
        ({"phone": "1" * 33}, "phone"),
        ({"attributes": ["vip"]}, "attributes"),
        ({"attributes": {"Vip": 1}}, "attributes"),
        ({"attributes": {"vip": {"nested": 1}}}, "attributes.vip"),
        ({"attributes": {"vip": [1]}}, "attributes.vip"),
        ({"attributes": {"big": 2**63}}, "attributes.big"),
        ({"attributes": {"x": float("nan")}}, "attributes.x"),
        ({"attributes": {"s": "x" * 257}}, "attributes.s"),
        ({"attributes": {"d": "2024-13-01"}}, "attributes.d"),
        ({"status": "locked"}, "status"),  # not a profile field
    ],
)
def test_a_field_out_of_bounds_is_refused_naming_it(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidProfile) as refused:
        changes_of(raw)
    assert refused.value.field == field
    assert refused.value.code == "invalid_profile"


def test_changes_merge_attributes_by_name_and_clear_fields() -> None:
    before = Profile("alice", level=3, region="浙江", attributes={"vip": True, "city": "杭州"})
    after = edited(
        before,
        changes_of({"region": None, "level": None, "attributes": {"vip": None, "n": 2}}),
        TODAY,
    )
    assert after == Profile("alice", level=0, attributes={"city": "杭州", "n": 2})
    assert before.attributes == {"vip": True, "city": "杭州"}  # untouched


def test_a_profile_keeps_at_most_its_attributes_and_a_birth_date_in_the_past() -> None:
    full = Profile("alice", attributes={f"a{n}": n for n in range(MAX_ATTRIBUTES)})
    assert edited(full, {"attributes": {"a0": 5}}, TODAY).attributes["a0"] == 5
    with pytest.raises(InvalidProfile, match="at most 32"):
        edited(full, {"attributes": {"one_more": 1}}, TODAY)
    with pytest.raises(InvalidProfile) as future:
        edited(Profile("bob"), changes_of({"birth_date": "2026-11-25"}), TODAY)
    assert future.value.field == "birth_date"
    assert edited(Profile("bob"), {"birth_date": TODAY}, TODAY).birth_date == TODAY


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("12", 12),
        ("-1.25", -1.25),
        ("012345", "012345"),  # not JSON: a postcode stays text
        ("hello", "hello"),
        ('"12"', "12"),  # a JSON string: text, whatever it holds
        ("2024-05-01", date(2024, 5, 1)),
    ],
)
def test_a_file_cell_is_a_number_or_boolean_where_it_is_one(text: str, value: object) -> None:
    assert attribute_from_text(text, "attributes.x") == value
    assert type(attribute_from_text(text, "attributes.x")) is type(value)


def test_attributes_keep_their_types() -> None:
    assert attribute(True) is True
    assert attribute(2**63 - 1) == 2**63 - 1
    assert attribute(date(2024, 1, 1)) == date(2024, 1, 1)


@pytest.mark.parametrize("bad", ["ab", "a" * 33, "al ice", "", None, "ali$"])
def test_a_user_id_is_an_account_name(bad: object) -> None:
    with pytest.raises(InvalidProfile):
        user_id(bad)
    assert user_id("alice.w-1_") == "alice.w-1_"


@pytest.mark.parametrize(
    ("country", "national", "masked"),
    [
        (86, "13800138000", "+86 138****8000"),
        (1, "6502530000", "+1 650****000"),
        (852, "51234567", "+852 51****67"),
        (49, "30123456789", "+49 301****6789"),
        (7, "12345", "+7 ****5"),
    ],
)
def test_a_masked_number_hides_at_least_four_middle_digits(
    country: int, national: str, masked: str
) -> None:
    assert mask(country, national) == masked


def test_the_phone_book_reads_numbers_of_its_region_and_any_with_a_country_code() -> None:
    book = PhoneBook("CN")
    assert book.normalise("138 0013 8000") == "+8613800138000"
    assert book.normalise("+86-138-0013-8000") == "+8613800138000"
    assert book.normalise("+1 650 253 0000") == "+16502530000"
    assert PhoneBook("US").normalise("(650) 253-0000") == "+16502530000"
    assert book.masked("+8613800138000") == "+86 138****8000"
    for bad in ("12345", "not a number", "+86 138 0013 800"):
        with pytest.raises(InvalidPhone) as refused:
            book.normalise(bad)
        assert (refused.value.code, refused.value.field) == ("invalid_phone", "phone")
    with pytest.raises(ValueError, match="region"):
        PhoneBook("XX")
