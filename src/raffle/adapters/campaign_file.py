"""Campaign files: YAML read into domain objects, every problem reported with its line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError, field_validator

from raffle.domain.activity import Activity, ActivityState
from raffle.domain.awards import Award, AwardKind, parse_points_range
from raffle.domain.campaign import Campaign
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.fulfilment import CodePool
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize

Location = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    where: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.where}: {self.message}" if self.where else self.message


class InvalidCampaignFile(RaffleError):
    code = "invalid_campaign_file"

    def __init__(self, source: str, problems: list[Problem]) -> None:
        super().__init__(f"{source}: " + "; ".join(str(p) for p in problems))
        self.source = source
        self.problems = problems


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _rules(value: object) -> object:
    # Rule values are text in the domain ("3", "60:102,103"); YAML may hand us numbers.
    if isinstance(value, dict):
        return {k: str(v) if isinstance(v, int | Decimal) else v for k, v in value.items()}
    return value


class AwardIn(_Model):
    id: int
    kind: AwardKind
    title: str
    config: str = ""


class PrizeIn(_Model):
    award: int
    rate: Decimal
    stock: int | None = None
    rules: dict[str, str] = {}

    _text_rules = field_validator("rules", mode="before")(_rules)


class FallbackIn(_Model):
    award: int
    points: str | None = None


class StrategyIn(_Model):
    id: int
    description: str = ""
    exhaustion: Exhaustion = Exhaustion.FALLBACK
    fallback: int | FallbackIn
    rules: dict[str, str] = {}
    prizes: list[PrizeIn]

    _text_rules = field_validator("rules", mode="before")(_rules)


class PackIn(_Model):
    id: int
    total: int
    day: int
    month: int


class ActivityIn(_Model):
    id: int
    name: str
    description: str = ""
    strategy: int
    begin_at: AwareDatetime
    end_at: AwareDatetime
    time_zone: str = "Asia/Shanghai"
    state: ActivityState = ActivityState.EDIT  # for a new activity; a stored one keeps its own
    welcome_pack: int | None = None


class SkuIn(_Model):
    sku: int
    activity: int
    pack: int
    stock: int
    price_points: int = 0


class RebateIn(_Model):
    activity: int
    behaviour: str
    sku: int | None = None
    points: int | None = None
    description: str = ""
    enabled: bool = True


class CampaignIn(_Model):
    awards: list[AwardIn] = []
    strategies: list[StrategyIn] = []
    packs: list[PackIn] = []
    activities: list[ActivityIn] = []
    skus: list[SkuIn] = []
    rebates: list[RebateIn] = []
    # pool name -> codes. Quote codes that look like numbers: YAML reads 007 as 7.
    code_pools: dict[str, list[str]] = {}


def read_campaign(path: Path) -> Campaign:
    """Parse and check a campaign file; raise InvalidCampaignFile listing every problem."""
    return parse_campaign(path.read_text(encoding="utf-8"), str(path))


def parse_campaign(text: str, source: str) -> Campaign:
    """Parse and check campaign YAML; `source` names it in messages."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark else 1
        raise InvalidCampaignFile(source, [Problem(line, "", str(error.problem))]) from None
    lines = _lines(root) if root is not None else {}
    data = _Loader.construct(root) if root is not None else {}
    try:
        parsed = CampaignIn.model_validate(data)
    except ValidationError as error:
        problems = [_problem(lines, tuple(e["loc"]), e["msg"]) for e in error.errors()]
        raise InvalidCampaignFile(source, problems) from None
    campaign, invalid = _to_domain(parsed)
    invalid = invalid or campaign.problems()
    if invalid:
        raise InvalidCampaignFile(source, [_problem(lines, p.path, p.message) for p in invalid])
    return campaign


def _to_domain(parsed: CampaignIn) -> tuple[Campaign, list[InvalidConfig]]:
    problems: list[InvalidConfig] = []
    campaign = Campaign(
        awards=_each("awards", parsed.awards, _award, problems),
        strategies=_each("strategies", parsed.strategies, _strategy, problems),
        packs=_each("packs", parsed.packs, _pack, problems),
        activities=_each("activities", parsed.activities, _activity, problems),
        skus=_each("skus", parsed.skus, _sku, problems),
        rebates=_each("rebates", parsed.rebates, _rebate, problems),
        code_pools=tuple(CodePool(name, tuple(codes)) for name, codes in parsed.code_pools.items()),
    )
    return campaign, problems


def _each(
    section: str, items: list[M], build: Callable[[M], T], problems: list[InvalidConfig]
) -> tuple[T, ...]:
    """Build every item, collecting each one's problem under its path instead of stopping."""
    built = []
    for i, item in enumerate(items):
        try:
            built.append(build(item))
        except InvalidConfig as error:
            problems.append(error.at(section, i))
    return tuple(built)


def _award(a: AwardIn) -> Award:
    return Award(a.id, a.kind, a.title, a.config)


def _pack(p: PackIn) -> QuotaPack:
    return QuotaPack(p.id, p.total, p.day, p.month)


def _activity(a: ActivityIn) -> Activity:
    return Activity(
        id=a.id,
        name=a.name,
        strategy_id=a.strategy,
        begin_at=a.begin_at,
        end_at=a.end_at,
        time_zone=a.time_zone,
        description=a.description,
        state=a.state,
        welcome_pack=a.welcome_pack,
    )


def _sku(s: SkuIn) -> Sku:
    return Sku(s.sku, s.activity, s.pack, s.stock, s.price_points)


def _rebate(r: RebateIn) -> RebateRule:
    return RebateRule(r.activity, r.behaviour, r.sku, r.points, r.description, r.enabled)


def _strategy(s: StrategyIn) -> Strategy:
    prizes = []
    for i, p in enumerate(s.prizes):
        try:
            prizes.append(StrategyPrize(p.award, p.rate, p.stock, i, tuple(p.rules.items())))
        except InvalidConfig as error:
            raise error.at("prizes", i) from None
    if isinstance(s.fallback, int):
        fallback = Fallback(s.fallback)
    else:
        points = s.fallback.points
        try:
            fallback = Fallback(s.fallback.award, parse_points_range(points) if points else None)
        except InvalidConfig as error:
            raise error.at("fallback", "points") from None
    return Strategy(
        id=s.id,
        prizes=tuple(prizes),
        fallback=fallback,
        rules=tuple(s.rules.items()),
        exhaustion=s.exhaustion,
        description=s.description,
    )


class _Loader(yaml.SafeLoader):
    """Safe YAML whose decimals stay exact: 0.0099 is Decimal('0.0099'), never a float."""

    @classmethod
    def construct(cls, node: yaml.Node) -> Any:
        loader = cls("")
        try:
            return loader.construct_document(node)
        finally:
            loader.dispose()


def _decimal(loader: yaml.SafeLoader, node: yaml.Node) -> Decimal:
    return Decimal(str(loader.construct_scalar(node)).replace("_", ""))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:float", _decimal)


def _lines(node: yaml.Node, at: Location = ()) -> dict[Location, int]:
    """The 1-based line of every key and item, by its path in the document."""
    found = {at: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found |= _lines(value, (*at, key.value))
            found[(*at, key.value)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found |= _lines(item, (*at, i))
    return found


def _problem(lines: dict[Location, int], path: Location, message: str) -> Problem:
    # The deepest part of the path that is in the file: a missing field points at its parent.
    for depth in range(len(path), -1, -1):
        if path[:depth] in lines:
            return Problem(lines[path[:depth]], ".".join(map(str, path)), message)
    return Problem(1, ".".join(map(str, path)), message)
