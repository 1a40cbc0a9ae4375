"""`raffle profile import` end to end on the embedded SQLite default: a progress bar, the
report, bad rows by line (exit status 1), and nothing changed by importing again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.profiles import Profile
from raffle.entrypoints.cli import main


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("RAFFLE_DATABASE_URL", f"sqlite:///{tmp_path / 'raffle.db'}")
    runner = CliRunner()
    assert runner.invoke(main, ["migrate"]).exit_code == 0
    return runner


def _stored(tmp_path: Path, user_id: str) -> Profile | None:
    async def read() -> Profile | None:
        engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'raffle.db'}")
        try:
            async with SqlUnitOfWork(engine) as uow:
                return await uow.profiles.get(user_id)
        finally:
            await engine.dispose()

    return asyncio.run(read())


def test_a_csv_import_shows_progress_reports_bad_rows_and_is_idempotent(
    cli: CliRunner, tmp_path: Path
) -> None:
    file = tmp_path / "crm.csv"
    rows = [f"c{n:04d},1380000{n:04d},{n % 4},杭州" for n in range(1000)]
    rows[10] = "c0010,not a phone,1,杭州"
    file.write_text("user_id,phone,level,region\n" + "\n".join(rows) + "\n", encoding="utf-8")

    first = cli.invoke(main, ["profile", "import", str(file)])
    assert first.exit_code == 1, first.output  # some rows refused
    assert "1000 rows: 999 created, 0 updated, 0 unchanged, 1 refused" in first.stdout
    assert "12" in first.stdout  # the bad row's line: the header is line 1
    assert "invalid_phone" in first.stdout
    assert "1000/1000" in first.stderr  # the progress bar, finished
    assert _stored(tmp_path, "c0999") == Profile(
        "c0999", phone="+8613800000999", level=3, region="杭州"
    )
    assert _stored(tmp_path, "c0010") is None

    again = cli.invoke(main, ["profile", "import", str(file)])
    assert "0 created, 0 updated, 999 unchanged, 1 refused" in again.stdout


def test_json_lines_by_extension_or_flag_and_a_bad_file_in_one_line(
    cli: CliRunner, tmp_path: Path
) -> None:
    lines = tmp_path / "profiles.txt"
    lines.write_text(json.dumps({"user_id": "alice", "level": 2, "attributes": {"vip": True}}))
    unknown = cli.invoke(main, ["profile", "import", str(lines)])
    assert unknown.exit_code == 2
    assert "--format" in unknown.stderr
    done = cli.invoke(main, ["profile", "import", "--format", "jsonl", str(lines)])
    assert done.exit_code == 0, done.output
    assert "1 created" in done.stdout
    assert _stored(tmp_path, "alice") == Profile("alice", level=2, attributes={"vip": True})

    bad = tmp_path / "bad.csv"
    bad.write_text("user_id,mood\nalice,ok\n")
    refused = cli.invoke(main, ["profile", "import", str(bad)])
    assert refused.exit_code == 2
    assert "invalid_profile_file: line 1: unknown column 'mood'" in refused.stderr


def test_an_export_imports_back_changing_nothing(cli: CliRunner, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"user_id": "alice", "phone": "13800138000", "attributes": {"n": "12"}})
        + "\n"
        + json.dumps({"user_id": "bob", "level": 4})
        + "\n"
    )
    assert cli.invoke(main, ["profile", "import", str(source)]).exit_code == 0
    for name in ("out.csv", "out.jsonl"):
        exported = cli.invoke(main, ["profile", "export", str(tmp_path / name)])
        assert exported.exit_code == 0, exported.output
        assert "2 profiles" in exported.stdout
        again = cli.invoke(main, ["profile", "import", str(tmp_path / name)])
        assert "2 rows: 0 created, 0 updated, 2 unchanged, 0 refused" in again.stdout
    assert '"""12"""' in (tmp_path / "out.csv").read_text()  # text that looks like a number
