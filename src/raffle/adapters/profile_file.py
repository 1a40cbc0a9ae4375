"""Profile files (docs/profiles.md): CSV, a header row then a profile a row; JSON Lines.

A file whose shape is wrong (no user_id column, a column that is no field) is refused whole;
a row that is wrong is reported with its line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Literal

from raffle.domain.errors import RaffleError
from raffle.domain.profile_fields import (
    ATTRIBUTE_NAME,
    FIELDS,
    InvalidProfile,
    attribute_from_text,
    attribute_text,
    plain,
)
from raffle.domain.profiles import Profile
from raffle.service.profile_import import ProfileRow, RowProblem

Format = Literal["csv", "jsonl"]
FORMATS: dict[str, Format] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
MEDIA_TYPES: dict[str, Format] = {
    "text/csv": "csv",
    "application/x-ndjson": "jsonl",
    "application/jsonl": "jsonl",
    "application/x-jsonlines": "jsonl",
}
MAX_ROWS = 100_000
ATTRIBUTE_COLUMN = "attr."  # a CSV column `attr.<name>` is the free attribute <name>
_COLUMNS = ("user_id", *(f for f in FIELDS if f != "attributes"))

Rows = list[ProfileRow | RowProblem]


class InvalidProfileFile(RaffleError):
    """The file as a whole cannot be read; `line` is where (0: not one line)."""

    code = "invalid_profile_file"

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


class UnsupportedFormat(RaffleError):
    code = "unsupported_media_type"


def format_of(media_type: str) -> Format:
    """The format of a Content-Type (its parameters, such as charset, aside)."""
    kind = media_type.partition(";")[0].strip().lower()
    if (found := MEDIA_TYPES.get(kind)) is None:
        raise UnsupportedFormat(f"send profiles as {' or '.join(MEDIA_TYPES)}, not {kind!r}")
    return found


def read_profiles(data: bytes | str, format: Format) -> Rows:
    """The rows of a file (UTF-8, a byte order mark allowed), in order."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise InvalidProfileFile(f"not UTF-8 text (byte {error.start})") from None
    rows = _csv(data.removeprefix("\ufeff")) if format == "csv" else _json_lines(data)
    if len(rows) > MAX_ROWS:
        raise InvalidProfileFile(f"more than {MAX_ROWS} rows: split the file")
    return rows


def write_profiles(profiles: Sequence[Profile], format: Format) -> str:
    """The profiles as a file read_profiles reads back as the same profiles: every field
    written (unknown ones empty), and in CSV an `attr.<name>` column for every attribute
    any profile has."""
    if format == "jsonl":
        return "".join(json.dumps(plain(p), ensure_ascii=False) + "\n" for p in profiles)
    names = sorted({name for p in profiles for name in p.attributes})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*_COLUMNS, *(ATTRIBUTE_COLUMN + n for n in names)])
    for profile in profiles:
        fields = plain(profile)
        attributes = [
            "" if (v := profile.attributes.get(n)) is None else attribute_text(v) for n in names
        ]
        writer.writerow(["" if fields[c] is None else fields[c] for c in _COLUMNS] + attributes)
    return out.getvalue()


def _csv(text: str) -> Rows:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise InvalidProfileFile(str(error), 1) from None
    if header is None:
        raise InvalidProfileFile("the file is empty: a header row comes first", 1)
    columns = [c.strip() for c in header]
    _check_header(columns)
    rows: Rows = []
    line = reader.line_num
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return rows
        except csv.Error as error:
            rows.append(RowProblem(line + 1, "malformed_row", "", str(error)))
            return rows  # the reader cannot find where the next row starts
        start, line = line + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(columns):
            message = f"{len(cells)} cells for {len(columns)} columns"
            rows.append(RowProblem(start, "malformed_row", "", message))
            continue
        rows.append(_csv_row(start, dict(zip(columns, cells, strict=True))))


def _check_header(columns: list[str]) -> None:
    if "user_id" not in columns:
        raise InvalidProfileFile("no user_id column", 1)
    for column in columns:
        name = column.removeprefix(ATTRIBUTE_COLUMN)
        attribute = column.startswith(ATTRIBUTE_COLUMN) and ATTRIBUTE_NAME.fullmatch(name)
        if column not in _COLUMNS and not attribute:
            known = ", ".join([*_COLUMNS, f"{ATTRIBUTE_COLUMN}<name>"])
            raise InvalidProfileFile(f"unknown column {column!r}: use {known}", 1)
    if len(set(columns)) != len(columns):
        raise InvalidProfileFile("a column is named twice", 1)


def _csv_row(line: int, cells: dict[str, str]) -> ProfileRow | RowProblem:
    fields: dict[str, object] = {}
    attributes: dict[str, object] = {}
    for column, cell in cells.items():
        value = cell.strip()
        if not column.startswith(ATTRIBUTE_COLUMN):
            fields[column] = value or None
            continue
        name = column.removeprefix(ATTRIBUTE_COLUMN)
        try:
            attributes[name] = attribute_from_text(value, f"attributes.{name}") if value else None
        except InvalidProfile as error:
            return RowProblem(line, error.code, error.field, error.message)
    if attributes:
        fields["attributes"] = attributes
    return ProfileRow(line, fields)


def _json_lines(text: str) -> Rows:
    rows: Rows = []
    # Split on line feeds only: a JSON string may hold U+2028, which splitlines() breaks at.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line)
        except ValueError as error:
            rows.append(RowProblem(number, "malformed_row", "", f"not JSON: {error}"))
            continue
        if not isinstance(fields, dict):
            rows.append(RowProblem(number, "malformed_row", "", "a line is one JSON object"))
            continue
        rows.append(ProfileRow(number, fields))
    return rows
