"""What a flash sale's final order bought, handed to the outbox → delivery pipeline once."""

from __future__ import annotations

from datetime import datetime

from raffle.domain.flash_sales import Sale, sold_win
from raffle.service.delivery import won_message
from raffle.service.ports import Shards


async def deliver_sold(
    shards: Shards, sale: Sale, order_id: str, user_id: str, now: datetime
) -> bool:
    """The award record of a final order and its `award.won` message, in one transaction
    on the user's shard, as a draw writes a win; the delivery consumer does the rest.
    False when the sale sells the item itself, or the record was written before (a
    redelivered purchase, a payment applied again): each order is delivered once."""
    win = sold_win(sale, order_id, user_id, now)
    if win is None:
        return False
    async with shards.for_user(user_id) as uow:
        if await uow.wins.get(win.order_id) is not None:
            return False
        await uow.wins.add(win)
        await uow.outbox.add(won_message(win, now))
        await uow.commit()
    return True
