"""`raffle simulate`: many draws of a campaign file's strategies against the exact odds."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from raffle.adapters.memory_stock import MemoryStock
from raffle.adapters.randomness import SeededRandomSource, SystemRandomSource
from raffle.domain.rules import DrawContext
from raffle.entrypoints.cli_common import campaign_path, fail, print_table, read
from raffle.service.simulation import Simulation, UsersSimulation, simulate, simulate_users
from raffle.service.statistics import STATS_EXTRA


@click.command("simulate")
@click.argument("file", type=campaign_path)
@click.option("--strategy", "strategy_id", type=int, help="Strategy id; default: every one.")
@click.option("--draws", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option(
    "--draw-count",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="The user's draw count (this draw included) seen by every simulated draw.",
)
@click.option(
    "--per-user",
    type=click.IntRange(min=1),
    help="Simulate users each drawing this many times (counts 1, 2, …; DRAWS / this many "
    "users), compared draw number by draw number: guarantees show. Ignores --draw-count.",
)
@click.option(
    "--user",
    default="simulated-user",
    show_default=True,
    help="The drawing user id (with --per-user: the users' prefix).",
)
@click.option("--seed", type=int, help="Reproducible run from a seeded PRNG instead of the CSPRNG.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--perfect", is_flag=True, help="As a 100 % win activity: only real prizes are drawn."
)
def simulate_command(
    file: Path,
    strategy_id: int | None,
    draws: int,
    draw_count: int,
    user: str,
    seed: int | None,
    as_json: bool,
    perfect: bool,
    per_user: int | None,
) -> None:
    """Run DRAWS draws of a FILE's strategies with in-memory stock and compare with the odds."""
    campaign = read(file)
    engines = campaign.engines(perfect=perfect)
    if strategy_id is not None and strategy_id not in engines:
        fail(f"strategy {strategy_id} is not in {file}; it has {', '.join(map(str, engines))}")
    chosen = [engines[strategy_id]] if strategy_id is not None else list(engines.values())
    rng = SeededRandomSource(seed) if seed is not None else SystemRandomSource()
    if per_user is not None and draws < per_user:
        fail(f"--draws {draws} is fewer than one user's --per-user {per_user}")
    ctx = DrawContext(user, draw_count)
    results: list[Simulation | UsersSimulation] = []
    for engine in chosen:
        stock = MemoryStock([engine.strategy])
        with click.progressbar(
            length=draws, label=f"strategy {engine.strategy.id}", file=sys.stderr
        ) as bar:
            last = 0

            def advance(done: int) -> None:
                nonlocal last
                bar.update(done - last)
                last = done

            if per_user is None:
                results.append(simulate(engine, ctx, draws, rng, stock, advance))
            else:
                users = draws // per_user
                results.append(simulate_users(engine, users, per_user, rng, stock, advance, user))
    titles = {a.id: a.title for a in campaign.awards}
    if as_json:
        payload = [_as_json(r, titles) for r in results]
        click.echo(json.dumps(payload[0] if strategy_id is not None else payload, indent=2))
    else:
        for result in results:
            _print(result, titles)


def _as_json(result: Simulation | UsersSimulation, titles: dict[int, str]) -> dict[str, object]:
    statistic = result.fit.statistic
    head: dict[str, object] = {
        "strategy": result.strategy_id,
        "draws": result.draws,
        "chi_square": statistic if math.isfinite(statistic) else None,
        "degrees_of_freedom": result.fit.degrees_of_freedom,
        "p_value": result.p_value,
    }
    if isinstance(result, UsersSimulation):
        by_draw = [{"draw": n, **_as_json(s, titles)} for n, s in enumerate(result.by_draw, 1)]
        return head | {"users": result.users, "draws_each": result.draws_each, "by_draw": by_draw}
    return head | {
        "prizes": [
            {
                "id": p.award_id,
                "title": titles.get(p.award_id, ""),
                "count": p.count,
                "expected_probability": p.expected_probability,
                "observed_probability": p.observed_probability,
            }
            for p in result.prizes
        ],
    }


def _print(result: Simulation | UsersSimulation, titles: dict[int, str]) -> None:
    if isinstance(result, UsersSimulation):
        for n, by_draw in enumerate(result.by_draw, 1):
            _table(by_draw, titles, f"draw {n} of {result.users:,} users")
        click.echo(f"\nall draw numbers of strategy {result.strategy_id}:")
    else:
        _table(result, titles, f"{result.draws:,} draws")
    fit = result.fit
    click.echo(f"chi-square {fit.statistic:.4g} with {fit.degrees_of_freedom} degrees of freedom")
    if result.p_value is None:
        click.echo(f"chi-square p-value: needs scipy ({STATS_EXTRA})")
    else:
        click.echo(f"chi-square p-value: {result.p_value:.4g}")


def _table(result: Simulation, titles: dict[int, str], what: str) -> None:
    click.echo()
    rows = [
        (p.award_id, titles.get(p.award_id, ""), p.count, p.observed_probability,
         p.expected_probability)
        for p in result.prizes
    ]  # fmt: skip
    columns = ("award", "title", "count", "observed", "expected")
    print_table(columns, rows, f"strategy {result.strategy_id}: {what}")
