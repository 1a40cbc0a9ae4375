"""Draw-engine throughput: plain alias-table draws and full-pipeline draws, CSPRNG, one process;
and full-pipeline draws on a committed seed (a stream of HMAC-SHA256 of their own each), with
and without issuing their receipts: the extra work per draw of verifiable draws.

Run: python bench/engine.py [--draws N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SystemRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import DrawEngine
from raffle.domain.fairness import HmacStream, ServerSeed, odds_hash
from raffle.domain.receipts import Proof, Trail, issued
from raffle.domain.rules import DrawContext
from raffle.domain.sampler import AliasTable
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize

FALLBACK = 1
SEED = ServerSeed(
    1, 1, bytes(32), datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
)


def build(prizes: int) -> DrawEngine:
    """`prizes` prizes sharing 99.9% of the odds, with stock, locks, listed users and tiers."""
    ids = list(range(2, prizes + 2))
    rate = (Decimal("0.999") / prizes).quantize(Decimal("0.000001"))
    table = tuple(
        StrategyPrize(a, rate, stock=10**9, sort=i, rules=(("lock", "2"),) if i % 3 == 0 else ())
        for i, a in enumerate(ids)
    )
    tiers = f"60:{','.join(map(str, ids[: prizes // 2]))} 200:{ids[-1]}"
    rules = (("listed", f"{FALLBACK}:banned-1,banned-2"), ("weight", tiers))
    strategy = Strategy(1, table, Fallback(FALLBACK, (1, 100)), rules)
    awards = {a: Award(a, AwardKind.PHYSICAL, f"prize {a}") for a in ids}
    awards[FALLBACK] = Award(FALLBACK, AwardKind.RANDOM_POINTS, "points", "1,100")
    return DrawEngine(strategy, awards)


def rate(run: Callable[[int], None], draws: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run(draws)
        best = min(best, time.perf_counter() - start)
    return draws / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'prizes':>7} {'plain draws/s':>15} {'pipeline draws/s':>17} {'seeded draws/s':>15} "
        f"{'with receipts/s':>16} {'extra µs/draw':>14}"
    )
    for prizes in (10, 1000):
        engine = build(prizes)
        rng, stock, ctx = SystemRandomSource(), MemoryStock([engine.strategy]), DrawContext("u", 3)
        table = AliasTable({p.award_id: p.weight for p in engine.strategy.prizes})

        def plain(n: int, table=table, rng=rng) -> None:  # type: ignore[no-untyped-def]
            sample = table.sample
            for _ in range(n):
                sample(rng)

        def pipeline(n: int, engine=engine, rng=rng, stock=stock, ctx=ctx) -> None:  # type: ignore[no-untyped-def]
            draw = engine.draw
            for _ in range(n):
                draw(ctx, rng, stock)

        def seeded(n: int, engine=engine, stock=stock, ctx=ctx) -> None:  # type: ignore[no-untyped-def]
            draw = engine.draw
            for i in range(n):
                draw(ctx, HmacStream(SEED.secret, "client", f"order-{i}", 3), stock)

        odds = odds_hash(engine.strategy, engine.awards, engine.perfect)

        def receipted(n: int, engine=engine, stock=stock, ctx=ctx, odds=odds) -> None:  # type: ignore[no-untyped-def]
            draw = engine.draw
            for i in range(n):
                order = f"order-{i}"
                outcome = draw(ctx, HmacStream(SEED.secret, "client", order, 3), stock)
                proof = Proof(SEED.period, "client", False, Trail(tuple(sorted(engine.exhausted))))
                proof.to_text()
                issued(SEED, odds, proof, order, 3, outcome)

        piped = rate(pipeline, args.draws // 4, args.repeat)
        with_receipts = rate(receipted, args.draws // 20, args.repeat)
        print(
            f"{prizes:>7} {rate(plain, args.draws, args.repeat):>15,.0f} {piped:>17,.0f} "
            f"{rate(seeded, args.draws // 4, args.repeat):>15,.0f} {with_receipts:>16,.0f} "
            f"{(1 / with_receipts - 1 / piped) * 1e6:>14.1f}"
        )


if __name__ == "__main__":
    main()
