"""Campaign files: YAML read into domain objects, every problem reported with its line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from raffle.adapters.campaign_claims import ClaimIn, claim_terms
from raffle.adapters.campaign_content import ContentFileIn, declared
from raffle.adapters.campaign_flash_sales import FlashSaleFileIn
from raffle.adapters.campaign_flash_sales import declared as declared_sale
from raffle.adapters.campaign_pack import folder_files, unpack
from raffle.adapters.campaign_policies import PersonCapsIn, PolicyIn, participation
from raffle.adapters.campaign_prize_cards import ImageShelf, PackedFiles, PrizeCardIn
from raffle.adapters.tag_file import TagFileIn, tag_definition
from raffle.domain.activity import Activity, ActivityKind, ActivityState
from raffle.domain.awards import Award, AwardKind, parse_points_range
from raffle.domain.campaign import Campaign, tree_problem
from raffle.domain.caps import Caps
from raffle.domain.errors import InvalidConfig, RaffleError
from raffle.domain.fulfilment import CodePool
from raffle.domain.limits import MAX_COUNT, MAX_ID
from raffle.domain.policies import Participation
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.route_tree_checks import InvalidRouteTree
from raffle.domain.route_tree_documents import from_document
from raffle.domain.route_trees import RouteTree
from raffle.domain.scheduled import Schedule, scheduled
from raffle.domain.strategy import Exhaustion, Fallback, Strategy, StrategyPrize
from raffle.domain.winners_feed import FeedDisplay

Location = tuple[str | int, ...]
T = TypeVar("T")
Report = Callable[[Location, str, str | None], None]  # where, what, the stable code if any


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    where: str
    message: str
    reason: str | None = None  # the stable code of a problem with one of its own

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        reason = f" ({self.reason})" if self.reason else ""
        return f"line {self.line}: {where}{self.message}{reason}"


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


# What the stored columns hold: ids are 64-bit keys, counts 32-bit, text has its length.
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Text32 = Annotated[str, Field(max_length=32)]
Text64 = Annotated[str, Field(max_length=64)]
Text128 = Annotated[str, Field(max_length=128)]
Text255 = Annotated[str, Field(max_length=255)]


class AwardIn(_Model):
    id: Id
    kind: AwardKind
    title: Text128
    config: Text255 = ""


class PrizeIn(_Model, PrizeCardIn):  # the card's fields beside the odds'
    award: Id
    rate: Decimal
    stock: Count | None = None
    rules: dict[str, str] = {}
    warning_surplus: Count | None = None  # stock left at which operators are warned
    claim: ClaimIn | None = None  # validity and claim conditions once won

    _text_rules = field_validator("rules", mode="before")(_rules)


class FallbackIn(_Model):
    award: Id
    points: Text64 | None = None


class StrategyIn(_Model):
    id: Id
    description: Text255 = ""
    exhaustion: Exhaustion = Exhaustion.FALLBACK
    fallback: Id | FallbackIn
    rules: dict[str, str] = {}
    prizes: list[PrizeIn]

    _text_rules = field_validator("rules", mode="before")(_rules)


class PackIn(_Model):
    id: Id
    total: Count
    day: Count
    month: Count


class ActivityIn(_Model):
    id: Id
    name: Text64
    description: Text255 = ""
    strategy: Id
    begin_at: AwareDatetime
    end_at: AwareDatetime
    time_zone: Text64 = "Asia/Shanghai"
    state: ActivityState = ActivityState.EDIT  # for a new activity; a stored one keeps its own
    welcome_pack: Id | None = None
    policies: list[PolicyIn] = []  # participation policies: meeting one is enough
    person_caps: PersonCapsIn | None = None  # a capped win is the fallback
    award_num_limit: Count | None = None  # total winners of the activity
    join_people_total_limit: Count | None = None  # total participants
    perfect_activity: bool = False  # every draw wins a real prize while stock lasts
    join_code_required: bool = False  # a draw needs a join code the user redeemed
    show_winning_list: FeedDisplay = FeedDisplay.HIDDEN  # the winners' feed: ticker, tiled
    queued: bool = False  # draws answered with a ticket, drawn in acceptance order
    kind: ActivityKind = ActivityKind.INSTANT  # scheduled: entries, then winners at draw_at
    draw_at: AwareDatetime | None = None  # scheduled: when the winners are picked
    cutoff: AwareDatetime | None = None  # scheduled: entries end (default draw_at - 30 min)
    winners_per_prize: Count | None = None  # scheduled: N winners of each prize
    one_person_lottery_number: Count = 1  # scheduled: the most prizes one person wins
    audience: Text64 | None = None  # scheduled: the tag an entrant is in at the draw to win


class SkuIn(_Model):
    sku: Id
    activity: Id
    pack: Id
    stock: Count
    price_points: Count = 0


class RebateIn(_Model):
    activity: Id
    behaviour: Text32
    sku: Id | None = None
    points: Count | None = None
    description: Text128 = ""
    enabled: bool = True


class CampaignIn(_Model):
    """The file's shape; each item of a section is checked on its own (`_items`), so one bad
    item hides no problem of another."""

    awards: list[Any] = []
    strategies: list[Any] = []
    packs: list[Any] = []
    activities: list[Any] = []
    skus: list[Any] = []
    rebates: list[Any] = []
    tags: list[Any] = []
    # pool name -> codes. Quote codes that look like numbers: YAML reads 007 as 7.
    code_pools: dict[Text64, Any] = {}
    trees: list[Any] = []  # decision trees: their JSON document (route_tree_documents.py)
    content: list[Any] = []  # paid content
    flash_sales: list[Any] = []


ITEMS: dict[str, type[BaseModel]] = {
    "awards": AwardIn,
    "strategies": StrategyIn,
    "packs": PackIn,
    "activities": ActivityIn,
    "skus": SkuIn,
    "rebates": RebateIn,
    "tags": TagFileIn,
    "content": ContentFileIn,
    "flash_sales": FlashSaleFileIn,
}
CODES = TypeAdapter(list[str])

# The items of each section that were read, by their index in the file.
Items = dict[str, list[tuple[int, Any]]]


def read_campaign(path: Path) -> Campaign:
    """Parse and check a campaign file, YAML or packed (a zip of it and its images); raise
    InvalidCampaignFile listing every problem. A YAML file's image paths are read beside it."""
    if path.suffix.lower() == ".zip":
        text, files = unpack(path.read_bytes(), str(path))
        return parse_campaign(text, str(path), files)
    return parse_campaign(path.read_text(encoding="utf-8"), str(path), folder_files(path.parent))


def parse_campaign(text: str, source: str, files: PackedFiles | None = None) -> Campaign:
    """Parse and check campaign YAML; `source` names it in messages, `files` gives the
    images its prizes name by path. Every problem of the file is reported at once, each
    with its line: those of the items' fields, then those of the items that read well
    (rates, rules), then those across items (references)."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        raise InvalidCampaignFile(source, [Problem(line, "", str(error.problem))]) from None
    lines = _lines(root) if root is not None else {}
    data = _Loader.construct(root) if root is not None else {}
    found: list[Problem] = []

    def report(path: Location, message: str, reason: str | None = None) -> None:
        found.append(_problem(lines, path, message, reason))

    items = _items(data, report)
    campaign, kept = _to_domain(items, report, ImageShelf(files))
    for problem in campaign.problems():
        report(_in_file(problem.path, kept), problem.message, _reason(problem))
    if found:
        raise InvalidCampaignFile(source, sorted(found, key=lambda p: p.line))
    return campaign


def _items(data: Any, report: Report) -> Items:
    """Each section's items that match their model; the others reported, field by field."""
    try:
        sections = CampaignIn.model_validate(data)
    except ValidationError as error:
        bad = set()
        for e in error.errors():
            report(tuple(e["loc"]), e["msg"], None)
            bad.add(e["loc"][0] if e["loc"] else None)
        if None in bad or not isinstance(data, dict):
            return {}
        sections = CampaignIn.model_validate({k: v for k, v in data.items() if k not in bad})
    items: Items = {name: [] for name in (*ITEMS, "code_pools")}
    items["trees"] = list(enumerate(sections.trees))  # checked as they build (`_tree`)
    for name, model in ITEMS.items():
        for i, raw in enumerate(getattr(sections, name)):
            try:
                items[name].append((i, model.model_validate(raw)))
            except ValidationError as error:
                for e in error.errors():
                    report((name, i, *e["loc"]), e["msg"], None)
    for j, (pool, raw) in enumerate(sections.code_pools.items()):
        try:
            items["code_pools"].append((j, CodePool(pool, tuple(CODES.validate_python(raw)))))
        except ValidationError as error:
            for e in error.errors():
                report(("code_pools", pool, *e["loc"]), e["msg"], None)
    return items


def _to_domain(
    items: Items, report: Report, shelf: ImageShelf
) -> tuple[Campaign, dict[str, list[int]]]:
    """The campaign of the items that build, and where in the file each built item is."""
    kept: dict[str, list[int]] = {}

    def each(section: str, build: Callable[[Any], T]) -> tuple[T, ...]:
        built, kept[section] = [], []
        for i, item in items.get(section, []):
            try:
                built.append(build(item))
            except InvalidConfig as error:
                report((section, i, *error.path), error.message, _reason(error))
            except _Invalid as invalid:
                for problem in invalid.problems:
                    report((section, i, *problem.path), problem.message, _reason(problem))
            else:
                kept[section].append(i)
        return tuple(built)

    campaign = Campaign(
        awards=each("awards", _award),
        strategies=each("strategies", lambda s: _strategy(s, shelf)),
        packs=each("packs", _pack),
        activities=each("activities", _activity),
        skus=each("skus", _sku),
        rebates=each("rebates", _rebate),
        code_pools=tuple(pool for _, pool in items.get("code_pools", [])),
        participations=_participations(items, report),
        trees=each("trees", _tree),
        tags=each("tags", tag_definition),
        images=tuple(shelf.images.values()),
        content=each("content", declared),
        flash_sales=each("flash_sales", declared_sale),
    )
    return campaign, kept


def _participations(items: Items, report: Report) -> tuple[Participation, ...]:
    """The activities' participation (policies, caps) where they have any; loading the file
    leaves its other activities with none."""
    built = []
    for i, a in items.get("activities", []):
        try:
            found = participation(a.id, a.policies, a.person_caps)
        except InvalidConfig as error:
            report(("activities", i, *error.path), error.message, _reason(error))
        else:
            built += [] if found.empty else [found]
    return tuple(built)


def _reason(error: InvalidConfig) -> str | None:
    """The error's code where it has one of its own (`queued_and_scheduled`)."""
    return None if error.code == InvalidConfig.code else error.code


def _in_file(path: Location, kept: dict[str, list[int]]) -> Location:
    """A campaign's path (`strategies.1.rate`, counting the items that built) in the file."""
    if len(path) > 1 and isinstance(path[1], int) and str(path[0]) in kept:
        return (path[0], kept[str(path[0])][path[1]], *path[2:])
    return path


class _Invalid(Exception):
    """Several problems of one item."""

    def __init__(self, problems: list[InvalidConfig]) -> None:
        super().__init__(problems)
        self.problems = problems


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
        caps=Caps(a.award_num_limit, a.join_people_total_limit, a.perfect_activity),
        join_code_required=a.join_code_required,
        winners_feed=a.show_winning_list,
        queued=a.queued,
        schedule=_schedule(a),
    )


def _schedule(a: ActivityIn) -> Schedule | None:
    given = [n for n in SCHEDULE_FIELDS if getattr(a, n) is not None]
    if a.kind is ActivityKind.INSTANT:
        if given or a.one_person_lottery_number != 1:
            raise InvalidConfig("an instant activity has no schedule", ("kind",))
        return None
    if a.draw_at is None or a.winners_per_prize is None:
        raise InvalidConfig("a scheduled activity has draw_at and winners_per_prize", ("kind",))
    return scheduled(
        a.draw_at, a.winners_per_prize, cutoff=a.cutoff,
        per_person=a.one_person_lottery_number, audience=a.audience,
    )  # fmt: skip


SCHEDULE_FIELDS = ("draw_at", "cutoff", "winners_per_prize", "audience")


def _sku(s: SkuIn) -> Sku:
    return Sku(s.sku, s.activity, s.pack, s.stock, s.price_points)


def _rebate(r: RebateIn) -> RebateRule:
    return RebateRule(r.activity, r.behaviour, r.sku, r.points, r.description, r.enabled)


def _strategy(s: StrategyIn, shelf: ImageShelf) -> Strategy:
    prizes, problems = [], []
    for i, p in enumerate(s.prizes):
        try:
            terms = claim_terms(p.claim)
            prizes.append(
                StrategyPrize(
                    p.award,
                    p.rate,
                    p.stock,
                    i,
                    tuple(p.rules.items()),
                    warning_surplus=p.warning_surplus,
                    claim=terms,
                    enabled=p.enabled,
                    card=shelf.card(p),
                )
            )
        except InvalidConfig as error:
            problems.append(error.at("prizes", i))
    fallback = Fallback(s.fallback) if isinstance(s.fallback, int) else None
    if isinstance(s.fallback, FallbackIn):
        points = s.fallback.points
        try:
            fallback = Fallback(s.fallback.award, parse_points_range(points) if points else None)
        except InvalidConfig as error:
            problems.append(error.at("fallback", "points"))
    if problems or fallback is None:
        raise _Invalid(problems)
    return Strategy(
        id=s.id,
        prizes=tuple(prizes),
        fallback=fallback,
        rules=tuple(s.rules.items()),
        exhaustion=s.exhaustion,
        description=s.description,
    )


def _tree(raw: Any) -> RouteTree:
    try:
        return from_document(_json(raw))
    except InvalidRouteTree as error:
        raise _Invalid([tree_problem(p) for p in error.problems]) from None


def _json(value: Any) -> Any:
    """YAML's values as JSON's: decimals as floats, dates as their ISO text."""
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, Decimal):  # YAML's floats (_Loader); JSON has no decimals
        return float(value)
    return value.isoformat() if isinstance(value, date) else value


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


def _problem(
    lines: dict[Location, int], path: Location, message: str, reason: str | None
) -> Problem:
    # The deepest part of the path that is in the file: a missing field points at its parent.
    where = ".".join(map(str, path))
    for depth in range(len(path), -1, -1):
        if path[:depth] in lines:
            return Problem(lines[path[:depth]], where, message, reason)
    return Problem(1, where, message, reason)
