"""The tag language: rule-engine's expressions, compiled once, typed by the facts they name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC

import rule_engine

from raffle.domain.tags import FIELDS, MalformedCondition, blanked, position
from raffle.service.ports.tags import Predicate

_TYPES = {
    "text": rule_engine.DataType.STRING,
    "number": rule_engine.DataType.FLOAT,
    "date": rule_engine.DataType.DATETIME,
    "map": rule_engine.DataType.MAPPING,
}


class RuleEngineLanguage:
    """Conditions in rule-engine's grammar. Every name must be a known fact and every
    comparison must fit the facts' types, or the condition is refused at save; a fact a
    profile lacks is null. Dates are compared in UTC, so a date means the same day in
    every process whatever its local zone."""

    def __init__(self) -> None:
        self._context = rule_engine.Context(
            type_resolver=rule_engine.type_resolver_from_dict(
                {name: _TYPES[kind] for name, kind in FIELDS.items()}
            ),
            default_value=None,
            default_timezone=UTC,
            mapping_attribute_lookup=False,  # `attrs.x` goes in rule-engine 6: `attrs&["x"]`
        )

    def compile(self, condition: str) -> Predicate:
        try:
            rule = rule_engine.Rule(condition, context=self._context)
        except rule_engine.RuleSyntaxError as error:
            # The token's own line number counts on across rules: the offset is exact.
            token = error.token
            found = "unexpected end" if token is None else f"unexpected {token.value!r}"
            offset = len(condition) if token is None else token.lexpos
            raise MalformedCondition(found, *position(condition, offset)) from None
        except rule_engine.SymbolResolutionError as error:
            raise MalformedCondition(
                f"unknown name {error.symbol_name!r}: one of {', '.join(FIELDS)}",
                *_where(condition, error.symbol_name),
            ) from None
        except rule_engine.EngineError as error:  # a type mismatch, a bad regex or date
            raise MalformedCondition(error.message, 1, 1) from None

        def holds(facts: Mapping[str, object]) -> bool:
            try:
                return bool(rule.matches(facts))
            except rule_engine.EngineError:  # a wrong type met in a profile: no match
                return False

        return holds


def _where(condition: str, name: str) -> tuple[int, int]:
    found = re.search(rf"\b{re.escape(name)}\b", blanked(condition))
    return position(condition, found.start() if found else 0)
