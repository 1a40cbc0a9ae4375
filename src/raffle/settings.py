"""Settings: read once from `RAFFLE_*` environment variables and checked at start-up."""

from __future__ import annotations

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# The async driver each kind of database URL is served by; plain URLs are accepted too.
_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "mysql": "mysql+asyncmy",
    "mariadb": "mysql+asyncmy",
}
_SUPPORTED = set(_DRIVERS.values())


class Settings(BaseSettings):
    """Everything configurable. Nothing else in raffle reads the environment."""

    model_config = SettingsConfigDict(env_prefix="RAFFLE_", extra="forbid", frozen=True)

    database_url: str = "sqlite+aiosqlite:///raffle.db"  # embedded default: a local file

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, url: str) -> str:
        scheme, sep, rest = url.partition("://")
        if not sep:
            raise ValueError(f"database URL must look like scheme://…, got {url!r}")
        scheme = _DRIVERS.get(scheme, scheme)
        if scheme not in _SUPPORTED:
            raise ValueError(
                f"unsupported database {scheme!r}; use sqlite, postgresql or mysql/mariadb"
            )
        return f"{scheme}://{rest}"
