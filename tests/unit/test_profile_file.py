"""Profile files: CSV and JSON Lines read into rows with their lines; a wrong shape refuses the
file whole, a wrong row is a problem of its own line."""

from __future__ import annotations

from datetime import date

import pytest

from raffle.adapters.profile_file import (
    Format,
    InvalidProfileFile,
    UnsupportedFormat,
    format_of,
    read_profiles,
    write_profiles,
)
from raffle.domain.profile_fields import changes_of, edited
from raffle.domain.profiles import Gender, Profile
from raffle.service.profile_import import ProfileRow, RowProblem


def test_csv_rows_carry_their_first_line_and_typed_attributes() -> None:
    text = (
        "\ufeffuser_id,level,region,attr.vip,attr.joined,attr.zip\n"
        "alice,3,浙江,true,2024-05-01,012345\n"
        "\n"
        'bob,1,"two\nlines",,,\n'
        "carol,,,12,,\n"
    )
    rows = read_profiles(text.encode(), "csv")
    assert rows == [
        ProfileRow(
            2,
            {
                "user_id": "alice",
                "level": "3",
                "region": "浙江",
                "attributes": {"vip": True, "joined": date(2024, 5, 1), "zip": "012345"},
            },
        ),
        ProfileRow(
            4,
            {
                "user_id": "bob",
                "level": "1",
                "region": "two\nlines",
                "attributes": {"vip": None, "joined": None, "zip": None},
            },
        ),
        ProfileRow(
            6,
            {
                "user_id": "carol",
                "level": None,
                "region": None,
                "attributes": {"vip": 12, "joined": None, "zip": None},
            },
        ),
    ]


def test_a_csv_row_of_the_wrong_width_or_bad_attribute_is_its_lines_problem() -> None:
    text = "user_id,level,attr.d\nalice,3\nbob,1,2024-02-30\ncarol,2,\n"
    rows = read_profiles(text, "csv")
    assert [(r.line, r.code, r.field) for r in rows if isinstance(r, RowProblem)] == [
        (2, "malformed_row", ""),
        (3, "invalid_profile", "attributes.d"),
    ]
    assert [r.line for r in rows if isinstance(r, ProfileRow)] == [4]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("level,region\n3,x\n", "no user_id"),
        ("user_id,status\nalice,locked\n", "unknown column 'status'"),
        ("user_id,attr.Bad\nalice,1\n", "unknown column 'attr.Bad'"),
        ("user_id,level,level\nalice,1,2\n", "twice"),
    ],
)
def test_a_file_of_the_wrong_shape_is_refused_whole(text: str, message: str) -> None:
    with pytest.raises(InvalidProfileFile, match=message) as refused:
        read_profiles(text, "csv")
    assert refused.value.line == 1
    assert refused.value.code == "invalid_profile_file"


def test_a_file_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(InvalidProfileFile, match="UTF-8"):
        read_profiles("user_id\n张三\n".encode("gb18030"), "csv")


def test_json_lines_rows_and_their_problems() -> None:
    text = (
        '{"user_id": "alice", "level": 3, "attributes": {"vip": true}}\n'
        "\n"
        "{not json\n"
        "[1, 2]\n"
        '{"user_id": "bob", "note": "a\u2028b"}\r\n'
    )
    rows = read_profiles(text, "jsonl")
    assert rows[0] == ProfileRow(1, {"user_id": "alice", "level": 3, "attributes": {"vip": True}})
    assert [(r.line, r.code) for r in rows if isinstance(r, RowProblem)] == [
        (3, "malformed_row"),
        (4, "malformed_row"),
    ]
    assert rows[-1] == ProfileRow(5, {"user_id": "bob", "note": "a\u2028b"})


def test_the_format_is_read_from_the_content_type() -> None:
    assert format_of("text/csv; charset=utf-8") == "csv"
    assert format_of("application/x-ndjson") == "jsonl"
    with pytest.raises(UnsupportedFormat) as refused:
        format_of("application/json")
    assert refused.value.code == "unsupported_media_type"


TRICKY = [
    Profile(
        "alice",
        phone="+8613800138000",
        level=3,
        gender=Gender.FEMALE,
        birth_date=date(1990, 5, 17),
        region="浙江, 杭州",  # a comma: quoted
        channel='say "hi"',
        sn="SN-1",
        attributes={
            "vip": True,
            "n": 12,
            "ratio": 0.1,
            "joined": date(2024, 5, 1),
            "zip": "012345",
            "looks_numeric": "12",
            "looks_true": "true",
            "quoted": '"x"',
            "spaced": " a ",
            "empty": "",
            "lines": "two\nlines",
        },
    ),
    Profile("bob"),
    Profile("carol", attributes={"n": -5, "big": 2**63 - 1}),
]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_what_is_written_reads_back_as_the_same_profiles(kind: Format) -> None:
    written = write_profiles(TRICKY, kind)
    rows = read_profiles(written.encode(), kind)
    assert all(isinstance(r, ProfileRow) for r in rows)
    back = [
        edited(Profile(str(r.fields["user_id"])), changes_of(_without_id(r)), date(2026, 11, 24))
        for r in rows
        if isinstance(r, ProfileRow)
    ]
    assert back == TRICKY


def _without_id(row: ProfileRow) -> dict[str, object]:
    return {k: v for k, v in row.fields.items() if k != "user_id"}
