"""Awards and strategies in SQL: a domain object is saved as rows and read back equal."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import Row, delete, insert, select

from raffle.adapters.sql.connection import SqlConnection
from raffle.adapters.sql.repositories.upsert import upsert
from raffle.adapters.sql.tables import config as tables
from raffle.domain.awards import Award, AwardKind
from raffle.domain.errors import InvalidConfig
from raffle.domain.prize_cards import PrizeCard
from raffle.domain.prize_claims import NO_TERMS, ClaimTerms, terms_json, terms_of_json
from raffle.domain.strategy import (
    RATE_PLACES,
    Exhaustion,
    Strategy,
    StrategyPrize,
    format_fallback,
    parse_fallback,
)

LUCK = "luck"  # big-market's rule_luck_award: the strategy's fallback, stored among its rules


class SqlAwardRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, award: Award) -> None:
        row = {
            "award_id": award.id,
            "kind": award.kind.value,
            "title": award.title,
            "config": award.config,
        }
        await self._connection.execute(upsert(self._connection.dialect, tables.award, row))

    async def all(self) -> dict[int, Award]:
        rows = await self._connection.execute(
            select(tables.award).order_by(tables.award.c.award_id)
        )
        return {
            row.award_id: Award(row.award_id, AwardKind(row.kind), row.title, row.config)
            for row in rows
        }


class SqlStrategyRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self._connection = connection

    async def save(self, strategy: Strategy) -> None:
        if any(name == LUCK for name, _ in strategy.rules):
            raise InvalidConfig(f"{LUCK!r} is the fallback, not a pre-draw rule", ("rules",))
        head = {
            "strategy_id": strategy.id,
            "description": strategy.description,
            "exhaustion": strategy.exhaustion.value,
        }
        # The strategy row first: its row lock makes concurrent saves of one strategy take
        # turns, so the second replaces the first's prizes and rules instead of mixing in.
        await self._connection.execute(upsert(self._connection.dialect, tables.strategy, head))
        for table in (tables.strategy_prize, tables.strategy_rule):
            await self._connection.execute(delete(table).where(table.c.strategy_id == strategy.id))
        if strategy.prizes:
            await self._connection.execute(insert(tables.strategy_prize), _prize_rows(strategy))
        await self._connection.execute(insert(tables.strategy_rule), _rule_rows(strategy))

    async def get(self, strategy_id: int) -> Strategy | None:
        head = (
            await self._connection.execute(
                select(tables.strategy).where(tables.strategy.c.strategy_id == strategy_id)
            )
        ).first()
        if head is None:
            return None
        prizes = await self._connection.execute(
            select(tables.strategy_prize)
            .where(tables.strategy_prize.c.strategy_id == strategy_id)
            .order_by(tables.strategy_prize.c.position)
        )
        rules = await self._connection.execute(
            select(tables.strategy_rule)
            .where(tables.strategy_rule.c.strategy_id == strategy_id)
            .order_by(tables.strategy_rule.c.sort, tables.strategy_rule.c.id)
        )
        return _strategy(head, prizes.all(), rules.all())

    async def ids(self) -> list[int]:
        rows = await self._connection.execute(
            select(tables.strategy.c.strategy_id).order_by(tables.strategy.c.strategy_id)
        )
        return list(rows.scalars())


def _prize_rows(strategy: Strategy) -> list[dict[str, Any]]:
    return [
        {
            "strategy_id": strategy.id,
            "award_id": prize.award_id,
            "rate_ppm": prize.weight,
            "stock": prize.stock,
            "warning_surplus": prize.warning_surplus,
            "sort": prize.sort,
            "position": position,
            "claim_terms": json.dumps(terms_json(prize.claim)) if prize.claim.any else None,
            "enabled": prize.enabled,
            **card_row(prize.card),
        }
        for position, prize in enumerate(strategy.prizes)
    ]


def _rule_rows(strategy: Strategy) -> list[dict[str, Any]]:
    # The fallback closes the pre-draw chain, where big-market's default rule sits.
    chain = (*strategy.rules, (LUCK, format_fallback(strategy.fallback)))
    owned = [(None, chain), *((prize.award_id, prize.rules) for prize in strategy.prizes)]
    return [
        {
            "strategy_id": strategy.id,
            "award_id": award_id,
            "rule_model": name,
            "rule_value": value,
            "sort": sort,
        }
        for award_id, rules in owned
        for sort, (name, value) in enumerate(rules)
    ]


def _strategy(head: Row[Any], prizes: Sequence[Row[Any]], rules: Sequence[Row[Any]]) -> Strategy:
    pre_draw: list[tuple[str, str]] = []
    post_draw: defaultdict[int, list[tuple[str, str]]] = defaultdict(list)
    fallback = None
    for rule in rules:
        if rule.award_id is not None:
            post_draw[rule.award_id].append((rule.rule_model, rule.rule_value))
        elif rule.rule_model == LUCK:
            fallback = parse_fallback(rule.rule_value)
        else:
            pre_draw.append((rule.rule_model, rule.rule_value))
    if fallback is None:
        raise LookupError(f"strategy {head.strategy_id} has no {LUCK!r} rule")
    return Strategy(
        id=head.strategy_id,
        prizes=tuple(
            StrategyPrize(
                award_id=p.award_id,
                rate=_rate(p.rate_ppm),
                stock=p.stock,
                sort=p.sort,
                rules=tuple(post_draw[p.award_id]),
                warning_surplus=p.warning_surplus,
                claim=_terms(p.claim_terms),
                enabled=p.enabled,
                card=card_of(p),
            )
            for p in prizes
        ),
        fallback=fallback,
        rules=tuple(pre_draw),
        exhaustion=Exhaustion(head.exhaustion),
        description=head.description,
    )


def _terms(text: str | None) -> ClaimTerms:
    return NO_TERMS if text is None else terms_of_json(json.loads(text))


def card_row(card: PrizeCard) -> dict[str, Any]:
    return {
        "level": card.level,
        "level_name": card.level_name,
        "image": card.image,
        "description": card.description,
        "win_tips": card.win_tips,
        "priority": card.priority,
        "cell": card.cell,
        "value_cents": card.value_cents,
    }


def card_of(row: Row[Any]) -> PrizeCard:
    return PrizeCard(
        level=row.level,
        level_name=row.level_name,
        image=row.image,
        description=row.description,
        win_tips=row.win_tips,
        priority=row.priority,
        cell=row.cell,
        value_cents=row.value_cents,
    )


def _rate(rate_ppm: int) -> Decimal:
    """Millionths back to the exact decimal: 300000 -> 0.3."""
    return Decimal(rate_ppm).scaleb(-RATE_PLACES).normalize()
