"""Publishing a campaign file's awards and strategies, and reading strategies back to draw."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.campaign import Campaign
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.service.ports import UnitOfWork


class InvalidCampaign(RaffleError):
    code = "invalid_campaign"

    def __init__(self, problems: list[InvalidConfig]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


class UnknownStrategy(RaffleError):
    code = "unknown_strategy"


@dataclass(frozen=True, slots=True)
class Loaded:
    awards: int
    strategies: int


async def load_campaign(campaign: Campaign, uow: UnitOfWork) -> Loaded:
    """Store every award and strategy in one transaction, or nothing if any is invalid."""
    if problems := campaign.problems():
        raise InvalidCampaign(problems)
    async with uow:
        for award in campaign.awards:
            await uow.awards.save(award)
        for strategy in campaign.strategies:
            await uow.strategies.save(strategy)
        await uow.commit()
    return Loaded(awards=len(campaign.awards), strategies=len(campaign.strategies))


async def engine_for(strategy_id: int, uow: UnitOfWork) -> DrawEngine:
    """A ready draw engine for a stored strategy."""
    async with uow:
        strategy = await uow.strategies.get(strategy_id)
        if strategy is None:
            raise UnknownStrategy(f"strategy {strategy_id} does not exist")
        awards = await uow.awards.all()
    return DrawEngine(strategy, awards)
