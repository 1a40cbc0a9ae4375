"""`raffle deny` end to end on the embedded SQLite default: add, list, lift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from raffle.entrypoints.cli import main


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("RAFFLE_DATABASE_URL", f"sqlite:///{tmp_path / 'raffle.db'}")
    runner = CliRunner()
    assert runner.invoke(main, ["migrate"]).exit_code == 0
    return runner


def test_entries_are_added_listed_and_lifted(cli: CliRunner) -> None:
    added = cli.invoke(main, ["deny", "add", "ip", "10.1.2.3/16", "--reason", "bots"])
    assert added.exit_code == 0, added.output
    assert "denied ip 10.1.0.0/16" in added.output
    entry = re.search(r"entry (\d+)", added.output)
    assert entry is not None
    phone = ["deny", "add", "phone", "138 0013 8000", "--reason", "fraud", "--minutes", "60"]
    assert "+8613800138000" in cli.invoke(main, phone).output

    listed = cli.invoke(main, ["deny", "list"])
    assert listed.exit_code == 0, listed.output
    assert "10.1.0.0/16" in listed.output
    assert "+8613800138000" in listed.output
    only_ips = cli.invoke(main, ["deny", "list", "--kind", "ip"]).output
    assert "+8613800138000" not in only_ips

    lifted = cli.invoke(main, ["deny", "lift", entry.group(1)])
    assert lifted.exit_code == 0, lifted.output
    assert "10.1.0.0/16" not in cli.invoke(main, ["deny", "list"]).output
    again = cli.invoke(main, ["deny", "lift", entry.group(1)])
    assert again.exit_code != 0
    assert "no deny entry" in again.output


def test_a_bad_value_is_refused_with_its_reason(cli: CliRunner) -> None:
    bad = cli.invoke(main, ["deny", "add", "ip", "10.0.0.0/40", "--reason", "x"])
    assert bad.exit_code != 0
    assert "not an IP address or CIDR range" in bad.output
