"""Flash sales: the gate, the purchase answered from the fast stock, the order made from the
queue, the result polled, and unpaid orders expired."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from raffle.domain.draws import OutboxMessage
from raffle.domain.errors import Unavailable
from raffle.domain.flash_gate import FlashGate
from raffle.domain.flash_sales import (
    LIVE,
    PURCHASED,
    Answer,
    Purchase,
    Sale,
    SaleExists,
    SaleOrder,
    UnknownSale,
)
from raffle.domain.points import InsufficientPoints
from raffle.domain.users import RateLimited
from raffle.service import points
from raffle.service.deny_board import DenyBoard
from raffle.service.deny_lists import screen
from raffle.service.flash_delivery import deliver_sold
from raffle.service.ids import message_id
from raffle.service.news import follow, tell
from raffle.service.ports import Broker, Clock, RateLimiter, Shards
from raffle.service.ports.audiences import Profiles
from raffle.service.ports.flash_sales import Holding, SaleStock, SaleStore
from raffle.service.ports.switches import SwitchNews

log = logging.getLogger(__name__)

EXPIRE_BATCH = 500
DROP_TRIES = 3  # a take or another drop moving the buyer's count meanwhile: looked at again


class QueueFull(Unavailable):
    """The purchases waiting to become orders are at their bound: nothing was taken."""

    code = "flash_queue_full"


@dataclass(frozen=True, slots=True)
class FlashLimits:
    paths_per_minute: int  # per user
    purchases_per_second: int  # per user
    address_per_second: int  # per client address, paths and purchases together
    queue_bound: int  # purchases a process has published and not yet seen confirmed
    payment_window: timedelta  # an order priced in cents is paid within it, or expires
    settle: timedelta  # after a load, how long purchases queued before it may still arrive
    stray: timedelta = timedelta(minutes=5)  # a unit taken, not ordered: given back after it


@dataclass(slots=True)
class SoldOutMarks:
    """This process's "sold out" per sale. A mark counts only in the generation it was made
    in, and any unit coming back anywhere starts a new one: a mark made from a take that
    was sent before the news arrived is void on arrival."""

    generation: int = 0
    _marks: dict[int, int] = field(default_factory=dict)

    def sold_out(self, sale_id: int) -> bool:
        return self._marks.get(sale_id) == self.generation

    def mark(self, sale_id: int, generation: int) -> None:
        if generation == self.generation:
            self._marks[sale_id] = generation

    def clear(self) -> None:
        self.generation += 1
        self._marks.clear()


@dataclass(slots=True)
class FlashSales:
    """What the flash sale use cases need, wired once per process."""

    store: SaleStore
    stock: SaleStock
    broker: Broker
    news: SwitchNews  # a unit came back: every process clears its marks
    gate: FlashGate
    clock: Clock
    limiter: RateLimiter
    deny: DenyBoard
    profiles: Profiles
    limits: FlashLimits
    shards: Shards  # points accounts, for sales priced in points
    marks: SoldOutMarks = field(default_factory=SoldOutMarks)
    # Before an unpaid order expires: its payment orders closed; False when one was paid.
    unpaid: Callable[[SaleOrder], Awaitable[bool]] | None = None
    in_flight: int = 0
    _sales: dict[int, Sale] = field(default_factory=dict)  # sales are never edited

    async def sale(self, sale_id: int) -> Sale:
        if (found := self._sales.get(sale_id)) is None:
            found = await self.store.get(sale_id)
            if found is None:
                raise UnknownSale(f"flash sale {sale_id} does not exist")
            self._sales[sale_id] = found
        return found

    async def create(self, sale: Sale) -> Sale:
        if not await self.store.add(sale):
            raise SaleExists(f"flash sale {sale.id} exists")
        await self.load(sale)
        return sale

    async def challenge(self, sale_id: int, user_id: str) -> str:
        await self.sale(sale_id)
        return self.gate.challenge(sale_id, user_id, self.clock.now(), secrets.token_hex(8))

    async def path(
        self, sale_id: int, user_id: str, challenge: str, answer: str, ip: str | None
    ) -> str:
        """A purchase path for this user, once the challenge is answered; the sale open."""
        await screen(self.deny, user_id=user_id, ip=ip, profiles=self.profiles)
        await self._limit(f"flash-path:{user_id}", self.limits.paths_per_minute, 60)
        if ip is not None:
            await self._limit(f"flash-ip:{ip}", self.limits.address_per_second, 1)
        sale = await self.sale(sale_id)
        now = self.clock.now()
        sale.check_open(now)
        self.gate.check_answer(sale_id, user_id, challenge, answer, now)
        return self.gate.path(sale_id, user_id, now)

    async def purchase(self, sale_id: int, user_id: str, path: str, ip: str | None) -> Answer:
        """QUEUED once the unit is taken and its purchase confirmed by the broker; SOLD_OUT
        (from this process's mark when it has one, without a Redis call); ALREADY_BOUGHT."""
        sale = await self.sale(sale_id)
        now = self.clock.now()
        self.gate.check_path(sale_id, user_id, path, now)
        sale.check_open(now)
        if self.marks.sold_out(sale_id):
            return Answer.SOLD_OUT
        await screen(self.deny, user_id=user_id, ip=ip, profiles=self.profiles)
        await self._limit(f"flash-buy:{user_id}", self.limits.purchases_per_second, 1)
        if ip is not None:
            await self._limit(f"flash-ip:{ip}", self.limits.address_per_second, 1)
        generation, attempt = self.marks.generation, secrets.token_hex(8)
        taking = await self.stock.take(sale_id, user_id, sale.per_user, attempt)
        if not taking.loaded:
            await self.load(sale)
            taking = await self.stock.take(sale_id, user_id, sale.per_user, attempt)
        if taking.answer is Answer.SOLD_OUT:
            self.marks.mark(sale_id, generation)
        if taking.answer is not Answer.QUEUED:
            return taking.answer
        await self._queue(Purchase(sale_id, user_id, taking.seq, now), sale)
        return Answer.QUEUED

    async def _queue(self, purchase: Purchase, sale: Sale) -> None:
        """Published with the broker's confirmation before the player hears "queued"; at the
        queue's bound the unit goes back and the player is told to try again: a unit is never
        held for a purchase no queue holds. Not confirmed, see _withdraw."""
        if self.in_flight >= self.limits.queue_bound:
            await self._give_back(purchase.sale_id, purchase.user_id)
            raise QueueFull("too many purchases waiting: try again in a moment")
        self.in_flight += 1
        try:
            await self.broker.publish(_message(purchase))
        except BaseException:
            await self._withdraw(purchase, sale)
            raise
        finally:
            self.in_flight -= 1

    async def _withdraw(self, purchase: Purchase, sale: Sale) -> None:
        """A purchase whose publish was not confirmed may have reached the queue even so: it
        is stored as refused first, so a copy that arrives finds the refusal and makes no
        order, and only then does its unit go back. Found stored already (an order made
        from a copy that did arrive), it stands with its unit: giving that back too would
        count the unit twice. The database out of reach, the unit stays taken until the
        strays' sweep returns it (no order or refusal carries it)."""
        try:
            refused = await self.store.refuse(purchase, sale)
        except Exception:
            log.warning(
                "flash sale %s: %s not withdrawn", sale.id, purchase.order_id, exc_info=True
            )
            return
        if refused:
            await self._give_back(purchase.sale_id, purchase.user_id)

    async def handle(self, message: OutboxMessage) -> None:
        """The consumer: the purchase becomes an order, or a refusal when the database has
        no unit left or the user holds their limit; a redelivery finds what the first
        delivery stored. A refused purchase's unit stays taken in the fast stock: the
        database refuses only a purchase the fast stock let through without counting another
        that holds a unit (queued across a loss of the fast stock, or arriving after its unit
        went back as a stray), and it is that other's order that holds this unit. Its buyer
        no longer holds it (_let_go).

        Priced in points, the points are taken first, on the user's shard, keyed by the
        order id (a redelivery takes nothing more); a balance short of the price refuses the
        purchase and gives its unit back; an order the database then refuses gives the
        points back, keyed likewise. Each step is applied once however often it runs, so a
        crash between them is mended by the redelivery."""
        purchase = _purchase(message)
        sale = await self.sale(purchase.sale_id)
        if sale.paid_in_points and not await self._debit(purchase, sale):
            if await self.store.refuse(purchase, sale):
                await self._give_back(sale.id, purchase.user_id)
            return
        window = self.limits.payment_window
        expires = purchase.at + window if sale.paid_later else None
        order_id = await self.store.order(purchase, sale, expires)
        if not order_id:
            log.warning("flash sale %s: %s refused by the database", sale.id, purchase.order_id)
            if sale.paid_in_points:
                await self._credit(purchase, sale)
            await self._let_go(purchase)
        elif not sale.paid_later:  # final at once: delivered now (a paid one when paid)
            await deliver_sold(self.shards, sale, order_id, purchase.user_id, self.clock.now())

    async def _let_go(self, purchase: Purchase) -> None:
        """A purchase taken since the fast stock was loaded and refused by the database holds
        no unit: its buyer's count drops by one, so they are not told "already bought" for a
        unit they do not have, and may buy one that comes back. The units left stay: the
        unit is the one an order from before the load holds. Nothing drops when the buyer's
        live orders account for every unit counted as theirs (refused for their limit, the
        purchase stands for such an order), nor for a purchase from before the load, which
        this fast stock never counted."""
        sale_id, user_id = purchase.sale_id, purchase.user_id
        for _ in range(DROP_TRIES):
            holding = await self.stock.holding(sale_id, user_id)
            if holding is None or holding.loaded_at is None or purchase.at < holding.loaded_at:
                return
            live = sum(row.state in LIVE for row in await self.store.of_user(sale_id, user_id))
            if holding.held <= live:
                return
            if await self.stock.drop_hold(sale_id, user_id, purchase.seq, holding):
                return

    async def _debit(self, purchase: Purchase, sale: Sale) -> bool:
        """False when the balance does not cover the price (nothing taken)."""
        async with self.shards.for_user(purchase.user_id) as uow:
            try:
                await points.spend(
                    uow, user_id=purchase.user_id, amount=sale.price,
                    out_business_no=purchase.order_id, reason=f"flash sale {sale.id}",
                    now=self.clock.now(),
                )  # fmt: skip
            except InsufficientPoints:
                return False
            await uow.commit()
        return True

    async def _credit(self, purchase: Purchase, sale: Sale) -> None:
        async with self.shards.for_user(purchase.user_id) as uow:
            await points.earn(
                uow, user_id=purchase.user_id, amount=sale.price,
                out_business_no=f"{purchase.order_id}:back", reason=f"flash sale {sale.id}",
                now=self.clock.now(),
            )  # fmt: skip
            await uow.commit()

    async def result(self, sale_id: int, user_id: str) -> Answer | str:
        """Seed 002's poll: the order's id, QUEUED while the purchase waits in the queue, or
        SOLD_OUT (refused, expired, or nothing bought)."""
        await self.sale(sale_id)
        mine = await self.store.of_user(sale_id, user_id)
        holding = await self.stock.holding(sale_id, user_id)
        if holding is not None and holding.seq > (mine[-1].seq if mine else 0):
            return Answer.QUEUED  # a purchase newer than every row is in the queue
        # The newest live order: a purchase refused for the user's limit (their unit went
        # back after an unconfirmed publish that had in fact arrived) leaves it standing.
        if live := [o for o in mine if o.state in LIVE]:
            return live[-1].order_id
        if not mine and self._reloading(holding):
            return Answer.QUEUED
        return Answer.SOLD_OUT

    def _reloading(self, holding: Holding | None) -> bool:
        """Just after the fast stock was rebuilt (or lost, not yet rebuilt) it does not know
        the purchases still queued from before, and each of them is bound to leave an order
        or a refusal: no row yet reads as queued until the queue has had time to drain."""
        if holding is None or holding.loaded_at is None:
            return True
        return self.clock.now() - holding.loaded_at < self.limits.settle

    async def load(self, sale: Sale) -> bool:
        """The fast stock rebuilt from the orders unless it holds the sale: units left are
        the stock less the orders not expired. A purchase still queued when the fast stock
        was lost is not counted there; the database's conditional update refuses it if its
        unit was sold again meanwhile, so nothing is oversold."""
        sold, holders = await self.store.holders(sale.id)
        left = max(sale.stock - sold, 0)
        return await self.stock.load(sale.id, left, holders, self.clock.now())

    async def prepare(self) -> int:
        """Load every sale not ended that the fast stock lacks (at start and after a loss)."""
        now, loaded = self.clock.now(), 0
        for sale in await self.store.all():
            self._sales[sale.id] = sale
            if sale.ends_at > now and await self.stock.left(sale.id) is None:
                loaded += await self.load(sale)
        return loaded

    async def expire(self) -> int:
        """Orders unpaid past their window expire; their units go back to the sale and every
        process's sold-out marks clear."""
        now = self.clock.now()
        expired = 0
        for order in await self.store.overdue(now, EXPIRE_BATCH):
            if self.unpaid is not None and not await self.unpaid(order):
                continue  # paid: its payment's message makes it final
            if await self.store.expire(order, now):
                expired += 1
                await self._give_back(order.sale_id, order.user_id)
        return expired

    async def watch(self) -> None:
        await follow(self.news, self._heard, "flash sales")

    async def _heard(self) -> None:
        self.marks.clear()

    async def _give_back(self, sale_id: int, user_id: str) -> None:
        await self.stock.give_back(sale_id, user_id)
        await self.came_back()

    async def came_back(self) -> None:
        """Units came back to a sale: every process's sold-out marks clear."""
        self.marks.clear()
        await tell(self.news, self.marks.generation)

    async def _limit(self, key: str, limit: int, window: int) -> None:
        if wait := await self.limiter.hit(key, limit, window):
            raise RateLimited(f"at most {limit} in {window} s", wait)


def _message(purchase: Purchase) -> OutboxMessage:
    payload = {
        "sale_id": purchase.sale_id,
        "user_id": purchase.user_id,
        "seq": purchase.seq,
        "at": purchase.at.isoformat(),
    }
    return OutboxMessage(
        message_id=message_id(),
        topic=PURCHASED,
        key=purchase.order_id,
        payload=json.dumps(payload),
        created_at=purchase.at,
    )


def _purchase(message: OutboxMessage) -> Purchase:
    body = json.loads(message.payload)
    at = datetime.fromisoformat(body["at"])
    return Purchase(int(body["sale_id"]), str(body["user_id"]), int(body["seq"]), at)
