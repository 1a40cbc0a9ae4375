"""Campaign files written from domain objects: the reader's shape (campaign_file.py), so
what is exported loads back unchanged."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import yaml

from raffle.adapters.campaign_claims import written as written_claim
from raffle.adapters.campaign_content import written as written_content
from raffle.adapters.campaign_flash_sales import written as written_sale
from raffle.adapters.campaign_policies import written as written_participation
from raffle.adapters.campaign_prize_cards import written as written_card
from raffle.domain.activity import Activity
from raffle.domain.awards import Award
from raffle.domain.campaign import Campaign
from raffle.domain.policies import Participation
from raffle.domain.prize_images import PrizeImage
from raffle.domain.quota import QuotaPack, Sku
from raffle.domain.rebates import RebateRule
from raffle.domain.route_tree_documents import to_document
from raffle.domain.route_trees import RouteTree
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize
from raffle.domain.tags import TagDefinition
from raffle.domain.winners_feed import FeedDisplay


class _Flow(dict[str, Any]):
    """A small mapping written on one line, as the docs write awards and prizes."""


def campaign_document(campaign: Campaign) -> dict[str, Any]:
    """The campaign as plain data in the file's shape: mappings, lists, ints, text, exact
    decimals (rates) and aware datetimes; sections with nothing in them are left out."""
    participations = {p.activity_id: p for p in campaign.participations}
    images = {i.id: i for i in campaign.images}
    document: dict[str, Any] = {
        "awards": [_award(a) for a in campaign.awards],
        "strategies": [_strategy(s, images) for s in campaign.strategies],
        "packs": [_pack(p) for p in campaign.packs],
        "activities": [_activity(a, participations.get(a.id)) for a in campaign.activities],
        "skus": [_sku(s) for s in campaign.skus],
        "rebates": [_rebate(r) for r in campaign.rebates],
        "code_pools": {p.name: list(p.codes) for p in campaign.code_pools},
        "trees": [_tree(t) for t in campaign.trees],
        "tags": [_tag(t) for t in campaign.tags],
        "content": [written_content(c) for c in campaign.content],
        "flash_sales": [written_sale(s) for s in campaign.flash_sales],
    }
    return {section: items for section, items in document.items() if items}


def write_campaign(campaign: Campaign, notes: Sequence[str] = ()) -> str:
    """The campaign as YAML that `raffle load` reads back to the same campaign; `notes` go
    first as comment lines."""
    head = "".join(f"# {note}\n" for note in notes)
    document = campaign_document(campaign)
    if not document:
        return head + "{}\n"  # an empty mapping: the reader's empty campaign
    body = yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return head + body


def _tree(tree: RouteTree) -> dict[str, Any]:
    """The tree's document, a line or a leaf on each line of the file."""
    document = to_document(tree)
    for node in document["nodes"]:
        node["lines"] = [_Flow(line) for line in node["lines"]]
    document["leaves"] = [_Flow(leaf) for leaf in document["leaves"]]
    return document


def _award(a: Award) -> _Flow:
    return _Flow(
        id=a.id, kind=a.kind.value, title=a.title, **({"config": a.config} if a.config else {})
    )


def _strategy(s: Strategy, images: Mapping[str, PrizeImage]) -> dict[str, Any]:
    written: dict[str, Any] = {"id": s.id}
    if s.description:
        written["description"] = s.description
    written["exhaustion"] = s.exhaustion.value
    written["fallback"] = _fallback(s.fallback)
    if s.rules:
        written["rules"] = dict(s.rules)
    written["prizes"] = [_prize(p, images) for p in sorted(s.prizes, key=lambda p: p.sort)]
    return written


def _fallback(f: Fallback) -> int | _Flow:
    if f.points is None:
        return f.award_id
    return _Flow(award=f.award_id, points=f"{f.points[0]},{f.points[1]}")


def _prize(p: StrategyPrize, images: Mapping[str, PrizeImage]) -> _Flow:
    written = _Flow(award=p.award_id, rate=p.rate)
    if p.stock is not None:
        written["stock"] = p.stock
    if p.warning_surplus is not None:
        written["warning_surplus"] = p.warning_surplus
    if p.rules:
        written["rules"] = _Flow(p.rules)
    if (claim := written_claim(p.claim)) is not None:
        written["claim"] = _Flow(claim)
    written |= written_card(p.enabled, p.card, images)
    return written


def _pack(p: QuotaPack) -> _Flow:
    return _Flow(id=p.id, total=p.total, day=p.day, month=p.month)


def _activity(a: Activity, participation: Participation | None) -> dict[str, Any]:
    written: dict[str, Any] = {"id": a.id, "name": a.name}
    if a.description:
        written["description"] = a.description
    written |= {
        "strategy": a.strategy_id,
        "begin_at": a.begin_at,
        "end_at": a.end_at,
        "time_zone": a.time_zone,
        "state": a.state.value,
    }
    if a.welcome_pack is not None:
        written["welcome_pack"] = a.welcome_pack
    if participation is not None:
        written |= written_participation(participation, _Flow)
    if a.caps.winners is not None:
        written["award_num_limit"] = a.caps.winners
    if a.caps.participants is not None:
        written["join_people_total_limit"] = a.caps.participants
    if a.caps.perfect:
        written["perfect_activity"] = True
    if a.join_code_required:
        written["join_code_required"] = True
    if a.winners_feed is not FeedDisplay.HIDDEN:
        written["show_winning_list"] = a.winners_feed.value
    if a.queued:
        written["queued"] = True
    if (schedule := a.schedule) is not None:
        written |= {"kind": a.kind.value, "draw_at": schedule.draw_at, "cutoff": schedule.cutoff,
                    "winners_per_prize": schedule.winners}  # fmt: skip
        if schedule.per_person != 1:
            written["one_person_lottery_number"] = schedule.per_person
        if schedule.audience is not None:
            written["audience"] = schedule.audience
    return written


def _sku(s: Sku) -> _Flow:
    return _Flow(
        sku=s.sku,
        activity=s.activity_id,
        pack=s.pack_id,
        stock=s.stock,
        price_points=s.price_points,
    )


def _rebate(r: RebateRule) -> _Flow:
    written = _Flow(activity=r.activity_id, behaviour=r.behaviour)
    optional: Mapping[str, Any] = {"sku": r.sku, "points": r.points}
    written |= {k: v for k, v in optional.items() if v is not None}
    if r.description:
        written["description"] = r.description
    if not r.enabled:
        written["enabled"] = False
    return written


def _tag(d: TagDefinition) -> dict[str, Any]:
    written: dict[str, Any] = {"name": d.tag.name, "kind": d.tag.kind.value}
    if d.tag.description:
        written["description"] = d.tag.description
    if d.tag.condition:
        written["condition"] = d.tag.condition
    if d.members:
        written["members"] = list(d.members)
    return written


class _Dumper(yaml.SafeDumper):
    """Safe YAML with exact decimals and one-line small mappings."""


def _decimal(dumper: yaml.SafeDumper, value: Decimal) -> yaml.Node:
    # Plain '0.0001', which the reader takes back as Decimal('0.0001'): never a float, never
    # an exponent ('1E-4' would read as text).
    text = format(value.normalize(), "f")
    if "." not in text:
        return dumper.represent_int(int(text))
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _flow(dumper: yaml.SafeDumper, value: _Flow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=True)


def _datetime(dumper: yaml.SafeDumper, value: datetime) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())


_Dumper.add_representer(Decimal, _decimal)
_Dumper.add_representer(_Flow, _flow)
_Dumper.add_representer(datetime, _datetime)
