"""The prize pool (seed 004 奖品池): a prize's card and switch changed, its images stored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from raffle.domain.activity import FROZEN
from raffle.domain.engine import DrawEngine
from raffle.domain.prize_cards import PrizeCard, UnknownPrize, image_problem, is_image_id
from raffle.domain.prize_images import InvalidImageUrl, PrizeImage, UnknownImage
from raffle.domain.rules import frozen_terms
from raffle.domain.strategy import StrategyPrize
from raffle.service.campaigns import FrozenOdds, UnknownStrategy
from raffle.service.ports import Clock, UnitOfWork


async def add_image(image: PrizeImage, uow: UnitOfWork, clock: Clock) -> PrizeImage:
    """Store an uploaded image (prepared: checked and stripped); the same bytes are stored once."""
    async with uow:
        await uow.prize_images.add(image, clock.now())
        await uow.commit()
    return image


async def image(image_id: str, uow: UnitOfWork) -> PrizeImage:
    async with uow:
        found = await uow.prize_images.get(image_id) if is_image_id(image_id) else None
    if found is None:
        raise UnknownImage(f"no prize image {image_id!r}")
    return found


async def change_prize(
    strategy_id: int,
    award_id: int,
    uow: UnitOfWork,
    *,
    card: Mapping[str, Any],
    enabled: bool | None = None,
) -> StrategyPrize:
    """Set the named fields of a prize's card, and switch it on or off. The card may change
    at any time, unless its level moves the prize into or out of a guarantee by level; the
    switch and such a level change the odds, so they are refused (odds_frozen) while an
    activity that runs or ran publishes the strategy. An image is an uploaded one's id or an
    https URL."""
    if (url := card.get("image")) is not None and (problem := image_problem(url)):
        raise InvalidImageUrl(problem)
    async with uow:
        # Changes take turns with each other and with campaign loads: each rewrites the whole
        # strategy, so two at once would each drop the other's field.
        await uow.campaign_loads.take_turn()
        strategy = await uow.strategies.get(strategy_id)
        if strategy is None:
            raise UnknownStrategy(f"strategy {strategy_id} does not exist")
        prize = strategy.prize(award_id)
        if prize is None:
            raise UnknownPrize(f"strategy {strategy_id} has no prize of award {award_id}")
        changed = replace(
            prize,
            card=replace(prize.card, **card),
            enabled=prize.enabled if enabled is None else enabled,
        )
        prizes = tuple(changed if p.award_id == award_id else p for p in strategy.prizes)
        renewed = replace(strategy, prizes=prizes)
        if frozen_terms(renewed) != frozen_terms(strategy):
            await _refuse_when_frozen(strategy_id, uow)
            DrawEngine(renewed, await uow.awards.all())  # its rules still hold: a level kept
        await _require_image(changed.card, uow)
        await uow.strategies.save(renewed)
        await uow.commit()
    return changed


async def _refuse_when_frozen(strategy_id: int, uow: UnitOfWork) -> None:
    for activity in await uow.activities.using_strategy(strategy_id):
        if activity.state in FROZEN:
            raise FrozenOdds(
                f"strategy {strategy_id} is published by {activity.state} activity "
                f"{activity.id}: its prizes cannot be enabled or disabled, nor moved into or "
                "out of a guarantee by level"
            )


async def _require_image(card: PrizeCard, uow: UnitOfWork) -> None:
    wanted = card.uploaded_image
    if wanted is not None and not await uow.prize_images.known([wanted]):
        raise UnknownImage(f"no prize image {wanted!r}: upload it first")
