"""Publishing a campaign file's awards and strategies, and reading strategies back to draw."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from raffle.domain.activity import FROZEN
from raffle.domain.campaign import Campaign, tree_problem
from raffle.domain.content import Content, IllegalContentState, InvalidContent
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.policies import Participation
from raffle.domain.route_tree_checks import leaf_problems
from raffle.domain.rules import frozen_terms
from raffle.service.audience import TagBoard
from raffle.service.audit import record
from raffle.service.ports import Clock, UnitOfWork
from raffle.service.route_trees import conflict, next_version
from raffle.service.tags import definition_problems, load_definitions

CAMPAIGN = "campaign"  # who saved what a campaign load stored


class InvalidCampaign(RaffleError):
    code = "invalid_campaign"

    def __init__(self, problems: list[InvalidConfig]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


class UnknownStrategy(RaffleError):
    code = "unknown_strategy"


class FrozenOdds(RaffleError):
    """Odds and stock of a running (or closed) activity are published and may not change."""

    code = "odds_frozen"


@dataclass(frozen=True, slots=True)
class Loaded:
    awards: int
    strategies: int
    activities: int = 0
    skus: int = 0
    rebates: int = 0
    codes: int = 0  # codes new to their pools
    trees: int = 0
    tags: int = 0
    content: int = 0


async def load_campaign(
    campaign: Campaign,
    uow: UnitOfWork,
    tags: TagBoard | None = None,
    *,
    clock: Clock | None = None,
    by: str | None = None,
) -> Loaded:
    """Store the whole campaign in one transaction, or nothing if any part is invalid or
    would change the odds of a running activity. Reloading an unchanged file is harmless.
    Decision trees are saved as a new version of their name (at `clock`'s now) if changed;
    its tags (checked with the rest first) are saved through `tags` once the rest is. The
    load is appended to the audit log (`by`: the operator, None from the command line)."""
    if problems := campaign.problems():
        raise InvalidCampaign(problems)
    if campaign.tags:
        if tags is None:
            raise InvalidCampaign([InvalidConfig("tags cannot be loaded here", ("tags",))])
        if problems := await definition_problems(campaign.tags, tags):
            raise InvalidCampaign(problems)
    async with uow:
        # Loads take turns: two checked at once could each fit a coupon pool alone and
        # over-commit it together.
        await uow.campaign_loads.take_turn()
        await _refuse_frozen_changes(campaign, uow)
        await _store_images(campaign, uow, clock)
        for award in campaign.awards:
            await uow.awards.save(award)
        for strategy in campaign.strategies:
            await uow.strategies.save(strategy)
        for pack in campaign.packs:
            await uow.packs.save(pack)
        for activity in campaign.activities:
            await uow.activities.save(activity)
        for sku in campaign.skus:
            await uow.skus.save(sku)
        for rule in campaign.rebates:
            await uow.rebate_rules.save(rule)
        given = {p.activity_id: p for p in campaign.participations}
        for activity in campaign.activities:
            await uow.participation.save(given.get(activity.id) or Participation(activity.id))
        codes = await _fill_pools(campaign, uow)
        await _save_trees(campaign, uow, clock)
        await _save_content(campaign, uow, clock)
        await _save_flash_sales(campaign, uow)
        await _audit(campaign, uow, clock, by)
        await uow.commit()
    if campaign.tags and tags is not None:
        await load_definitions(campaign.tags, tags)
    return Loaded(
        len(campaign.awards),
        len(campaign.strategies),
        len(campaign.activities),
        len(campaign.skus),
        rebates=len(campaign.rebates),
        codes=codes,
        trees=len(campaign.trees),
        tags=len(campaign.tags),
        content=len(campaign.content),
    )


async def _store_images(campaign: Campaign, uow: UnitOfWork, clock: Clock | None) -> None:
    """Store the images that come with the campaign; refuse one whose prizes show an
    uploaded image that neither comes with it nor is stored."""
    wanted = campaign.image_references()
    known = await uow.prize_images.known(wanted)
    missing = [
        InvalidConfig(f"no uploaded image {image_id!r}: upload it, or pack its file", path)
        for image_id, paths in wanted.items()
        if image_id not in known
        for path in paths
    ]
    if missing:
        raise InvalidCampaign(missing)
    if not campaign.images:
        return
    now = _now(clock, "prize images")
    for image in campaign.images:
        await uow.prize_images.add(image, now)


async def _fill_pools(campaign: Campaign, uow: UnitOfWork) -> int:
    """Store the file's codes, then refuse coupon prizes the pools (stored codes and the
    file's) cannot cover, counting the stored strategies that draw from them too (read after
    the file's were saved: the configuration as it would be); how many codes were new."""
    added = 0
    for pool in campaign.code_pools:
        added += await uow.code_pools.add(pool.name, pool.codes)
    if campaign.coupon_pools():
        sizes = {s.name: s.total for s in await uow.code_pools.stats()}
        stored = [s for i in await uow.strategies.ids() if (s := await uow.strategies.get(i))]
        if problems := campaign.coupon_shortfalls(sizes, stored, await uow.awards.all()):
            raise InvalidCampaign(problems)
    return added


async def _save_flash_sales(campaign: Campaign, uow: UnitOfWork) -> None:
    """New sales stored; a stored one is kept as it is (a sale is never edited: its units
    may be selling)."""
    for sale in campaign.flash_sales:
        await uow.flash_sales.add(sale)


async def _save_content(campaign: Campaign, uow: UnitOfWork, clock: Clock | None) -> None:
    """New content in the state the file gives; stored content takes the file's text and
    keeps its state (on sale, then, the file's price must not be 0)."""
    if not campaign.content:
        return
    now = _now(clock, "content")
    stored = await uow.content.many([c.id for c in campaign.content])
    for i, c in enumerate(campaign.content):
        if (was := stored.get(c.id)) is None:
            await uow.content.add(Content(c.id, c.text, c.state, now, now))
            continue
        if was.text == c.text:
            continue  # reloading an unchanged file changes nothing
        try:
            edited = was.edited(c.text, now)
        except InvalidContent as error:
            field, message = error.problems[0]
            raise InvalidCampaign([InvalidConfig(message, ("content", i, field))]) from None
        # An operator may move it meanwhile (moves do not wait for loads): the load fails.
        if not await uow.content.replace(edited, was.state):
            raise IllegalContentState(f"content {c.id!r} changed state meanwhile", was.state)


async def _save_trees(campaign: Campaign, uow: UnitOfWork, clock: Clock | None) -> None:
    """Check the trees' leaves against the activities as stored now (the campaign's among
    them), then save each tree that changed."""
    if not campaign.trees:
        return
    now = _now(clock, "decision trees")
    activities = {a.id: a for a in await uow.activities.all()}
    wrong = [
        tree_problem(p, "trees", i)
        for i, tree in enumerate(campaign.trees)
        for p in leaf_problems(tree, activities, now)
    ]
    if wrong:
        raise InvalidCampaign(wrong)
    for tree in campaign.trees:
        stored = await uow.route_trees.get(tree.name)
        if stored is not None and stored.tree == tree:
            continue
        version = await next_version(uow, tree.name)
        if not await uow.route_trees.add(tree.name, version, tree, CAMPAIGN, now):
            raise conflict(tree.name)


async def _audit(campaign: Campaign, uow: UnitOfWork, clock: Clock | None, by: str | None) -> None:
    # Loads from tests and tools may come without a clock; every entrypoint passes one.
    at = clock.now() if clock is not None else datetime.now(UTC)
    ids = [a.id for a in campaign.activities]
    subject = "activities " + ",".join(map(str, ids)) if ids else "campaign"
    details = {
        "activities": ids,
        "strategies": [s.id for s in campaign.strategies],
        "awards": [a.id for a in campaign.awards],
        "skus": len(campaign.skus),
        "rebates": len(campaign.rebates),
        "trees": [t.name for t in campaign.trees],
        "content": len(campaign.content),
    }
    await record(uow.audit, "campaign.load", subject, at, actor=by, details=details)


def _now(clock: Clock | None, what: str) -> datetime:
    """The load's time, for the parts stored with one; only those need a clock."""
    if clock is None:
        raise ValueError(f"loading {what} needs a clock")
    return clock.now()


async def _refuse_frozen_changes(campaign: Campaign, uow: UnitOfWork) -> None:
    for strategy in campaign.strategies:
        frozen = [a for a in await uow.activities.using_strategy(strategy.id) if a.state in FROZEN]
        if not frozen:
            continue
        published = await uow.strategies.get(strategy.id)
        if published is None or frozen_terms(published) != frozen_terms(strategy):
            raise FrozenOdds(
                f"strategy {strategy.id} is published by {frozen[0].state} activity "
                f"{frozen[0].id}: its odds, stock and enabled prizes cannot change, nor the "
                "prizes a guarantee by level names"
            )
    for activity in campaign.activities:
        stored = await uow.activities.get(activity.id)
        if stored and stored.state in FROZEN and stored.strategy_id != activity.strategy_id:
            raise FrozenOdds(f"activity {activity.id} is {stored.state}: its strategy is fixed")
        if stored and stored.state in FROZEN and stored.caps != activity.caps:
            # Caps change outcomes and are published with the odds: frozen with them.
            raise FrozenOdds(f"activity {activity.id} is {stored.state}: its caps are fixed")
        if stored and stored.state in FROZEN and stored.schedule != activity.schedule:
            # Entrants entered on these terms, and the draw is checked against them.
            raise FrozenOdds(f"activity {activity.id} is {stored.state}: its schedule is fixed")
    for p in campaign.participations:
        stored = await uow.activities.get(p.activity_id)
        if (
            stored
            and stored.state in FROZEN
            and (await uow.participation.get(p.activity_id)).caps != p.caps
        ):
            raise FrozenOdds(f"activity {p.activity_id} is {stored.state}: its caps are fixed")


async def engine_for(strategy_id: int, uow: UnitOfWork) -> DrawEngine:
    """A ready draw engine for a stored strategy."""
    async with uow:
        strategy = await uow.strategies.get(strategy_id)
        if strategy is None:
            raise UnknownStrategy(f"strategy {strategy_id} does not exist")
        awards = await uow.awards.all()
    return DrawEngine(strategy, awards)
