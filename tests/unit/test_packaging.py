"""`pip install .` with no extras brings the service's dependencies only: no test tool, no
linter, no scipy, not even through a dependency of a dependency."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, requires

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

NOT_AT_RUN_TIME = {"pytest", "ruff", "mypy", "hypothesis", "playwright", "scipy", "import-linter"}


def _needed(name: str, extras: frozenset[str] = frozenset()) -> list[Requirement]:
    """What installing `name[extras]` brings directly (markers evaluated for this machine)."""
    found = []
    for line in requires(name) or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in {"", *extras}):
            found.append(requirement)
    return found


def _runtime_closure() -> set[str]:
    seen: set[str] = set()
    todo = [(canonicalize_name(r.name), frozenset(r.extras)) for r in _needed("raffle")]
    while todo:
        name, extras = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [
                (canonicalize_name(r.name), frozenset(r.extras)) for r in _needed(name, extras)
            ]
        except PackageNotFoundError:  # a dependency for another platform's markers
            continue
    return seen


def test_the_installed_distribution_requires_no_tool_without_extras() -> None:
    direct = {canonicalize_name(r.name) for r in _needed("raffle")}
    assert "fastapi" in direct
    assert "rich" in direct
    assert not direct & NOT_AT_RUN_TIME


def test_nor_does_anything_it_requires() -> None:
    closure = _runtime_closure()
    assert {"sqlalchemy", "uvicorn", "redis", "pydantic"} <= closure
    assert not closure & NOT_AT_RUN_TIME


def test_the_tools_and_scipy_come_with_the_extras() -> None:
    dev = {canonicalize_name(r.name) for r in _needed("raffle", frozenset({"dev"}))}
    stats = {canonicalize_name(r.name) for r in _needed("raffle", frozenset({"stats"}))}
    assert {"pytest", "ruff", "mypy", "hypothesis", "playwright"} <= dev
    assert "scipy" in stats
