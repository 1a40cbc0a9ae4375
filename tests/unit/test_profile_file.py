"""Profile files: CSV and JSON Lines read into rows with their lines; a wrong shape refuses the
file whole, a wrong row is a problem of its own line."""

from __future__ import annotations

from datetime import date

import pytest

from raffle.adapters.profile_file import (
    InvalidProfileFile,
    UnsupportedFormat,
    format_of,
    read_profiles,
)
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
