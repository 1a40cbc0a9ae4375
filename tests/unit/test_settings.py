"""Settings that do not validate are told by their environment variable and expected form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from raffle.settings import Settings, problems


def _problems(monkeypatch: pytest.MonkeyPatch, **env: str) -> list[str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as error:
        Settings()
    return problems(error.value)


@pytest.mark.parametrize(
    ("variable", "value", "told"),
    [
        ("RAFFLE_DRAWS_PER_SECOND", "abc", " must be a whole number (as in {}=10)"),
        ("RAFFLE_CATALOGUE_TTL_SECONDS", "soon", " must be a number (as in {}=1.0)"),
        ("RAFFLE_LOAD_DEMO", "perhaps", " must be true or false (as in {}=true)"),
        ("RAFFLE_PORT", "0", ": must be at least 1"),
        ("RAFFLE_POOL_OVERFLOW", "-1", ": must not be negative"),
        ("RAFFLE_PHONE_REGION", "XX", ": must be a country code such as CN or US"),
        ("RAFFLE_PROFILE_TTL_SECONDS", "-1", ": must not be negative (0: read every time)"),
    ],
)  # fmt: skip
def test_a_bad_value_names_its_variable_and_the_form_expected(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, told: str
) -> None:
    assert _problems(monkeypatch, **{variable: value}) == [variable + told.format(variable)]


def test_a_bad_database_url_is_told_without_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    [told] = _problems(monkeypatch, RAFFLE_DATABASE_URL="oracle://scott:tiger-secret@db/orcl")
    assert told.startswith("RAFFLE_DATABASE_URL: unsupported database 'oracle'")
    assert "tiger-secret" not in told
    [told] = _problems(monkeypatch, RAFFLE_DATABASE_URL="tiger-secret")
    assert told == "RAFFLE_DATABASE_URL: a database URL must look like scheme://…"


def test_settings_checked_together_name_both(monkeypatch: pytest.MonkeyPatch) -> None:
    told = _problems(monkeypatch, RAFFLE_REPUBLISH_AFTER_SECONDS="5")
    assert told == ["RAFFLE_REPUBLISH_AFTER_SECONDS must exceed RAFFLE_PUBLISH_TIMEOUT_SECONDS"]


def test_every_bad_setting_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    told = _problems(monkeypatch, RAFFLE_PORT="x", RAFFLE_SHARD_TABLES="0")
    assert [t.split()[0].rstrip(":") for t in told] == ["RAFFLE_SHARD_TABLES", "RAFFLE_PORT"]


def test_the_phone_region_is_read_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAFFLE_PHONE_REGION", "us")
    assert Settings().phone_region == "US"
