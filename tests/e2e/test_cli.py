"""The `raffle` command line end to end, on the embedded SQLite default."""

import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.cells import cell_len

from raffle.adapters.passwords import PasswordHasher
from raffle.entrypoints.cli import main
from tests.unit.test_campaign_file import FIVE_MISTAKES, FIVE_PROBLEMS

EXAMPLES = Path(__file__).parents[2] / "examples"
BIG_MARKET = str(EXAMPLES / "big-market.yaml")


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("RAFFLE_DATABASE_URL", f"sqlite:///{tmp_path / 'raffle.db'}")
    return CliRunner()


def test_simulate_prints_one_json_object_for_one_strategy(cli: CliRunner) -> None:
    args = ["simulate", BIG_MARKET, "--strategy", "100006", "--draws", "100000", "--json"]
    result = cli.invoke(main, [*args, "--draw-count", "3"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["strategy"] == 100006
    assert body["draws"] == 100_000
    assert body["p_value"] > 1e-6
    prizes = {p["id"]: p for p in body["prizes"]}
    assert set(prizes) == set(range(101, 110))
    assert sum(p["count"] for p in prizes.values()) == 100_000
    assert prizes[109]["count"] <= 10  # its stock: once gone, its odds go to the fallback
    assert prizes[109]["expected_probability"] <= 0.0001
    assert prizes[102]["expected_probability"] == pytest.approx(0.2)
    assert abs(prizes[102]["observed_probability"] - 0.2) < 0.01


def test_simulate_a_perfect_activity_draws_only_real_prizes(cli: CliRunner) -> None:
    capped = str(Path(__file__).parents[2] / "examples" / "capped.yaml")
    args = ["simulate", capped, "--strategy", "1", "--draws", "20000", "--json", "--perfect"]
    result = cli.invoke(main, args)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["p_value"] > 1e-6
    counts = {p["id"]: p["count"] for p in body["prizes"]}
    assert counts[3] == 40  # the bags' stock, then only points: every draw won
    assert counts.get(1, 0) == 0
    assert counts[2] == 20_000 - 40


def test_lock_and_tiers_show_in_the_simulation(cli: CliRunner) -> None:
    locked = cli.invoke(main, ["simulate", BIG_MARKET, "--draws", "2000", "--json", "--seed", "1"])
    assert locked.exit_code == 0, locked.output
    [body] = json.loads(locked.stdout)
    counts = {p["id"]: p["count"] for p in body["prizes"]}
    assert counts.get(108, 0) == counts.get(109, 0) == 0  # locked until draws 2 and 3
    tier = cli.invoke(
        main, ["simulate", BIG_MARKET, "--draws", "2000", "--json", "--draw-count", "60"]
    )
    [body] = json.loads(tier.stdout)
    assert {p["id"] for p in body["prizes"] if p["count"]} == {102, 103, 104, 105}


def test_simulate_prints_a_table_by_default(cli: CliRunner) -> None:
    result = cli.invoke(main, ["simulate", BIG_MARKET, "--draws", "20000", "--user", "user001"])
    assert result.exit_code == 0, result.output
    assert "chi-square p-value" in result.stdout
    assert "1 积分" in result.stdout  # the listed-users prize is all user001 gets


def test_simulate_per_user_compares_each_draw_number_with_its_odds(cli: CliRunner) -> None:
    guaranteed = str(EXAMPLES / "guaranteed.yaml")
    args = ["simulate", guaranteed, "--strategy", "1", "--draws", "20000", "--json"]
    result = cli.invoke(main, [*args, "--per-user", "10", "--seed", "7"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert (body["users"], body["draws_each"], body["draws"]) == (2000, 10, 20_000)
    assert body["p_value"] > 1e-6
    first, tenth = body["by_draw"][0], body["by_draw"][9]
    assert {p["id"] for p in first["prizes"] if p["count"]} <= {2, 3, 4}  # a first draw wins
    assert {p["id"] for p in tenth["prizes"]} == {3, 4}
    assert sum(p["count"] for p in tenth["prizes"]) == 2000
    table = cli.invoke(main, ["simulate", guaranteed, "--draws", "100", "--per-user", "10"])
    assert "draw 10 of 10 users" in table.stdout
    few = cli.invoke(main, ["simulate", guaranteed, "--draws", "5", "--per-user", "10"])
    assert few.exit_code != 0
    assert "--draws 5 is fewer than one user's --per-user 10" in few.stderr


def test_an_unknown_strategy_is_a_clear_error(cli: CliRunner) -> None:
    result = cli.invoke(main, ["simulate", BIG_MARKET, "--strategy", "5"])
    assert result.exit_code == 2
    assert "strategy 5 is not in" in result.stderr


def test_migrate_then_load_stores_the_campaign(cli: CliRunner, tmp_path: Path) -> None:
    assert cli.invoke(main, ["migrate"]).exit_code == 0
    result = cli.invoke(main, ["load", BIG_MARKET])
    assert result.exit_code == 0, result.output
    assert "loaded 10 awards, 1 strategies, 1 activities and 3 SKUs" in result.stdout
    again = cli.invoke(main, ["load", BIG_MARKET])
    assert again.exit_code == 0, again.output  # loading is an upsert


def test_an_invalid_file_is_refused_with_lines_and_changes_nothing(
    cli: CliRunner, tmp_path: Path
) -> None:
    assert cli.invoke(main, ["migrate"]).exit_code == 0
    bad = tmp_path / "bad.yaml"
    text = (EXAMPLES / "big-market.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("kind: coupon", "kind: cake"), encoding="utf-8")
    result = cli.invoke(main, ["load", str(bad)])
    assert result.exit_code == 2
    assert "line 12: awards.7.kind: Input should be" in result.stderr
    bad.write_text(text.replace("rate: 0.30", "rate: 0.31"), encoding="utf-8")
    result = cli.invoke(main, ["load", str(bad)])
    assert result.exit_code == 2
    assert "line 24: strategies.0.prizes: rates sum to 1.01, more than 1" in result.stderr
    assert cli.invoke(main, ["simulate", str(bad)]).exit_code == 2
    db = sqlite3.connect(tmp_path / "raffle.db")
    try:
        assert db.execute("select count(*) from strategy").fetchone() == (0,)
    finally:
        db.close()


def test_load_lists_every_problem_of_a_file_with_its_line(cli: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "five.yaml"
    bad.write_text(FIVE_MISTAKES, encoding="utf-8")
    result = cli.invoke(main, ["load", str(bad)])
    assert result.exit_code == 2
    listed = [line.strip() for line in result.stderr.splitlines()[1:]]
    assert len(listed) == len(FIVE_PROBLEMS), result.stderr
    for shown, (line, message) in zip(listed, FIVE_PROBLEMS, strict=True):
        assert shown.startswith(f"line {line}: "), shown
        assert message in shown, shown
    bad.write_text("awards: [\n  {id: 1\n", encoding="utf-8")
    result = cli.invoke(main, ["load", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[1].strip().startswith("line 3: ")


def test_bad_settings_are_refused_at_start(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAFFLE_DATABASE_URL", "oracle://scott:tiger@db/orcl")
    result = cli.invoke(main, ["migrate"])
    assert result.exit_code == 2
    assert "unsupported database" in result.stderr


def test_user_create_makes_an_operator_who_can_sign_in(cli: CliRunner) -> None:
    assert cli.invoke(main, ["migrate"]).exit_code == 0
    made = cli.invoke(main, ["user", "create", "root", "--admin", "--password", "long-enough-pw"])
    assert made.exit_code == 0, made.output
    assert "created operator root" in made.stdout
    again = cli.invoke(main, ["user", "create", "root", "--password", "long-enough-pw"])
    assert again.exit_code == 2
    assert "name_taken" in again.stderr


def test_simulate_lines_up_chinese_titles_by_their_width_on_a_terminal(cli: CliRunner) -> None:
    result = cli.invoke(main, ["simulate", BIG_MARKET, "--draws", "2000", "--seed", "1"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.strip()[:3].isdigit()]
    assert len(rows) >= 5
    assert any(len(row) != cell_len(row) for row in rows)  # Chinese titles among them
    assert len({cell_len(row.rstrip()) for row in rows}) == 1
    # each count ends in the same terminal column
    ends = {cell_len(row[: row.index(" 0.")].rstrip()) for row in rows}
    assert len(ends) == 1


def test_simulate_without_scipy_tells_the_statistic_and_how_to_get_the_p_value(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # as if not installed
    result = cli.invoke(main, ["simulate", BIG_MARKET, "--draws", "2000", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert re.search(r"chi-square \d+(\.\d+)? with \d+ degrees of freedom", result.stdout)
    assert "chi-square p-value: needs scipy (pip install 'raffle[stats]')" in result.stdout
    as_json = cli.invoke(main, ["simulate", BIG_MARKET, "--draws", "2000", "--json"])
    [body] = json.loads(as_json.stdout)
    assert body["p_value"] is None
    assert body["chi_square"] >= 0


def _user(cli: CliRunner, *args: str, stdin: str | None = None) -> Result:
    return cli.invoke(main, ["user", *args], input=stdin)


def test_user_list_password_lock_and_unlock(cli: CliRunner, tmp_path: Path) -> None:
    unmigrated = _user(cli, "list")
    assert unmigrated.exit_code == 2
    assert unmigrated.stderr == (
        "raffle: the database refused: no such table: user_account "
        "(has `raffle migrate` run on it?)\n"
    )
    assert cli.invoke(main, ["migrate"]).exit_code == 0
    for name in ("zoe", "alice"):
        assert _user(cli, "create", name, "--password", "long-enough-pw").exit_code == 0
    assert _user(cli, "create", "root", "--admin", "--password", "long-enough-pw").exit_code == 0

    listed = _user(cli, "list")
    assert listed.exit_code == 0, listed.output
    rows = [line.split() for line in listed.stdout.splitlines() if line.strip()]
    assert ["alice", "player", "active"] in rows
    assert ["root", "operator", "active"] in rows
    assert rows[-1] == ["3", "accounts"]
    names = [row[0] for row in rows if row[-1] == "active"]
    assert names == ["alice", "root", "zoe"]
    assert _user(cli, "list", "--limit", "1").stdout.splitlines()[-1] == "1 of 3 accounts"

    locked = _user(cli, "lock", "alice", "--reason", "spam")
    assert locked.exit_code == 0, locked.output
    assert ["alice", "player", "locked"] in [
        line.split() for line in _user(cli, "list").stdout.splitlines()
    ]
    assert _user(cli, "unlock", "alice").exit_code == 0
    kept = sqlite3.connect(tmp_path / "raffle.db").execute(
        "SELECT status, reason, changed_by FROM account_status_change ORDER BY id"
    )
    assert kept.fetchall() == [("locked", "spam", None), ("active", "", None)]
    assert _user(cli, "lock", "nobody").exit_code == 2
    assert "unknown_user" in _user(cli, "unlock", "nobody").stderr

    changed = _user(cli, "password", "alice", "--stdin", stdin="a-new-password\n")
    assert changed.exit_code == 0, changed.output
    prompted = _user(cli, "password", "zoe", stdin="zoe-new-password\nzoe-new-password\n")
    assert prompted.exit_code == 0, prompted.output
    short = _user(cli, "password", "zoe", "--stdin", stdin="short\n")
    assert short.exit_code == 2
    assert "at least 8 characters" in short.stderr
    db = sqlite3.connect(tmp_path / "raffle.db")
    try:
        hashes = dict(db.execute("select user_id, password_hash from user_account"))
    finally:
        db.close()
    assert PasswordHasher().verify(hashes["alice"], "a-new-password")
    assert PasswordHasher().verify(hashes["zoe"], "zoe-new-password")
