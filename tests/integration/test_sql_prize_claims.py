"""A prize's claim terms in storage (migration 0019): read back equal, none on prizes from
before it, and the migration undoes itself."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import sqlalchemy as sa
from alembic.script import ScriptDirectory

from raffle.adapters.sql.migrate import alembic_config, downgrade, upgrade
from raffle.adapters.sql.unit_of_work import SqlUnitOfWork, create_engine
from raffle.domain.prize_claims import NO_TERMS, ClaimTerms, Validity, ValidityKind
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize

FIXED = Validity(ValidityKind.FIXED, first=date(2026, 12, 1), last=date(2026, 12, 31))
DAYS = Validity(ValidityKind.DAYS, days=7, later=2)
STRATEGY = Strategy(
    20,
    (
        StrategyPrize(2, Decimal("0.1"), 5, claim=ClaimTerms(FIXED, ("phone", "attrs.member"))),
        StrategyPrize(
            3, Decimal("0.1"), 5, claim=ClaimTerms(Validity(ValidityKind.DAYS, days=7, later=2))
        ),
        StrategyPrize(4, Decimal("0.1"), 5),
    ),
    Fallback(1),
)
# The revision 0019 follows, whichever it is once the branches' migrations are chained.
BEFORE = ScriptDirectory.from_config(alembic_config("sqlite://")).get_revision("0019").down_revision
# A strategy with one prize, as rows before 0019.
BEFORE_0019 = [
    "INSERT INTO strategy (strategy_id, description, exhaustion) VALUES (10, '', 'fallback')",
    "INSERT INTO strategy_prize (strategy_id, award_id, rate_ppm, stock, sort, position)"
    " VALUES (10, 2, 100000, 5, 0, 0)",
    "INSERT INTO strategy_rule (strategy_id, award_id, rule_model, rule_value, sort)"
    " VALUES (10, NULL, 'luck', '1', 0)",
]


async def test_terms_are_stored_none_before_0019_and_the_migration_undoes_itself(
    database_url: str,
) -> None:
    await upgrade(database_url, BEFORE)
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:  # a prize as code before 0019 wrote it
            for statement in BEFORE_0019:
                await connection.execute(sa.text(statement))
        await upgrade(database_url)
        async with SqlUnitOfWork(engine) as uow:
            await uow.strategies.save(STRATEGY)
            await uow.commit()
        async with SqlUnitOfWork(engine) as uow:
            old, new = await uow.strategies.get(10), await uow.strategies.get(20)
    finally:
        await engine.dispose()
    assert old is not None
    assert old.prizes[0].claim == NO_TERMS
    assert new == STRATEGY
    await downgrade(database_url, BEFORE)  # and back down: 0019 undoes itself
    await upgrade(database_url)
