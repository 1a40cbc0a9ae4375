"""Settings: read once from `RAFFLE_*` environment variables and checked at start-up."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import unquote, urlsplit

import phonenumbers
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from raffle.adapters.alipay.signing import private_key, public_key

# The async driver each kind of database URL is served by; plain URLs are accepted too.
_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "mysql": "mysql+asyncmy",
    "mariadb": "mysql+asyncmy",
}
_SUPPORTED = set(_DRIVERS.values())
# Passwords the servers' images, installers and tutorials come with: in production a URL
# carrying one (or its own user name, as guest:guest does) is as open as one with none.
_DEFAULT_PASSWORDS = frozenset({
    "guest", "postgres", "mysql", "root", "redis", "raffle", "admin", "password", "secret",
    "changeme", "changethis",
})  # fmt: skip


class Settings(BaseSettings):
    """Everything configurable. Nothing else in raffle reads the environment."""

    model_config = SettingsConfigDict(env_prefix="RAFFLE_", extra="forbid", frozen=True)

    # `production` refuses to start on a default that must not reach production: the embedded
    # SQLite file, or a server URL with no password or a well-known default one.
    env: Literal["development", "production"] = "development"

    # The configuration database; with no shard URLs it also holds every user's rows.
    database_url: str = "sqlite+aiosqlite:///raffle.db"  # embedded default: a local file
    # More databases for the user-dimension tables, comma separated; with them, user rows
    # are spread over database_url and these, `shard_tables` tables each.
    shard_urls: str = ""
    shard_tables: int = 1
    # Redis for prize stock, sessions and rate limits; without it they live in the database
    # and in this process (the single-process embedded default).
    redis_url: str | None = None
    # redis_url names a node of a Redis Cluster (any master; the others are found from it)
    # rather than one Redis: every key of a script then shares a hash tag, hence a slot.
    redis_cluster: bool = False
    # Connections each process keeps open per pool (one per database, one more on the
    # configuration database for stock claims with Redis), and how many more it may open at
    # a peak. Those above pool_size are closed as soon as they are returned, so a load that
    # keeps needing them starts and ends server connections all the time: on PostgreSQL a
    # backend process each, whose CPU no worker shows (bench/README.md). Size pool_size to
    # the requests a process has in flight, with processes x pools x (pool_size +
    # pool_overflow) under the server's max_connections. On PostgreSQL each process also
    # keeps, outside the pools, a connection per database for its draws in batches and
    # one for stock claims (adapters/sql/postgres/lane.py): 1 + databases more.
    pool_size: int = 10
    pool_overflow: int = 20

    host: str = "127.0.0.1"
    port: int = 8000
    session_ttl_seconds: int = 7 * 24 * 3600  # sliding: each use extends it
    draws_per_second: int = 10  # per user
    registrations_per_hour: int = 20  # per client address
    # The draws that arrive while one batch of a database is in flight go together in its
    # next, at most this many in one transaction (group commit); 1: batches of one.
    draw_batch_size: int = 64
    catalogue_ttl_seconds: float = 1.0  # how soon a change by another process is seen
    load_demo: bool = True  # `raffle serve` on an empty database loads examples/ and a demo
    # The country (ISO 3166 alpha-2) of phone numbers written without their country code.
    phone_region: str = "CN"
    # How long a process keeps a profile it read: changes are heard sooner (through Redis,
    # or without it the profiles' version row, polled), so only a change whose news was
    # missed waits this long.
    profile_ttl_seconds: float = 60.0
    # With Redis, how long a process answers a session from its own copy (no Redis command):
    # a logout or lock is heard at once through Redis, so only one whose news was lost waits
    # this long, and the session's expiry slides once this often. 0: Redis every request.
    session_keep_seconds: float = 30.0

    # RabbitMQ (amqp://…) for delivering wins; without it the outbox is delivered in this
    # process (the single-process embedded default), with it `raffle worker` delivers.
    broker_url: str | None = None
    delivery_attempts: int = 5  # failed deliveries of a message before its dead-letter queue
    publish_timeout_seconds: float = 10.0  # a publish not confirmed by then is tried again
    # The compensation job publishes again what is still unpublished this long after its
    # row was last touched; above the publish timeout, so it never races a live relay.
    republish_after_seconds: float = 60.0
    # Queued draws (docs/queued-draws.md): the tickets an activity holds waiting at most (more
    # are refused `queue_full`, Retry-After queue_retry_seconds), and read per batch.
    queue_bound: int = Field(default=100_000, ge=1)
    queue_retry_seconds: int = Field(default=5, ge=1)
    queue_batch: int = Field(default=200, ge=1)
    # Settled tickets (drawn or refused) are deleted this many days after their acceptance.
    ticket_retention_days: float = Field(default=7.0, gt=0)
    # Operators' notices (stock warnings, stock zero: docs/stock-warnings.md) are POSTed to
    # this webhook, signed with the secret (Standard Webhooks, `whsec_` and base64); without
    # a URL they are logged. Both from the environment only, never from a file we ship.
    notice_webhook_url: str | None = None
    notice_webhook_secret: SecretStr | None = None

    # Logs (entrypoints/logs.py): a line per request and per job run, on stderr; `auto` is
    # for people on a terminal (stderr a TTY), JSON for a collector otherwise.
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["auto", "json", "console"] = "auto"
    # `raffle worker` serves its metrics (deliveries, relay, jobs) on this port, on `host`,
    # when set; API processes serve theirs at /metrics.
    worker_metrics_port: int | None = None

    # Alipay face-to-face payment (docs/payments.md): with an app id, payments go to the
    # open API at alipay_gateway_url (Alipay's, its sandbox's, or the simulator's).
    alipay_app_id: str | None = None
    alipay_seller_id: str | None = None  # the partner id (2088…) notifications must name
    alipay_gateway_url: str = "https://openapi.alipay.com/gateway.do"
    alipay_notify_url: str | None = None  # where Alipay reaches this service's notify route
    # The app's private key and Alipay's public key: as text (PEM, or the bare base64 that
    # Alipay's key tool and console show), or a file holding it; never in the repository.
    alipay_app_private_key: SecretStr | None = None
    alipay_app_private_key_file: Path | None = None
    alipay_public_key: str | None = None
    alipay_public_key_file: Path | None = None
    alipay_timeout_seconds: float = 10.0  # per call; a call past it may be retried

    # Flash sales (docs/flash-sales.md). Challenges and purchase paths are signed with
    # flash_secret: every process of a deployment needs the same one (without it, each
    # process makes its own, which is enough for the embedded single process).
    flash_secret: SecretStr | None = None
    flash_difficulty: int = 16  # proof-of-work bits: about 65,000 SHA-256 per path
    flash_challenge_seconds: int = 120
    flash_path_seconds: int = 60
    flash_paths_per_minute: int = 10  # per user
    flash_purchases_per_second: int = 5  # per user
    flash_address_per_second: int = 200  # per client address, paths and purchases
    # Purchases a process has published and not seen confirmed, and the broker queue's own
    # bound: past either the unit goes back and the player is told to try again (503).
    flash_queue_bound: int = 2_000
    flash_payment_minutes: int = 15  # an order priced in cents is paid within it
    # After Redis lost a sale and it was loaded again from the orders, a purchase with no
    # order yet polls as queued this long: one queued before the loss may still arrive.
    flash_settle_seconds: int = 60
    # A unit taken in the fast stock with no order nor refusal this long is given back: longer
    # than a purchase waits in a queue whose consumers are down, so none told "queued" loses.
    flash_stray_seconds: int = 300

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower_case(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("phone_region")
    @classmethod
    def _known_region(cls, region: str) -> str:
        if region.upper() not in phonenumbers.SUPPORTED_REGIONS:
            raise ValueError("must be a country code such as CN or US")
        return region.upper()

    @field_validator("database_url")
    @classmethod
    def _known_database(cls, url: str) -> str:
        return _async_url(url)

    @field_validator("shard_urls")
    @classmethod
    def _known_shards(cls, urls: str) -> str:
        return ",".join(_async_url(u.strip()) for u in urls.split(",") if u.strip())

    @field_validator(
        "shard_tables",
        "port",
        "draws_per_second",
        "session_ttl_seconds",
        "registrations_per_hour",
        "pool_size",
        "draw_batch_size",
    )
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("alipay_timeout_seconds")
    @classmethod
    def _some_time(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("must be more than 0")
        return value

    @field_validator("profile_ttl_seconds", "session_keep_seconds")
    @classmethod
    def _no_negative_time(cls, value: float) -> float:
        if value < 0:
            raise ValueError("must not be negative (0: read every time)")
        return value

    @field_validator("pool_overflow")
    @classmethod
    def _not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must not be negative")
        return value

    @field_validator("delivery_attempts")
    @classmethod
    def _attempts(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    @model_validator(mode="after")
    def _republish_after_publish(self) -> Self:
        if self.republish_after_seconds <= self.publish_timeout_seconds:
            raise ValueError(
                "RAFFLE_REPUBLISH_AFTER_SECONDS must exceed RAFFLE_PUBLISH_TIMEOUT_SECONDS"
            )
        return self

    @field_validator("notice_webhook_url")
    @classmethod
    def _web_address(cls, url: str | None) -> str | None:
        if url is not None and urlsplit(url).scheme not in ("http", "https"):
            raise ValueError("must be an http:// or https:// address")
        return url

    @field_validator("notice_webhook_secret")
    @classmethod
    def _webhook_secret(cls, secret: SecretStr | None) -> SecretStr | None:
        if secret is not None and not _strong_secret(secret.get_secret_value()):
            raise ValueError("must be whsec_ and at least 24 bytes in base64")
        return secret

    @model_validator(mode="after")
    def _signed_notices(self) -> Self:
        if self.notice_webhook_url and self.notice_webhook_secret is None:
            raise ValueError("RAFFLE_NOTICE_WEBHOOK_URL needs RAFFLE_NOTICE_WEBHOOK_SECRET")
        return self

    @model_validator(mode="after")
    def _alipay_complete(self) -> Self:
        if self.alipay_app_id is None:
            return self
        if not self.alipay_seller_id:
            raise ValueError("RAFFLE_ALIPAY_APP_ID needs RAFFLE_ALIPAY_SELLER_ID (2088…)")
        if not self.alipay_gateway_url.startswith(("https://", "http://")):
            raise ValueError("RAFFLE_ALIPAY_GATEWAY_URL must be an http(s) URL")
        private, public = self.alipay_keys
        checks = (("APP_PRIVATE_KEY", private_key, private), ("PUBLIC_KEY", public_key, public))
        for name, load, text in checks:
            try:
                load(text)
            except ValueError:
                raise ValueError(
                    f"RAFFLE_ALIPAY_{name} is not an RSA key (PEM or base64)"
                ) from None
        return self

    @property
    def alipay_keys(self) -> tuple[str, str]:
        """The app's private key and Alipay's public key, as text: from the setting or its
        file (ValueError: neither, or both)."""
        secret = self.alipay_app_private_key
        private = _key_text(
            "RAFFLE_ALIPAY_APP_PRIVATE_KEY",
            None if secret is None else secret.get_secret_value(),
            self.alipay_app_private_key_file,
        )
        public = _key_text(
            "RAFFLE_ALIPAY_PUBLIC_KEY", self.alipay_public_key, self.alipay_public_key_file
        )
        return private, public

    @model_validator(mode="after")
    def _fit_for_production(self) -> Self:
        if self.env != "production":
            return self
        if self.database_url.startswith("sqlite"):
            raise ValueError(
                "RAFFLE_ENV=production needs RAFFLE_DATABASE_URL set to PostgreSQL or MariaDB, "
                "not the embedded SQLite file"
            )
        if self.alipay_app_id is not None and not self.alipay_gateway_url.startswith("https://"):
            raise ValueError("RAFFLE_ENV=production needs RAFFLE_ALIPAY_GATEWAY_URL on https")
        servers = {
            "RAFFLE_DATABASE_URL": [self.database_url],
            "RAFFLE_SHARD_URLS": self.shard_urls.split(","),
            "RAFFLE_REDIS_URL": [self.redis_url or ""],
            "RAFFLE_BROKER_URL": [self.broker_url or ""],
        }
        for variable, urls in servers.items():
            if any(url and not _has_own_password(url) for url in urls):
                raise ValueError(
                    f"RAFFLE_ENV=production refuses {variable} without a password of its own "
                    "(none, or a well-known default): put one in the URL"
                )
        return self

    @property
    def database_urls(self) -> list[str]:
        """Every database that holds user rows: the configuration database first."""
        return [self.database_url, *(u for u in self.shard_urls.split(",") if u)]


# What a value that does not parse should look like, by pydantic's error type.
_EXPECTED = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false",
    "string_type": "text",
}


def problems(error: ValidationError) -> list[str]:
    """Each problem of settings that did not validate, naming its environment variable and
    the form expected (with the default as an example). Never the value: it may be a URL
    with a password."""
    return [_problem(e) for e in error.errors(include_url=False, include_input=False)]


def _problem(error: Any) -> str:
    if not error["loc"]:  # a check across settings: its message names them
        return str(error["msg"]).removeprefix("Value error, ")
    name = str(error["loc"][0])
    variable = f"{Settings.model_config['env_prefix']}{name.upper()}"
    if (expected := _EXPECTED.get(error["type"])) is None:
        return f"{variable}: {str(error['msg']).removeprefix('Value error, ')}"
    field = Settings.model_fields.get(name)
    default = None if field is None else field.default
    example = "" if default is None else f" (as in {variable}={_shown(default)})"
    return f"{variable} must be {expected}{example}"


def _shown(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _key_text(variable: str, text: str | None, path: Path | None) -> str:
    if (text is None) == (path is None):
        raise ValueError(f"set one of {variable} and {variable}_FILE")
    if path is None:
        return str(text)
    try:
        return path.read_text()
    except OSError as error:
        raise ValueError(f"{variable}_FILE cannot be read: {error.strerror}") from None


def _async_url(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError("a database URL must look like scheme://…")
    scheme = _DRIVERS.get(scheme, scheme)
    if scheme not in _SUPPORTED:
        raise ValueError(
            f"unsupported database {scheme!r}; use sqlite, postgresql or mysql/mariadb"
        )
    return f"{scheme}://{rest}"


def _strong_secret(secret: str) -> bool:
    """A Standard Webhooks secret: `whsec_` and base64 of at least 24 random bytes."""
    encoded = secret.removeprefix("whsec_")
    try:
        return secret.startswith("whsec_") and len(base64.b64decode(encoded, validate=True)) >= 24
    except ValueError:
        return False


def _has_own_password(url: str) -> bool:
    parts = urlsplit(url)
    password = unquote(parts.password or "").lower()
    user = unquote(parts.username or "").lower()
    return bool(password) and password != user and password not in _DEFAULT_PASSWORDS
