"""Production mode (`RAFFLE_ENV=production`) refuses the defaults that must not reach production."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from raffle.settings import Settings

DATABASE = "postgresql://raffle:Xk29-vault@db:5432/raffle"
REDIS = "redis://:Qm81-vault@redis:6379/0"
BROKER = "amqp://raffle:Zt57-vault@rabbitmq:5672/"


def production(**overrides: str) -> Settings:
    urls = {"database_url": DATABASE, "redis_url": REDIS, "broker_url": BROKER}
    return Settings(env="production", **(urls | overrides))  # type: ignore[arg-type]


def refusal(**overrides: str) -> str:
    with pytest.raises(ValidationError) as refused:
        production(**overrides)
    (error,) = refused.value.errors()
    return str(error["msg"])


def test_production_accepts_servers_with_passwords_of_their_own() -> None:
    settings = production(shard_urls="postgresql://raffle:Pw55-shard@db2:5432/raffle")
    assert settings.env == "production"
    assert len(settings.database_urls) == 2


def test_development_is_the_default_and_takes_the_embedded_defaults() -> None:
    settings = Settings(database_url="sqlite:///raffle.db", broker_url=None, redis_url=None)
    assert settings.env == "development"
    assert Settings(database_url="postgresql://postgres@db/raffle").env == "development"


def test_production_refuses_the_embedded_sqlite_database() -> None:
    message = refusal(database_url="sqlite:///raffle.db")
    assert "RAFFLE_DATABASE_URL" in message
    assert "SQLite" in message


@pytest.mark.parametrize(
    ("field", "url", "variable"),
    [
        ("database_url", "postgresql://postgres@db:5432/raffle", "RAFFLE_DATABASE_URL"),
        ("database_url", "postgresql://postgres:postgres@db/raffle", "RAFFLE_DATABASE_URL"),
        ("database_url", "mariadb://root:@db/raffle", "RAFFLE_DATABASE_URL"),
        ("shard_urls", f"{DATABASE},postgresql://raffle:changethis@db2/r", "RAFFLE_SHARD_URLS"),
        ("redis_url", "redis://redis:6379/0", "RAFFLE_REDIS_URL"),
        ("redis_url", "redis://:Secret@redis:6379/0", "RAFFLE_REDIS_URL"),
        ("broker_url", "amqp://guest:guest@rabbitmq:5672/", "RAFFLE_BROKER_URL"),
        ("broker_url", "amqp://raffle:raffle@rabbitmq:5672/", "RAFFLE_BROKER_URL"),
    ],
)
def test_production_refuses_a_server_without_a_password_of_its_own(
    field: str, url: str, variable: str
) -> None:
    message = refusal(**{field: url})
    assert variable in message
    assert "password" in message
    assert url not in message  # names the variable, never echoes its value
