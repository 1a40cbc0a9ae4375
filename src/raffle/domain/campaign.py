"""A campaign: what an operator publishes together — awards, strategies, quota packs,
activities and their SKUs — checked as a whole."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raffle.domain.activity import Activity
from raffle.domain.awards import Award, AwardKind
from raffle.domain.content import DeclaredContent
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig, Path
from raffle.domain.flash_sales import Sale
from raffle.domain.fulfilment import CodePool, check_codes, check_pool_name
from raffle.domain.policies import Participation
from raffle.domain.prize_claims import terms_problems
from raffle.domain.prize_images import PrizeImage
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.route_tree_checks import TreeProblem, leaf_problems, structure
from raffle.domain.route_trees import RouteTree
from raffle.domain.strategy import Strategy
from raffle.domain.tags import TagDefinition, definition_problems


@dataclass(frozen=True, slots=True)
class Campaign:
    awards: tuple[Award, ...]
    strategies: tuple[Strategy, ...]
    packs: tuple[QuotaPack, ...] = ()
    activities: tuple[Activity, ...] = ()
    skus: tuple[Sku, ...] = ()
    rebates: tuple[RebateRule, ...] = ()
    code_pools: tuple[CodePool, ...] = ()
    # The activities' policies and caps; an activity of the campaign without one has none.
    participations: tuple[Participation, ...] = ()
    trees: tuple[RouteTree, ...] = ()  # decision trees, by name
    tags: tuple[TagDefinition, ...] = ()
    # The uploaded images its prizes show that come with it (a packed file's, an export's).
    images: tuple[PrizeImage, ...] = ()
    # Paid content; content awards may name content stored or of no catalogue at all (old
    # files), so they are not checked against it.
    content: tuple[DeclaredContent, ...] = ()
    flash_sales: tuple[Sale, ...] = ()  # a stored sale is kept as it is: sales are never edited

    def problems(self) -> list[InvalidConfig]:
        """Everything wrong across the campaign, each located by its path; empty when valid."""
        found = _duplicates("awards", [a.id for a in self.awards])
        found += _duplicates("strategies", [s.id for s in self.strategies])
        found += _duplicates("packs", [p.id for p in self.packs])
        found += _duplicates("activities", [a.id for a in self.activities])
        found += _duplicates("skus", [s.sku for s in self.skus], key="sku")
        found += _duplicates("content", [c.id for c in self.content])
        found += _duplicates("flash_sales", [s.id for s in self.flash_sales])
        catalogue = {a.id: a for a in self.awards}
        for i, strategy in enumerate(self.strategies):
            try:
                DrawEngine(strategy, catalogue)
            except InvalidConfig as error:
                found.append(error.at("strategies", i))
            found += [p.at("strategies", i) for p in terms_problems(strategy.prizes, catalogue)]
        found += self._references()
        found += _duplicates("participations", [p.activity_id for p in self.participations])
        activities = {a.id for a in self.activities}
        for i, p in enumerate(self.participations):
            if p.activity_id not in activities:
                found.append(_missing("activity", p.activity_id, ("participations", i)))
        found += self._rebate_problems()
        found += self._code_problems()
        found += definition_problems(self.tags)
        found += self._tree_problems()
        return found

    def _tree_problems(self) -> list[InvalidConfig]:
        """Each tree's own problems, and its leaves' activities of the campaign that can never
        run; one of another activity is checked against the stored ones as it loads."""
        names = [t.name for t in self.trees]
        found = [
            InvalidConfig(f"tree {name!r} is written twice", ("trees", i, "name"))
            for i, name in enumerate(names)
            if name in names[:i]
        ]
        activities = {a.id: a for a in self.activities}
        for i, tree in enumerate(self.trees):
            wrong = [*structure(tree), *leaf_problems(tree, activities, None, known=False)]
            found += [tree_problem(p, "trees", i) for p in wrong]
        return found

    def image_references(self) -> dict[str, list[Path]]:
        """The uploaded images its prizes show that do not come with it, each with the
        paths of the prizes showing it: they must be stored already."""
        packed = {i.id for i in self.images}
        found: dict[str, list[Path]] = {}
        for i, strategy in enumerate(self.strategies):
            for j, prize in enumerate(strategy.prizes):
                wanted = prize.card.uploaded_image
                if wanted is not None and wanted not in packed:
                    found.setdefault(wanted, []).append(("strategies", i, "prizes", j, "image"))
        return found

    def coupon_pools(self) -> set[str]:
        """The code pools the campaign's coupon awards take codes from."""
        return {a.config for a in self.awards if a.kind is AwardKind.COUPON}

    def coupon_shortfalls(
        self,
        pool_sizes: Mapping[str, int],
        stored: Sequence[Strategy] = (),
        stored_awards: Mapping[int, Award] | None = None,
    ) -> list[InvalidConfig]:
        """Coupon prizes that could be won more often than their pool has codes.

        Each needs a stock, and the stock of every prize drawing from a pool — the campaign's
        own and those of the `stored` strategies it does not replace, whose awards are read in
        `stored_awards` with the campaign's in their place — may not exceed the codes the pool
        holds (`pool_sizes`; handed-out ones count, as each went to a win that took a unit of
        that stock). A coupon cannot be the fallback (unlimited)."""
        coupons = _coupon_pools({**(stored_awards or {}), **{a.id: a for a in self.awards}})
        demanded: defaultdict[str, int] = defaultdict(int)
        sharing: defaultdict[str, set[int]] = defaultdict(set)  # stored strategies per pool
        mine = {s.id for s in self.strategies}
        for other in (s for s in stored if s.id not in mine):
            for prize in other.prizes:
                if (pool := coupons.get(prize.award_id)) is not None and prize.stock:
                    demanded[pool] += prize.stock
                    sharing[pool].add(other.id)
        found, short = [], set()
        for i, strategy in enumerate(self.strategies):
            if strategy.fallback.award_id in coupons:
                found.append(_unlimited_coupon(("strategies", i, "fallback")))
            for j, prize in enumerate(strategy.prizes):
                if (pool := coupons.get(prize.award_id)) is None:
                    continue
                where = ("strategies", i, "prizes", j, "stock")
                if prize.stock is None:
                    found.append(_unlimited_coupon(where))
                    continue
                demanded[pool] += prize.stock
                if demanded[pool] > pool_sizes.get(pool, 0):
                    found.append(_short(pool, demanded[pool], pool_sizes, sharing[pool], where))
                    short.add(pool)
        for k, award in enumerate(self.awards):  # a pool given to stored prizes it cannot cover
            pool = coupons.get(award.id)
            if pool is not None and pool not in short and demanded[pool] > pool_sizes.get(pool, 0):
                at: Path = ("awards", k, "config")
                found.append(_short(pool, demanded[pool], pool_sizes, sharing[pool], at))
                short.add(pool)
        return found

    def _code_problems(self) -> list[InvalidConfig]:
        found = []
        for pool in self.code_pools:
            if problem := check_pool_name(pool.name):
                found.append(InvalidConfig(problem, ("code_pools", pool.name)))
            for j, message in check_codes(list(pool.codes)):
                found.append(InvalidConfig(message, ("code_pools", pool.name, j)))
        return found

    def engines(self, *, perfect: bool = False) -> dict[int, DrawEngine]:
        """An engine per strategy; `perfect`: in the mode where every draw wins."""
        catalogue = {a.id: a for a in self.awards}
        return {s.id: DrawEngine(s, catalogue, perfect=perfect) for s in self.strategies}

    def _references(self) -> list[InvalidConfig]:
        strategies = {s.id for s in self.strategies}
        packs = {p.id for p in self.packs}
        activities = {a.id for a in self.activities}
        found = []
        for i, activity in enumerate(self.activities):
            if activity.strategy_id not in strategies:
                found.append(
                    _missing("strategy", activity.strategy_id, ("activities", i, "strategy"))
                )
            if activity.welcome_pack is not None and activity.welcome_pack not in packs:
                found.append(
                    _missing("pack", activity.welcome_pack, ("activities", i, "welcome_pack"))
                )
        for i, sku in enumerate(self.skus):
            if sku.activity_id not in activities:
                found.append(_missing("activity", sku.activity_id, ("skus", i, "activity")))
            if sku.pack_id not in packs:
                found.append(_missing("pack", sku.pack_id, ("skus", i, "pack")))
        return found

    def _rebate_problems(self) -> list[InvalidConfig]:
        activities = {a.id for a in self.activities}
        skus = {s.sku: s for s in self.skus}
        keys = [(r.activity_id, r.behaviour) for r in self.rebates]
        found = [
            InvalidConfig(f"activity {k[0]} has two rebates for {k[1]!r}", ("rebates", i))
            for i, k in enumerate(keys)
            if k in keys[:i]
        ]
        for i, rule in enumerate(self.rebates):
            if rule.activity_id not in activities:
                found.append(_missing("activity", rule.activity_id, ("rebates", i, "activity")))
            if rule.sku is None:
                continue
            if rule.sku not in skus:
                found.append(_missing("sku", rule.sku, ("rebates", i, "sku")))
            elif skus[rule.sku].activity_id != rule.activity_id:
                found.append(
                    InvalidConfig(
                        f"sku {rule.sku} sells chances of another activity", ("rebates", i, "sku")
                    )
                )
        return found


def tree_problem(problem: TreeProblem, *prefix: str | int) -> InvalidConfig:
    """A tree's problem as a campaign's, its reason said in the message."""
    return InvalidConfig(f"{problem.message} ({problem.reason})", (*prefix, *problem.path))


def _coupon_pools(awards: Mapping[int, Award]) -> dict[int, str]:
    return {a.id: a.config for a in awards.values() if a.kind is AwardKind.COUPON}


def _short(
    pool: str, demanded: int, sizes: Mapping[str, int], stored: set[int], path: Path
) -> InvalidConfig:
    also = f", stored strategies {', '.join(map(str, sorted(stored)))} among them" if stored else ""
    return InvalidConfig(
        f"coupon stock {demanded} (with the other prizes drawing from pool {pool!r}{also}) exceeds "
        f"the pool's {sizes.get(pool, 0)} codes",
        path,
    )


def _unlimited_coupon(path: tuple[str | int, ...]) -> InvalidConfig:
    return InvalidConfig("a coupon prize needs a stock, at most the codes in its pool", path)


def _missing(kind: str, id_: int, path: tuple[str | int, ...]) -> InvalidConfig:
    return InvalidConfig(f"{kind} {id_} is not in the campaign", path)


def _duplicates(section: str, ids: Sequence[int | str], key: str = "id") -> list[InvalidConfig]:
    seen: set[int | str] = set()
    found = []
    for i, id_ in enumerate(ids):
        if id_ in seen:
            found.append(InvalidConfig(f"{key} {id_} is used twice", (section, i, key)))
        seen.add(id_)
    return found
