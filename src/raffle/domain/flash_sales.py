"""Flash sales (seed 002 秒杀): a few units, a per-user limit, answers polled by players."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import IntEnum, StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from raffle.domain.draws import Win
from raffle.domain.errors import InvalidFields, RaffleError

NAME_MAX = 120
DESCRIPTION_MAX = 2_000
IMAGE_MAX = 500
PRICE_MAX = 100_000_000  # cents or points
STOCK_MAX = 1_000_000
PER_USER_MAX = 100
_IMAGE = re.compile(r"^(https://[^\s\"'<>\\]+|/api/images/[\w-]+)$")


class Currency(StrEnum):
    CENTS = "cents"  # paid through the payment gateway within the payment window
    POINTS = "points"  # debited from the points account when the order is made


class Answer(IntEnum):
    """Seed 002's contract, for the purchase and for its polled result: -1 sold out, 0
    queued; a result past the queue is the order's id instead."""

    SOLD_OUT = -1
    QUEUED = 0
    ALREADY_BOUGHT = 1  # the user holds the sale's per-user limit: nothing was taken


class OrderState(StrEnum):
    AWAITING_PAYMENT = "awaiting_payment"  # priced in cents: paid, or expired, later
    DONE = "done"  # paid, or priced in points (debited with the order), or free
    EXPIRED = "expired"  # unpaid in time: its unit went back to the sale
    # no unit for it: none left, the user at the limit, points short, its publish unconfirmed,
    # or a stray whose unit went back
    REFUSED = "refused"


LIVE = (OrderState.AWAITING_PAYMENT, OrderState.DONE)  # orders holding a unit


class InvalidSale(InvalidFields):
    code = "invalid_sale"


class UnknownSale(RaffleError):
    code = "unknown_sale"


class SaleExists(RaffleError):
    code = "sale_exists"


class SaleNotOpen(RaffleError):
    """Before the start or after the end: nothing is sold."""

    code = "sale_not_open"


class BadPath(RaffleError):
    """Not a purchase path this user was given (made up, or another user's)."""

    code = "bad_path"


class PathExpired(RaffleError):
    code = "path_expired"


class WrongAnswer(RaffleError):
    """The challenge's answer does not solve it, or the challenge was not one we gave."""

    code = "wrong_answer"


class ChallengeExpired(RaffleError):
    code = "challenge_expired"


@dataclass(frozen=True, slots=True)
class Sale:
    """A flash sale as operators write it. `sku` sells draw chances (a SKU's pack), `award_id`
    a prize kind delivered as a won prize is; neither: the item itself."""

    id: int
    name: str
    price: int
    currency: Currency
    stock: int
    starts_at: datetime
    ends_at: datetime
    time_zone: str = "UTC"
    original_price: int | None = None
    description: str = ""
    image: str | None = None
    per_user: int = 1
    sku: int | None = None
    award_id: int | None = None

    def __post_init__(self) -> None:
        if problems := sale_problems(self):
            raise InvalidSale(problems)

    def open_at(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at

    def check_open(self, now: datetime) -> None:
        if not self.open_at(now):
            raise SaleNotOpen(f"sale {self.id} sells from {self.starts_at} to {self.ends_at}")

    @property
    def paid_in_points(self) -> bool:
        return self.currency is Currency.POINTS and self.price > 0

    @property
    def paid_later(self) -> bool:
        return self.currency is Currency.CENTS and self.price > 0


def sale_problems(sale: Sale) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if sale.id <= 0:
        problems.append(("id", "a positive number"))
    if not 0 < len(sale.name.strip()) <= NAME_MAX:
        problems.append(("name", f"1-{NAME_MAX} characters"))
    if len(sale.description) > DESCRIPTION_MAX:
        problems.append(("description", f"at most {DESCRIPTION_MAX} characters"))
    if sale.image is not None and (len(sale.image) > IMAGE_MAX or not _IMAGE.match(sale.image)):
        problems.append(("image", "an https URL or an uploaded image's /api/images/ path"))
    if not 0 <= sale.price <= PRICE_MAX:
        problems.append(("price", f"0-{PRICE_MAX}"))
    if sale.original_price is not None and not sale.price <= sale.original_price <= PRICE_MAX:
        problems.append(("original_price", f"from the price to {PRICE_MAX}"))
    if not 0 < sale.stock <= STOCK_MAX:
        problems.append(("stock", f"1-{STOCK_MAX}"))
    if not 0 < sale.per_user <= PER_USER_MAX:
        problems.append(("per_user", f"1-{PER_USER_MAX}"))
    if sale.starts_at.tzinfo is None or sale.ends_at.tzinfo is None:
        problems.append(("starts_at", "times carry their offset"))
    elif sale.ends_at <= sale.starts_at:
        problems.append(("ends_at", "after starts_at"))
    try:
        ZoneInfo(sale.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        problems.append(("time_zone", "an IANA time zone such as Asia/Shanghai"))
    if sale.sku is not None and sale.award_id is not None:
        problems.append(("award_id", "a sale sells a SKU's chances or a prize, not both"))
    return problems


@dataclass(frozen=True, slots=True)
class Purchase:
    """A unit taken in the fast store for a user, on its way to becoming an order: `seq` is
    which of the user's units in the sale it is (1..per_user), so a redelivery is the same
    order, never a second one."""

    sale_id: int
    user_id: str
    seq: int
    at: datetime

    @property
    def order_id(self) -> str:
        return f"fs{self.sale_id}-{self.user_id}-{self.seq}"


@dataclass(frozen=True, slots=True)
class SaleOrder:
    order_id: str
    sale_id: int
    user_id: str
    seq: int
    price: int
    currency: Currency
    state: OrderState
    created_at: datetime
    expires_at: datetime | None  # the payment window's end, priced in cents

    @staticmethod
    def of(purchase: Purchase, sale: Sale, payment_window: timedelta) -> SaleOrder:
        later = sale.paid_later
        return SaleOrder(
            order_id=purchase.order_id,
            sale_id=sale.id,
            user_id=purchase.user_id,
            seq=purchase.seq,
            price=sale.price,
            currency=sale.currency,
            state=OrderState.AWAITING_PAYMENT if later else OrderState.DONE,
            created_at=purchase.at,
            expires_at=purchase.at + payment_window if later else None,
        )


# The rule of an award record delivering what a sale sold (sold, not drawn): a prize kind
# (its award_id the award), or a SKU's chances (its award_id the SKU, as no award names it).
SOLD_AWARD = "flash_award"
SOLD_CHANCES = "flash_chances"
RECORD_ID_MAX = 32  # award records, deliveries and their effects are keyed by 32 characters


def record_id(order_id: str) -> str:
    """The key of the award record delivering a sale's order: the order id when it fits,
    else a digest of it (long user ids), the same on every redelivery."""
    if len(order_id) <= RECORD_ID_MAX:
        return order_id
    return "fs" + hashlib.sha256(order_id.encode()).hexdigest()[: RECORD_ID_MAX - 2]


def sold_win(sale: Sale, order_id: str, user_id: str, at: datetime) -> Win | None:
    """The award record that delivers what an order of `sale` bought, once the order is
    final; None when the sale sells the item itself (nothing to deliver here)."""
    if sale.sku is not None:
        rule, thing = SOLD_CHANCES, sale.sku
    elif sale.award_id is not None:
        rule, thing = SOLD_AWARD, sale.award_id
    else:
        return None
    # Not drawn in an activity's strategy: 0 for both keeps it out of prize counts.
    return Win(record_id(order_id), user_id, 0, 0, thing, None, rule, at)


PURCHASED = "flash.purchased"  # the topic of purchases taken in the fast stock, to be ordered
PAID = "flash.paid"  # the topic of an order's payment applied on the user's shard; key its id

# A payment order (issue 15's) pays a flash sale's order when its content names the order so:
# content ids are `[\w.-]`, so a colon never names a piece of content.
PAYS_FOR = "flash:"


def paying_for(order_id: str) -> str:
    """What a payment order of the flash sale order `order_id` names as its content."""
    return PAYS_FOR + order_id


def paid_for(content_id: str) -> str | None:
    """The flash sale order a payment order pays for; None when it pays for content."""
    return content_id.removeprefix(PAYS_FOR) if content_id.startswith(PAYS_FOR) else None


class NothingToPay(RaffleError):
    """The user has no order of the sale waiting for payment (none, paid, or expired)."""

    code = "nothing_to_pay"
