"""Tag conditions: compile and evaluation rate of rule-engine, cel-python and CEL's Rust bindings.

Run: .venv/bin/pip install cel-python==0.5.0 common-expression-language==0.10.0
     .venv/bin/python bench/expressions.py [--evaluations N] [--repeat R]

Each library evaluates the same conditions over the facts of the same profiles
(raffle.domain.profiles.facts), some of them lacking the field tested; an error at
evaluation counts as "no match", as the tags' semantics say. Only rule-engine is a
project dependency: the two CEL libraries are installed by hand for this script.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from raffle.domain.profiles import Gender, Profile, facts

TODAY = date(2026, 11, 24)
PROFILES = [
    Profile("u1", level=3, birth_date=date(1960, 5, 1), sn="X", attributes={"vip": True}),
    Profile("u2", level=1, gender=Gender.FEMALE, region="sh", birth_date=date(2001, 2, 3)),
    Profile("u3", level=4, sn="Y", attributes={"vip": False}),
    Profile("u4"),
]

# name: (rule-engine, CEL); CEL tests the facts as the map `p`.
CONDITIONS: dict[str, tuple[str, str]] = {
    "age > 50": ("age > 50", "p.age > 50"),
    "sn exists": ("sn != null", "has(p.sn)"),
    "sn == X": ('sn == "X"', 'p.sn == "X"'),
    "level in [3, 4]": ("level in [3, 4]", "p.level in [3, 4]"),
    "birth_date < 2000-01-01": (
        'birth_date < d"2000-01-01"',
        'p.birth_date < timestamp("2000-01-01T00:00:00Z")',
    ),
    "vip and level or region": (
        'attrs&.vip == true and level >= 3 or region == "sh"',
        'p.attrs.vip == true && p.level >= 3 || p.region == "sh"',
    ),
}

Evaluate = Callable[[Mapping[str, Any]], bool]
Compile = Callable[[str], Evaluate]


def _timestamps(facts: Mapping[str, Any]) -> dict[str, Any]:
    """CEL has timestamps, not dates: a date as midnight UTC."""
    return {
        k: datetime(v.year, v.month, v.day, tzinfo=UTC) if isinstance(v, date) else v
        for k, v in facts.items()
    }


def rule_engine_compiler() -> Compile:
    import rule_engine

    context = rule_engine.Context(default_value=None)

    def compile_(text: str) -> Evaluate:
        rule = rule_engine.Rule(text, context=context)

        def evaluate(facts: Mapping[str, Any]) -> bool:
            try:
                return bool(rule.matches(facts))
            except rule_engine.EngineError:
                return False

        return evaluate

    return compile_


def cel_python_compiler() -> Compile:
    import celpy

    env = celpy.Environment()

    def compile_(text: str) -> Evaluate:
        program = env.program(env.compile(text))

        def evaluate(facts: Mapping[str, Any]) -> bool:
            try:
                result = program.evaluate({"p": celpy.json_to_cel(_timestamps(facts))})
            except celpy.CELEvalError:  # a missing key or a type mismatch: no match
                return False
            return isinstance(result, celpy.celtypes.BoolType) and bool(result)

        return evaluate

    return compile_


def cel_rust_compiler() -> Compile:
    import cel

    def compile_(text: str) -> Evaluate:
        program = cel.compile(text)

        def evaluate(facts: Mapping[str, Any]) -> bool:
            try:
                return program.execute({"p": _timestamps(facts)}) is True
            except Exception:  # a missing key or a type mismatch: no match
                return False

        return evaluate

    return compile_


def best_rate(run: Callable[[], None], count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def measure(name: str, make: Callable[[], Compile], evaluations: int, repeat: int) -> None:
    compile_ = make()
    column = 1 if name == "rule-engine" else 2
    texts = [pair[column - 1] for pair in CONDITIONS.values()]
    rounds = max(1, 200 // len(texts))
    compiles = best_rate(lambda: [compile_(t) for t in texts * rounds], len(texts) * rounds, repeat)
    programs = [compile_(t) for t in texts]
    rows = [facts(p, TODAY) for p in PROFILES]
    answers = [[program(f) for f in rows] for program in programs]
    per_condition = max(1, evaluations // (len(rows) * len(programs)))

    def evaluate_all() -> None:
        for program in programs:
            for _ in range(per_condition):
                for f in rows:
                    program(f)

    count = per_condition * len(rows) * len(programs)
    evaluates = best_rate(evaluate_all, count, repeat)
    print(f"{name:<28} {compiles:>12,.0f} {evaluates:>14,.0f}   {answers}")


class _Store:
    """The tags of the board's measure, in memory: after the first read, holds reads none."""

    def __init__(self, tags: dict[str, Any]) -> None:
        self.tags = tags

    async def version(self) -> int:
        return 1

    async def load(self) -> Any:
        from raffle.service.ports.tags import StoredTags

        return StoredTags(1, self.tags, dict.fromkeys(self.tags, 1))

    async def members(self, name: str) -> frozenset[str]:
        return frozenset({"u2", "u9"})


def measure_board(evaluations: int, repeat: int) -> None:
    """Audience.holds as the draw asks it: facts, a static tag's members, then a condition
    referring to it, compiled once (raffle.service.audience.TagBoard)."""
    import asyncio

    from raffle.adapters.switch_news import PolledSwitchNews
    from raffle.adapters.tag_language import RuleEngineLanguage
    from raffle.domain.tags import Tag, TagKind
    from raffle.service.audience import TagBoard

    condition = 'tags["beta"] or (age > 50 and attrs&["vip"] == true)'
    tags = {
        "beta": Tag("beta", TagKind.STATIC),
        "target": Tag("target", TagKind.DYNAMIC, condition),
    }
    board = TagBoard(_Store(tags), PolledSwitchNews(), RuleEngineLanguage())  # type: ignore[arg-type]

    async def run() -> float:
        await board.refresh()
        answers = [await board.holds("target", p, TODAY) for p in PROFILES]
        assert answers == [True, True, False, False], answers
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(evaluations // len(PROFILES)):
                for p in PROFILES:
                    await board.holds("target", p, TODAY)
            best = min(best, time.perf_counter() - start)
        return (evaluations // len(PROFILES)) * len(PROFILES) / best

    print(f"{'TagBoard.holds (2 tags)':<28} {'':>12} {asyncio.run(run()):>14,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evaluations", type=int, default=48_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'library':<28} {'compiles/s':>12} {'evaluations/s':>14}   answers per condition")
    for name, make in (
        ("rule-engine", rule_engine_compiler),
        ("cel-python", cel_python_compiler),
        ("common-expression-language", cel_rust_compiler),
    ):
        try:
            measure(name, make, args.evaluations, args.repeat)
        except ImportError:
            print(f"{name:<28} not installed")
    measure_board(args.evaluations, args.repeat)


if __name__ == "__main__":
    main()
