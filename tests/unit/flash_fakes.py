"""Flash sales over fakes: a sale store in memory, the memory stock, the in-process broker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from raffle.adapters.broker.memory import MemoryBroker
from raffle.adapters.flash_stock import MemorySaleStock
from raffle.adapters.rate_limits import MemoryRateLimiter
from raffle.domain.flash_gate import FlashGate
from raffle.domain.flash_sales import LIVE, Currency, OrderState, Purchase, Sale, SaleOrder
from raffle.service.deny_board import DenyBoard
from raffle.service.flash_sales import FlashLimits, FlashSales
from raffle.service.ports.flash_sales import Holding
from tests.unit.fakes import FakeClock, FakeShards
from tests.unit.test_deny import NoNews
from tests.unit.test_draw_checks import DenyStore, NoProfiles

START = datetime(2026, 11, 11, 4, tzinfo=UTC)


def sale(stock: int = 3, currency: Currency = Currency.CENTS, price: int = 990) -> Sale:
    return Sale(
        id=1111,
        name="保温杯",
        price=price,
        currency=currency,
        stock=stock,
        starts_at=START,
        ends_at=START + timedelta(hours=1),
    )


@dataclass
class FakeSaleStore:
    sales: dict[int, Sale] = field(default_factory=dict)
    sold: dict[int, int] = field(default_factory=dict)
    orders: dict[tuple[int, str, int], SaleOrder] = field(default_factory=dict)

    async def add(self, sale: Sale) -> bool:
        if sale.id in self.sales:
            return False
        self.sales[sale.id], self.sold[sale.id] = sale, 0
        return True

    async def get(self, sale_id: int) -> Sale | None:
        return self.sales.get(sale_id)

    async def all(self) -> list[Sale]:
        return list(self.sales.values())

    async def order(self, purchase: Purchase, sale: Sale, expires_at: datetime | None) -> str:
        key = (sale.id, purchase.user_id, purchase.seq)
        if (found := self.orders.get(key)) is not None:
            return "" if found.state is OrderState.REFUSED else found.order_id
        made = SaleOrder.of(purchase, sale, timedelta(0))
        made = replace(made, expires_at=expires_at)
        held = sum(
            o.state in LIVE and o.user_id == purchase.user_id and o.sale_id == sale.id
            for o in self.orders.values()
        )
        if held >= sale.per_user or self.sold[sale.id] >= sale.stock:
            made = replace(made, state=OrderState.REFUSED, expires_at=None)
        else:
            self.sold[sale.id] += 1
        self.orders[key] = made
        return "" if made.state is OrderState.REFUSED else made.order_id

    async def refuse(self, purchase: Purchase, sale: Sale) -> bool:
        key = (sale.id, purchase.user_id, purchase.seq)
        if key in self.orders:
            return False
        made = SaleOrder.of(purchase, sale, timedelta(0))
        self.orders[key] = replace(made, state=OrderState.REFUSED, expires_at=None)
        return True

    async def of_user(self, sale_id: int, user_id: str) -> list[SaleOrder]:
        mine = [o for (s, u, _), o in self.orders.items() if s == sale_id and u == user_id]
        return sorted(mine, key=lambda o: o.seq)

    async def holders(self, sale_id: int) -> tuple[int, dict[str, Holding]]:
        holders: dict[str, Holding] = {}
        for (s, user, seq), o in self.orders.items():
            if s != sale_id:
                continue
            was = holders.get(user, Holding(0, 0))
            live = o.state in (OrderState.AWAITING_PAYMENT, OrderState.DONE)
            holders[user] = Holding(was.held + live, max(was.seq, seq))
        return sum(h.held for h in holders.values()), holders

    async def overdue(self, now: datetime, limit: int) -> Sequence[SaleOrder]:
        return [
            o
            for o in self.orders.values()
            if o.state is OrderState.AWAITING_PAYMENT and o.expires_at and o.expires_at <= now
        ][:limit]

    async def expire(self, order: SaleOrder, now: datetime) -> bool:
        key = (order.sale_id, order.user_id, order.seq)
        if self.orders[key].state is not OrderState.AWAITING_PAYMENT:
            return False
        self.orders[key] = replace(order, state=OrderState.EXPIRED)
        self.sold[order.sale_id] -= 1
        return True

    async def pay(self, order: SaleOrder, now: datetime) -> OrderState | None:
        key = (order.sale_id, order.user_id, order.seq)
        if (found := self.orders.get(key)) is None:
            return None
        if found.state is OrderState.AWAITING_PAYMENT:
            self.orders[key] = found = replace(found, state=OrderState.DONE)
        return found.state

    async def counts(self, sale_id: int) -> dict[str, int]:
        found: dict[str, int] = {}
        for o in self.orders.values():
            found[o.state.value] = found.get(o.state.value, 0) + 1
        return found


async def flash(
    *, queue_bound: int = 100, clock: FakeClock | None = None, denied: tuple[str, ...] = ()
) -> FlashSales:
    clock = clock or FakeClock(START + timedelta(minutes=1))
    deny = DenyBoard(DenyStore(*denied), NoNews(), clock)
    await deny.refresh()
    return FlashSales(
        store=FakeSaleStore(),
        stock=MemorySaleStock(),
        broker=MemoryBroker(attempts=3, timeout=5.0),
        news=NoNews(),
        gate=FlashGate(b"s" * 32, difficulty=4, challenge_seconds=60, path_seconds=30),
        clock=clock,
        limiter=MemoryRateLimiter(clock),
        deny=deny,
        profiles=NoProfiles(),  # type: ignore[arg-type]
        limits=FlashLimits(
            paths_per_minute=100,
            purchases_per_second=100,
            address_per_second=10_000,
            queue_bound=queue_bound,
            payment_window=timedelta(minutes=15),
            settle=timedelta(seconds=60),
        ),
        shards=FakeShards(),  # type: ignore[arg-type]
    )
