"""The stored configuration gathered back into one campaign: what the console edits and what
`GET /api/admin/campaigns` exports as a campaign file."""

from __future__ import annotations

from dataclasses import dataclass, replace

from raffle.domain.campaign import Campaign
from raffle.domain.content import DeclaredContent
from raffle.domain.fulfilment import CodePool
from raffle.domain.prize_images import PrizeImage
from raffle.service.audience import TagBoard
from raffle.service.ports import UnitOfWork
from raffle.service.tags import definitions


@dataclass(frozen=True, slots=True)
class Exported:
    campaign: Campaign
    # Codes already handed to winning orders, per pool: left out of the campaign's pools,
    # since importing them elsewhere would let a code that a player holds be handed out again.
    handed: dict[str, int]


async def export_campaign(uow: UnitOfWork, tags: TagBoard | None = None) -> Exported:
    """Every award, strategy, pack, activity, SKU, rebate rule, free code, decision tree and
    piece of content,
    in id (or name) order, read in one transaction so the parts agree; then the tags (by
    name) from `tags`."""
    async with uow:
        awards = await uow.awards.all()
        strategies = [await uow.strategies.get(i) for i in sorted(await uow.strategies.ids())]
        activities = await uow.activities.all()
        participations = [await uow.participation.get(a.id) for a in activities]
        campaign = Campaign(
            awards=tuple(awards[i] for i in sorted(awards)),
            strategies=tuple(s for s in strategies if s is not None),
            packs=tuple(await uow.packs.all()),
            activities=tuple(activities),
            skus=tuple(await uow.skus.all()),
            rebates=tuple(await uow.rebate_rules.all()),
            code_pools=tuple(
                CodePool(name, tuple(codes))
                for name, codes in sorted((await uow.code_pools.free_codes()).items())
            ),
            participations=tuple(p for p in participations if not p.empty),
            trees=tuple(t.tree for t in await uow.route_trees.all()),
            content=tuple(await _content(uow)),
            flash_sales=tuple(await uow.flash_sales.all()),
        )
        campaign = replace(campaign, images=await _images(campaign, uow))
        handed = {s.name: s.handed for s in await uow.code_pools.stats() if s.handed}
    if tags is not None:
        campaign = replace(campaign, tags=tuple(await definitions(tags)))
    return Exported(campaign, handed)


async def _images(campaign: Campaign, uow: UnitOfWork) -> tuple[PrizeImage, ...]:
    """The uploaded images its prizes show, each once, by id."""
    wanted = sorted(campaign.image_references())
    found = [await uow.prize_images.get(i) for i in wanted]
    return tuple(image for image in found if image is not None)


async def _content(uow: UnitOfWork) -> list[DeclaredContent]:
    found: list[DeclaredContent] = []
    after = None
    while page := await uow.content.listing(None, after, 500):
        found += [DeclaredContent(c.id, c.text, c.state) for c in page]
        after = page[-1].id
    return found
