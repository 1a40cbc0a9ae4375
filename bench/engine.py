"""Draw-engine throughput: plain alias-table draws and full-pipeline draws, CSPRNG, one process.

Run: python bench/engine.py [--draws N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from decimal import Decimal

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SystemRandomSource
from raffle.domain.awards import Award, AwardKind
from raffle.domain.engine import DrawEngine
from raffle.domain.rules import DrawContext
from raffle.domain.sampler import AliasTable
from raffle.domain.strategy import Fallback, Strategy, StrategyPrize

FALLBACK = 1


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
    print(f"{'prizes':>7} {'plain draws/s':>15} {'pipeline draws/s':>17}")
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

        print(
            f"{prizes:>7} {rate(plain, args.draws, args.repeat):>15,.0f} "
            f"{rate(pipeline, args.draws // 4, args.repeat):>17,.0f}"
        )


if __name__ == "__main__":
    main()
