"""Flash sale units behind the SaleStock port: one Redis script per step, or process memory."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from redis.exceptions import RedisError

from raffle.adapters.redis_commands import RedisCommands
from raffle.adapters.redis_pipeline import Arg, LuaScript
from raffle.domain.errors import Unavailable
from raffle.domain.flash_sales import Answer
from raffle.service.ports.flash_sales import Holding, Taking

# Per sale: `left` (units never handed out or given back) and a hash of each user's `h:`
# units held and `s:` last sequence number. The duplicate check comes before the unit is
# taken, in the same script: a user at the limit takes nothing. `seq` only grows, so a unit
# bought again after one expired is a new order, never the expired one's. `r:` keeps the
# user's last take's attempt id: the shared round trips send a batch again after a lost
# connection, and a take Redis ran before it broke answers its first answer the second time
# rather than "already bought" for a unit the player would then never be told of.
_TAKE = LuaScript("""
local left = redis.call('GET', KEYS[1])
if not left then return {-2, 0} end
local last = redis.call('HGET', KEYS[2], 'r:' .. ARGV[1])
if last and string.sub(last, 1, #ARGV[3] + 1) == ARGV[3] .. ':' then
  return {0, tonumber(string.sub(last, #ARGV[3] + 2))}
end
local held = tonumber(redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or '0')
if held >= tonumber(ARGV[2]) then return {1, 0} end
if tonumber(left) <= 0 then return {-1, 0} end
redis.call('DECR', KEYS[1])
redis.call('HSET', KEYS[2], 'h:' .. ARGV[1], held + 1)
local seq = redis.call('HINCRBY', KEYS[2], 's:' .. ARGV[1], 1)
redis.call('HSET', KEYS[2], 'r:' .. ARGV[1], ARGV[3] .. ':' .. seq)
return {0, seq}
""")

_GIVE_BACK = LuaScript("""
if not redis.call('GET', KEYS[1]) then return 0 end
local held = tonumber(redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or '0')
if held > 0 then redis.call('HSET', KEYS[2], 'h:' .. ARGV[1], held - 1) end
redis.call('INCR', KEYS[1])
return 1
""")

# Loads unless loaded: a loader that read the orders before another finished loading must
# not write its older picture over counts already in use. `left` is written last, so a
# take never sees a sale half loaded; `at` is when (results read it, service/flash_sales).
_LOAD = LuaScript("""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'at', ARGV[2])
for i = 3, #ARGV, 3 do
  redis.call('HSET', KEYS[2], 'h:' .. ARGV[i], ARGV[i + 1], 's:' .. ARGV[i], ARGV[i + 2])
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
""")

_HOLDING = LuaScript("""
if not redis.call('GET', KEYS[1]) then return {-1, 0, 0} end
local held = redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or '0'
local seq = redis.call('HGET', KEYS[2], 's:' .. ARGV[1]) or '0'
return {tonumber(held), tonumber(seq), redis.call('HGET', KEYS[2], 'at') or '0'}
""")

# A stray's units back only if the user's count is still what the reconciliation saw: a take
# or a give-back meanwhile means the picture is old, and nothing is done.
_GIVE_BACK_STRAY = LuaScript("""
if not redis.call('GET', KEYS[1]) then return 0 end
local held = tonumber(redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or '0')
local seq = tonumber(redis.call('HGET', KEYS[2], 's:' .. ARGV[1]) or '0')
if held ~= tonumber(ARGV[2]) or seq ~= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], 'h:' .. ARGV[1], held - tonumber(ARGV[4]))
redis.call('INCRBY', KEYS[1], ARGV[4])
return 1
""")

# One unit fewer counted as the user's, `left` untouched, on the same condition, once per
# purchase: `d:` marks the seq's drop (a redelivered refusal finds it), until a load.
_DROP_HOLD = LuaScript("""
if not redis.call('GET', KEYS[1]) then return 0 end
local done = 'd:' .. ARGV[1] .. ':' .. ARGV[4]
if redis.call('HEXISTS', KEYS[2], done) == 1 then return 0 end
local held = tonumber(redis.call('HGET', KEYS[2], 'h:' .. ARGV[1]) or '0')
local seq = tonumber(redis.call('HGET', KEYS[2], 's:' .. ARGV[1]) or '0')
if held < 1 or held ~= tonumber(ARGV[2]) or seq ~= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], 'h:' .. ARGV[1], held - 1, done, 1)
return 1
""")

_HOLDERS = LuaScript("""
if not redis.call('GET', KEYS[1]) then return {0} end
return {1, redis.call('HGETALL', KEYS[2])}
""")

NOT_LOADED = -2


class FlashStockUnavailable(Unavailable):
    code = "flash_stock_unavailable"


def _keys(sale_id: int) -> list[str]:
    # One hash tag per sale: its keys share a Redis Cluster slot, as scripts need.
    tag = f"raffle:{{flash:{sale_id}}}"
    return [f"{tag}:left", f"{tag}:holders"]


class RedisSaleStock:
    """Each step one script (EVALSHA, its body when Redis lacks it) on the shared round trips
    every request's commands take: under a rush, takes go to Redis in batches rather than
    each waiting for a connection of its own."""

    def __init__(self, commands: RedisCommands) -> None:
        self._commands = commands

    async def load(
        self, sale_id: int, left: int, holders: Mapping[str, Holding], at: datetime
    ) -> bool:
        args: list[Arg] = [left, at.isoformat()]
        for user_id, holding in holders.items():
            args += [user_id, holding.held, holding.seq]
        try:
            return bool(await self._commands.run(_LOAD, _keys(sale_id), args))
        except RedisError as error:
            raise FlashStockUnavailable(f"flash sale stock: {error!r}") from error

    async def take(self, sale_id: int, user_id: str, per_user: int, attempt: str) -> Taking:
        args: list[Arg] = [user_id, per_user, attempt]
        try:
            code, seq = await self._commands.run(_TAKE, _keys(sale_id), args)
        except RedisError as error:
            raise FlashStockUnavailable(f"flash sale stock: {error!r}") from error
        if code == NOT_LOADED:
            return Taking(Answer.SOLD_OUT, loaded=False)
        return Taking(Answer(code), int(seq))

    async def give_back(self, sale_id: int, user_id: str) -> bool:
        try:
            return bool(await self._commands.run(_GIVE_BACK, _keys(sale_id), [user_id]))
        except RedisError as error:
            raise FlashStockUnavailable(f"flash sale stock: {error!r}") from error

    async def give_back_stray(self, sale_id: int, user_id: str, seen: Holding, units: int) -> bool:
        args: list[Arg] = [user_id, seen.held, seen.seq, units]
        try:
            return bool(await self._commands.run(_GIVE_BACK_STRAY, _keys(sale_id), args))
        except RedisError as error:
            raise FlashStockUnavailable(f"flash sale stock: {error!r}") from error

    async def drop_hold(self, sale_id: int, user_id: str, seq: int, seen: Holding) -> bool:
        args: list[Arg] = [user_id, seen.held, seen.seq, seq]
        try:
            return bool(await self._commands.run(_DROP_HOLD, _keys(sale_id), args))
        except RedisError as error:
            raise FlashStockUnavailable(f"flash sale stock: {error!r}") from error

    async def holders(self, sale_id: int) -> dict[str, Holding] | None:
        found = await self._commands.run(_HOLDERS, _keys(sale_id), [])
        if not found[0]:
            return None
        fields = [f.decode() if isinstance(f, bytes) else str(f) for f in found[1]]
        counts: dict[str, list[int]] = {}
        for name, value in zip(fields[::2], fields[1::2], strict=True):
            if name[:2] in ("h:", "s:"):
                counts.setdefault(name[2:], [0, 0])[name[0] == "s"] = int(value)
        return {user: Holding(held, seq) for user, (held, seq) in counts.items()}

    async def left(self, sale_id: int) -> int | None:
        found = await self._commands.execute("GET", _keys(sale_id)[0])
        return None if found is None else int(found)

    async def holding(self, sale_id: int, user_id: str) -> Holding | None:
        held, seq, at = await self._commands.run(_HOLDING, _keys(sale_id), [user_id])
        if held < 0:
            return None
        loaded = datetime.fromisoformat(at.decode() if isinstance(at, bytes) else str(at))
        return Holding(int(held), int(seq), loaded)

    async def unload(self, sale_id: int) -> None:
        for key in _keys(sale_id):
            await self._commands.execute("DEL", key)


class MemorySaleStock:
    """The same steps in one process's memory (the embedded default). Safe on one event
    loop: no step awaits in the middle."""

    def __init__(self) -> None:
        self._left: dict[int, int] = {}
        self._holders: dict[int, dict[str, Holding]] = {}
        self._loaded: dict[int, datetime] = {}
        self._dropped: dict[int, set[tuple[str, int]]] = {}  # drop_hold's (user, seq)s

    async def load(
        self, sale_id: int, left: int, holders: Mapping[str, Holding], at: datetime
    ) -> bool:
        if sale_id in self._left:
            return False
        self._holders[sale_id], self._dropped[sale_id] = dict(holders), set()
        self._left[sale_id], self._loaded[sale_id] = left, at
        return True

    async def take(self, sale_id: int, user_id: str, per_user: int, attempt: str) -> Taking:
        left = self._left.get(sale_id)
        if left is None:
            return Taking(Answer.SOLD_OUT, loaded=False)
        holders = self._holders[sale_id]
        mine = holders.get(user_id, Holding(0, 0))
        if mine.held >= per_user:
            return Taking(Answer.ALREADY_BOUGHT)
        if left <= 0:
            return Taking(Answer.SOLD_OUT)
        self._left[sale_id] = left - 1
        holders[user_id] = Holding(mine.held + 1, mine.seq + 1)
        return Taking(Answer.QUEUED, mine.seq + 1)

    async def give_back(self, sale_id: int, user_id: str) -> bool:
        if sale_id not in self._left:
            return False
        holders = self._holders[sale_id]
        mine = holders.get(user_id, Holding(0, 0))
        holders[user_id] = Holding(max(mine.held - 1, 0), mine.seq)
        self._left[sale_id] += 1
        return True

    async def give_back_stray(self, sale_id: int, user_id: str, seen: Holding, units: int) -> bool:
        if sale_id not in self._left:
            return False
        mine = self._holders[sale_id].get(user_id, Holding(0, 0))
        if (mine.held, mine.seq) != (seen.held, seen.seq):
            return False
        self._holders[sale_id][user_id] = Holding(mine.held - units, mine.seq)
        self._left[sale_id] += units
        return True

    async def drop_hold(self, sale_id: int, user_id: str, seq: int, seen: Holding) -> bool:
        if sale_id not in self._left or (user_id, seq) in self._dropped[sale_id]:
            return False
        mine = self._holders[sale_id].get(user_id, Holding(0, 0))
        if mine.held < 1 or (mine.held, mine.seq) != (seen.held, seen.seq):
            return False
        self._holders[sale_id][user_id] = Holding(mine.held - 1, mine.seq)
        self._dropped[sale_id].add((user_id, seq))
        return True

    async def holders(self, sale_id: int) -> dict[str, Holding] | None:
        found = self._holders.get(sale_id)
        return None if found is None else dict(found)

    async def left(self, sale_id: int) -> int | None:
        return self._left.get(sale_id)

    async def holding(self, sale_id: int, user_id: str) -> Holding | None:
        if sale_id not in self._left:
            return None
        mine = self._holders[sale_id].get(user_id, Holding(0, 0))
        return Holding(mine.held, mine.seq, self._loaded[sale_id])

    async def unload(self, sale_id: int) -> None:
        self._left.pop(sale_id, None)
        self._holders.pop(sale_id, None)
