"""`raffle route` end to end: the path for made-up attributes, from a stored tree (loaded
with `raffle load` into the embedded SQLite database) or straight from a campaign file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from raffle.entrypoints.cli import main

EXAMPLE = str(Path(__file__).parents[2] / "examples" / "route-trees.yaml")


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("RAFFLE_DATABASE_URL", f"sqlite:///{tmp_path / 'raffle.db'}")
    return CliRunner()


def _path(output: str) -> list[list[str]]:
    """The table's rows: node, what it tests, the fact, the line taken, where it leads."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in output.splitlines()]
    return [row for row in rows if len(row) == 5 and row[0].startswith("by_")]


def test_a_stored_tree_shows_the_path_of_the_given_attributes(cli: CliRunner) -> None:
    assert cli.invoke(main, ["migrate"]).exit_code == 0
    loaded = cli.invoke(main, ["load", EXAMPLE])
    assert loaded.exit_code == 0, loaded.output
    found = cli.invoke(main, ["route", "newcomers", "--attr", "age=30", "--attr", "region=east"])
    assert found.exit_code == 0, found.output
    assert _path(found.stdout) == [
        ["by_age", "age", "30", "1: default", "by_vip"],
        ["by_vip", "tag vip", "false", "1: default", "by_region"],
        ["by_region", "region", '"east"', '0: in ["north", "east"]', "north"],
    ]
    assert found.stdout.rstrip().endswith("-> activity 203 (leaf north)")
    vip = cli.invoke(main, ["route", "newcomers", "--attr", "age=30", "--tag", "vip"])
    assert vip.stdout.rstrip().endswith("-> activity 202 (leaf vip)")
    unknown = cli.invoke(main, ["route", "newcomers"])
    assert _path(unknown.stdout)[0] == ["by_age", "age", "(unknown)", "1: default", "by_vip"]
    missing = cli.invoke(main, ["route", "nope"])
    assert (missing.exit_code, missing.stderr.strip()) == (
        2,
        "raffle: unknown_route_tree: no tree 'nope'",
    )


def test_a_tree_of_a_campaign_file_routes_without_a_database(cli: CliRunner) -> None:
    minor = cli.invoke(
        main, ["route", "newcomers", "--file", EXAMPLE, "--attr", "birth_date=2020-02-29"]
    )
    assert minor.exit_code == 0, minor.output
    assert _path(minor.stdout)[0][:4] == ["by_age", "age", _path(minor.stdout)[0][2], "0: < 18"]
    assert int(_path(minor.stdout)[0][2]) < 18
    assert minor.stdout.rstrip().endswith("-> activity 201 (leaf general)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--attr", "age=old"], "--attr age: invalid literal for int()"),
        (["--attr", "gender=woman"], "--attr gender: 'woman' is not a valid Gender"),
        (["--attr", "shoe=42"], "--attr shoe: no such fact"),
        (["--attr", "age"], "--attr 'age': write NAME=VALUE"),
    ],
)
def test_bad_attributes_are_refused_in_one_line(
    cli: CliRunner, args: list[str], message: str
) -> None:
    refused = cli.invoke(main, ["route", "newcomers", "--file", EXAMPLE, *args])
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"raffle: {message}")
