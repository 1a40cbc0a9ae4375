"""A campaign: the awards and strategies an operator publishes together, checked as a whole."""

from __future__ import annotations

from dataclasses import dataclass

from raffle.domain.awards import Award
from raffle.domain.engine import DrawEngine
from raffle.domain.errors import InvalidConfig
from raffle.domain.strategy import Strategy


@dataclass(frozen=True, slots=True)
class Campaign:
    awards: tuple[Award, ...]
    strategies: tuple[Strategy, ...]

    def problems(self) -> list[InvalidConfig]:
        """Everything wrong across the campaign, each located by its path; empty when valid."""
        found = _duplicates("awards", [a.id for a in self.awards])
        found += _duplicates("strategies", [s.id for s in self.strategies])
        catalogue = {a.id: a for a in self.awards}
        for i, strategy in enumerate(self.strategies):
            try:
                DrawEngine(strategy, catalogue)
            except InvalidConfig as error:
                found.append(error.at("strategies", i))
        return found

    def engines(self) -> dict[int, DrawEngine]:
        catalogue = {a.id: a for a in self.awards}
        return {s.id: DrawEngine(s, catalogue) for s in self.strategies}


def _duplicates(section: str, ids: list[int]) -> list[InvalidConfig]:
    seen: set[int] = set()
    found = []
    for i, id_ in enumerate(ids):
        if id_ in seen:
            found.append(InvalidConfig(f"id {id_} is used twice", (section, i, "id")))
        seen.add(id_)
    return found
