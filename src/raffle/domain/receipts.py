"""A draw's receipt: what went into it, what came out, and how anyone recomputes it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from raffle.domain.awards import Award
from raffle.domain.engine import DrawEngine, Outcome
from raffle.domain.errors import RaffleError
from raffle.domain.fairness import (
    HmacStream,
    ServerSeed,
    canonical,
    commitment,
    hmac_sha256,
)
from raffle.domain.rules import LISTED, DrawContext, parse_listed
from raffle.domain.strategy import Strategy

CAP = "cap"  # a trail step: a cap refused the prize, the fallback was handed out (its rule)
OUT = "out"  # a trail step: the prize's stock ran out as it was taken
# Seals kept per seed (ServerSeed.seals) before they are dropped: a bound on memory, as every
# player's client seed has one.
KEPT_SEALS = 10_000


class BadReceipt(RaffleError):
    code = "bad_receipt"


@dataclass(frozen=True, slots=True)
class Trail:
    """What the engine knew beyond the odds, as the draw went: the prizes it knew to be out
    of stock when it began, and each later turn, in order: a cap refusing the prize
    `[CAP, rule]`, or a prize found out of stock `[OUT, award, exhausted then]`."""

    exhausted: tuple[int, ...] = ()
    steps: tuple[tuple[Any, ...], ...] = ()

    def to_json(self) -> dict[str, Any]:
        steps = [[list(x) if isinstance(x, tuple) else x for x in s] for s in self.steps]
        return {"exhausted": list(self.exhausted), "steps": steps}

    @classmethod
    def from_json(cls, data: Any) -> Trail:
        if not isinstance(data, dict):
            raise BadReceipt("the trail is an object")
        return cls(
            tuple(int(a) for a in data.get("exhausted", ())),
            tuple(
                tuple(tuple(x) if isinstance(x, list) else x for x in s)
                for s in data.get("steps", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class Receipt:
    """Everything a draw's outcome follows from, but the server seed (revealed when its
    period ends) and the odds (published: `odds_hash` pins which). `seals` holds an HMAC of
    each field under the period's seed: nobody can forge one before the reveal, and after it
    the verifier names the field that differs from what the server issued."""

    activity_id: int
    period: int
    order_id: str
    nonce: int  # the user's draw number in the activity: the rules' draw count too
    client_seed: str
    commitment: str
    odds_hash: str
    listed: bool  # whether the user was in the strategy's listed group
    trail: Trail
    award_id: int
    points: int | None
    rule: str
    seals: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        data = {f: _plain(getattr(self, f)) for f in FIELDS}
        data["seals"] = dict(self.seals)
        return data

    @classmethod
    def from_json(cls, data: Any) -> Receipt:
        if not isinstance(data, dict):
            raise BadReceipt("a receipt is a JSON object")
        missing = [f.name for f in fields(cls) if f.name not in data]
        if missing:
            raise BadReceipt(f"the receipt has no {', '.join(missing)}")
        try:
            return cls(
                int(data["activity_id"]),
                int(data["period"]),
                str(data["order_id"]),
                int(data["nonce"]),
                str(data["client_seed"]),
                str(data["commitment"]),
                str(data["odds_hash"]),
                bool(data["listed"]),
                Trail.from_json(data["trail"]),
                int(data["award_id"]),
                None if data["points"] is None else int(data["points"]),
                str(data["rule"]),
                {str(k): str(v) for k, v in dict(data["seals"]).items()},
            )
        except (TypeError, ValueError) as error:
            raise BadReceipt(f"the receipt does not read: {error}") from None


FIELDS = tuple(f.name for f in fields(Receipt) if f.name != "seals")
# The inputs the outcome is computed from: a change in one changes the whole stream, so each
# is sealed to be named. The commitment, the odds' hash and the outcome are checked directly.
SEALED = ("activity_id", "period", "order_id", "nonce", "client_seed", "listed", "trail")


def _plain(value: Any) -> Any:
    return value.to_json() if isinstance(value, Trail) else value


def seal(seed: bytes, name: str, value: Any) -> str:
    """HMAC-SHA256(seed, "name=" + the value as canonical JSON), its first 16 bytes in hex."""
    return hmac_sha256(seed, name.encode() + b"=" + _json(value)).hex()[:32]


def _json(value: Any) -> bytes:
    """canonical(value), quicker for the scalars every draw seals."""
    if value is None or isinstance(value, bool):
        return b"null" if value is None else (b"true" if value else b"false")
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, str) and value.isascii() and value.isalnum():
        return b'"' + value.encode() + b'"'
    if isinstance(value, Trail):
        try:
            return trail_text(value).encode()
        except TypeError:  # unhashable: a receipt's trail may hold what no draw writes
            pass
    return canonical(_plain(value))


@lru_cache(maxsize=256)
def trail_text(trail: Trail) -> str:
    """canonical(trail.to_json()): draws in one state of the stock share their trail."""
    return canonical(trail.to_json()).decode()


def sealed(seed: bytes, **values: Any) -> Receipt:
    """A receipt of `values` (every field but the seals), its inputs sealed under `seed`."""
    seals = {name: seal(seed, name, values[name]) for name in SEALED}
    return Receipt(**values, seals=seals)


def replay(
    receipt: Receipt, seed: bytes, strategy: Strategy, awards: Mapping[int, Award], perfect: bool
) -> Outcome:
    """The outcome the receipt's inputs give: the draw run again on its own stream, with
    what the engine knew at each turn (its trail)."""
    trail = receipt.trail
    rng = HmacStream(seed, receipt.client_seed, receipt.order_id, receipt.nonce)
    ctx = DrawContext(_listed_user(strategy) if receipt.listed else "", receipt.nonce)
    engine = DrawEngine(strategy, awards, trail.exhausted, perfect=perfect)
    outcome = engine.choose(ctx, rng)
    for step in trail.steps:
        if step and step[0] == CAP and len(step) == 2:
            outcome = engine.fallback(rng, str(step[1]))
        elif step and step[0] == OUT and len(step) == 3 and step[1] == outcome.award_id:
            known = frozenset(int(a) for a in step[2]) - {outcome.award_id}
            engine = DrawEngine(strategy, awards, known, perfect=perfect)
            outcome = engine.on_exhausted(outcome, ctx, rng)
        else:
            raise BadReceipt(f"trail step {list(step)} does not follow from the draw")
    return outcome


def differences(
    receipt: Receipt,
    seed: bytes,
    strategy: Strategy,
    awards: Mapping[int, Award],
    perfect: bool,
    odds: str,
) -> list[str]:
    """The receipt's fields that differ from what the server issued, or from what the
    revealed `seed` and the published odds (hash `odds`) give; empty: it matches."""
    named = [n for n in SEALED if receipt.seals.get(n) != seal(seed, n, getattr(receipt, n))]
    if commitment(seed) != receipt.commitment and "commitment" not in named:
        named.append("commitment")
    if receipt.odds_hash != odds and "odds_hash" not in named:
        named.append("odds_hash")
    if named:
        return named
    try:
        outcome = replay(receipt, seed, strategy, awards, perfect)
    except BadReceipt:
        return ["trail"]
    return [
        name
        for name, mine in (
            ("award_id", outcome.award_id), ("points", outcome.points), ("rule", outcome.rule)
        )
        if getattr(receipt, name) != mine
    ]  # fmt: skip


def _listed_user(strategy: Strategy) -> str:
    """A member of the strategy's listed group, to replay a listed user's draw with."""
    for name, value in strategy.rules:
        if name == LISTED:
            return min(parse_listed(value)[1])
    return ""


@dataclass(frozen=True, slots=True)
class Proof:
    """What an order keeps for its receipt beyond the order and its win (RaffleOrder.proof)."""

    period: int
    client_seed: str
    listed: bool
    trail: Trail

    def to_text(self) -> str:
        """Canonical JSON (sorted keys: c, l, p, t), written by hand: every draw writes one."""
        listed = ',"l":1' if self.listed else ""
        trail = self.trail
        shown = f',"t":{trail_text(trail)}' if trail.exhausted or trail.steps else ""
        return f'{{"c":{encode_basestring(self.client_seed)}{listed},"p":{self.period}{shown}}}'

    @classmethod
    def from_text(cls, text: str) -> Proof:
        data = json.loads(text)
        trail = Trail.from_json(data["t"]) if "t" in data else Trail()
        return cls(int(data["p"]), str(data["c"]), bool(data.get("l")), trail)


def issued(
    seed: ServerSeed,
    odds: str,
    proof: Proof,
    order_id: str,
    nonce: int,
    outcome: Outcome,
) -> Receipt:
    """The receipt of a draw, sealed under its period's seed. Only the order id is new to
    every draw: the seals of the other inputs are made once per seed and kept with it."""
    seals = {
        "activity_id": _kept(seed, "activity_id", seed.activity_id),
        "period": _kept(seed, "period", seed.period),
        "order_id": seal(seed.secret, "order_id", order_id),
        "nonce": _kept(seed, "nonce", nonce),
        "client_seed": _kept(seed, "client_seed", proof.client_seed),
        "listed": _kept(seed, "listed", proof.listed),
        "trail": _kept(seed, "trail", proof.trail),
    }
    return Receipt(
        seed.activity_id, seed.period, order_id, nonce, proof.client_seed, seed.commitment, odds,
        proof.listed, proof.trail, outcome.award_id, outcome.points, outcome.rule, seals,
    )  # fmt: skip


def _kept(seed: ServerSeed, name: str, value: Any) -> str:
    """seal(seed, name, value), made once per seed and value."""
    found = seed.seals.get((name, value))
    if found is None:
        if len(seed.seals) >= KEPT_SEALS:
            seed.seals.clear()
        found = seed.seals[name, value] = seal(seed.secret, name, value)
    return found
