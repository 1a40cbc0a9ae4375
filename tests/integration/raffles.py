"""A wired raffle on each backend for end-to-end tests of the draw on real servers."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from raffle.adapters.sql.migrate import upgrade
from raffle.bootstrap import Raffle, bootstrap
from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind
from raffle.domain.campaign import Campaign
from raffle.domain.quota import QuotaPack
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize
from raffle.service.campaigns import load_campaign
from raffle.settings import Settings

ACTIVITY, STRATEGY, PRIZE, THANKS, WELCOME = 1, 10, 2, 1, 21


class SettableClock:
    def __init__(self, now: datetime | None = None) -> None:
        self.current = now or datetime.now(UTC)

    def now(self) -> datetime:
        return self.current


def campaign(
    *,
    rate: str = "0.5",
    stock: int = 100,
    pack: QuotaPack = QuotaPack(WELCOME, 20, 20, 20),  # noqa: B008 - frozen, shared safely
    exhaustion: Exhaustion = Exhaustion.FALLBACK,
    now: datetime | None = None,
    warning: int | None = None,  # the prize's warning_surplus
) -> Campaign:
    now = now or datetime.now(UTC)
    strategy = Strategy(
        STRATEGY,
        (StrategyPrize(PRIZE, Decimal(rate), stock=stock, warning_surplus=warning),),
        Fallback(THANKS),
        (),
        exhaustion,
    )
    activity = Activity(
        ACTIVITY, "load", STRATEGY, now - timedelta(days=40), now + timedelta(days=40),
        "Asia/Shanghai", state=ActivityState.RUNNING, welcome_pack=WELCOME,
    )  # fmt: skip
    awards = (Award(THANKS, AwardKind.THANKS, "thanks"), Award(PRIZE, AwardKind.PHYSICAL, "lamp"))
    return Campaign(awards, (strategy,), (pack,), (activity,))


async def wired(settings: Settings, loaded: Campaign, clock: SettableClock | None = None) -> Raffle:
    for url in settings.database_urls:
        await upgrade(url, shard_tables=settings.shard_tables)
    raffle = bootstrap(settings, clock=clock)
    await load_campaign(loaded, raffle.uow())
    await raffle.start()
    return raffle


class Build(Protocol):
    """The `build` fixture: a raffle wired on the test's backend, `options` further settings."""

    def __call__(
        self, loaded: Campaign, clock: SettableClock | None = None, /, **options: Any
    ) -> Awaitable[Raffle]: ...
