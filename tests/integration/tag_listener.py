"""Another process holding the tags: prints `in` or `out` whenever the answer of one tag for
one user changes (and once at first), as its board hears of changes through Redis.

Run: python -m tests.integration.tag_listener DATABASE_URL REDIS_URL CHANNEL TAG USER
"""

from __future__ import annotations

import asyncio
import sys
from datetime import date

from redis.asyncio import Redis

from raffle.adapters.sql.repositories.tags import SqlTagStore
from raffle.adapters.sql.unit_of_work import create_engine
from raffle.adapters.switch_news import RedisSwitchNews
from raffle.adapters.tag_language import RuleEngineLanguage
from raffle.domain.profiles import Profile
from raffle.service.audience import TagBoard

LOOK_SECONDS = 0.01  # how often the answer is asked: in memory, no round trip


async def listen(database_url: str, redis_url: str, channel: str, tag: str, user: str) -> None:
    engine = create_engine(database_url)
    redis = Redis.from_url(redis_url)
    # Looks of its own only every minute: what it hears comes through the channel.
    news = RedisSwitchNews(redis, channel=channel, check_every=60)
    board = TagBoard(SqlTagStore(engine), news, RuleEngineLanguage())
    await board.refresh()
    watching = asyncio.create_task(board.watch())
    last: bool | None = None
    try:
        while True:
            answer = await board.holds(tag, Profile(user), date.today())
            if answer != last:
                print("in" if answer else "out", flush=True)
                last = answer
            await asyncio.sleep(LOOK_SECONDS)
    finally:
        watching.cancel()
        await engine.dispose()
        await redis.aclose()


if __name__ == "__main__":
    asyncio.run(listen(*sys.argv[1:6]))
