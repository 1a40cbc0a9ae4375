"""The HTTP shapes of requests and answers (the third shape of a concept, at most)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from json.encoder import encode_basestring as _json_string
from typing import Literal

from pydantic import BaseModel, Field

from raffle.domain.activity import Activity
from raffle.domain.awards import Award
from raffle.domain.caps import Cap, Caps
from raffle.domain.disclosure import DisclosedRule, ListedGroup
from raffle.domain.draws import WinState
from raffle.domain.quota import QuotaAccount
from raffle.domain.receipts import Receipt, trail_text
from raffle.entrypoints.http import examples
from raffle.entrypoints.http.bounds import Id, UserId
from raffle.entrypoints.http.claim_schemas import ClaimTermsOut
from raffle.entrypoints.http.examples import examples_of
from raffle.entrypoints.http.fairness_schemas import ReceiptOut
from raffle.entrypoints.http.participation_schemas import PersonCapsIO
from raffle.entrypoints.http.prize_pool_schemas import CardOut
from raffle.entrypoints.http.prize_schemas import DeliveryOut
from raffle.entrypoints.http.scheduled_schemas import ScheduleOut
from raffle.service.activities import PublishedOdds, PublishedPrize
from raffle.service.cap_counts import CapDrift
from raffle.service.draw import DrawResult
from raffle.service.reconcile import PrizeDrift
from raffle.service.wins import WonPrize


class Credentials(BaseModel):
    model_config = examples_of(examples.CREDENTIALS)

    name: str = Field(min_length=1, max_length=64, examples=["alice"])
    password: str = Field(min_length=1, max_length=1024)


class Registration(Credentials):
    model_config = examples_of(examples.REGISTRATION)

    phone: str | None = Field(
        None, min_length=1, max_length=32, description="Optional; kept on the profile."
    )


class UserOut(BaseModel):
    model_config = examples_of(examples.USER)

    id: str
    is_admin: bool


class LoginOut(BaseModel):
    model_config = examples_of(examples.LOGIN)

    token: str
    expires_at: datetime
    user: UserOut


class CapsOut(BaseModel):
    """An activity's caps, published with its odds and frozen with them."""

    model_config = examples_of(examples.CAPS)

    award_num_limit: int | None = Field(
        description="Total winners: once this many draws won a real prize, every later draw "
        "gets the fallback prize (rule `cap`). Null: no cap."
    )
    join_people_total_limit: int | None = Field(
        description="Total participants: a user's first draw beyond it is refused "
        "(`activity_full`); users already in keep drawing. Null: no cap."
    )
    perfect_activity: bool = Field(
        description="100 % win: every draw wins a real prize while stock lasts; the misses "
        "are not drawn and each prize's `perfect_chance` is its chance."
    )

    @classmethod
    def of(cls, c: Caps) -> CapsOut:
        return cls(
            award_num_limit=c.winners, join_people_total_limit=c.participants,
            perfect_activity=c.perfect,
        )  # fmt: skip


class ActivityOut(BaseModel):
    model_config = examples_of(examples.ACTIVITY)

    id: int
    name: str
    description: str
    state: str
    begin_at: datetime
    end_at: datetime
    time_zone: str
    strategy_id: int
    caps: CapsOut
    join_code_required: bool = Field(
        description="A draw needs a join code the player redeemed (POST …/join-code)."
    )
    show_winning_list: str = Field(
        default="hidden",
        description="How the player page shows the winners' feed: `hidden` (and the feed "
        "answers 404 `feed_hidden`), `ticker` (one line) or `tiled`.",
    )
    queued: bool = Field(
        default=False,
        description="A draw is answered `202` with a ticket, drawn in acceptance order "
        "(GET …/tickets/{ticket}).",
    )
    kind: str = Field(
        default="instant",
        description="`instant` (draws until the prizes run out) or `scheduled` (entries until "
        "the cutoff, winners picked at the draw time: `schedule`).",
    )
    schedule: ScheduleOut | None = None

    @classmethod
    def of(cls, a: Activity) -> ActivityOut:
        return cls(
            id=a.id, name=a.name, description=a.description, state=a.state.value,
            begin_at=a.begin_at, end_at=a.end_at, time_zone=a.time_zone, strategy_id=a.strategy_id,
            caps=CapsOut.of(a.caps), join_code_required=a.join_code_required,
            show_winning_list=a.winners_feed.value, queued=a.queued, kind=a.kind.value,
            schedule=None if a.schedule is None else ScheduleOut.of(a.schedule),
        )  # fmt: skip


class PrizeOut(BaseModel):
    model_config = examples_of(examples.PRIZE)

    award_id: int
    title: str
    rate: str = Field(description="The configured probability, an exact decimal.")
    stock: int | None = Field(description="Units in all; null: unlimited.")
    stock_left: int | None
    lock_after: int | None = Field(description="The draw count from which it can be won.")
    perfect_chance: str | None = Field(
        default=None,
        description="In a 100 % win activity: its chance now, an exact fraction (the real "
        "prizes' rates renormalised over those with stock left); null in any other.",
    )
    claim: ClaimTermsOut | None = Field(
        default=None,
        description="Once won: how long it may be claimed and what the profile needs first; "
        "null: no terms.",
    )
    card: CardOut | None = Field(default=None, description="How the board shows it.")

    @classmethod
    def of(cls, p: PublishedPrize) -> PrizeOut:
        chance = None if p.perfect_chance is None else str(p.perfect_chance)
        return cls(
            award_id=p.award_id, title=p.title, rate=p.rate, stock=p.stock,
            stock_left=p.stock_left, lock_after=p.lock_after, perfect_chance=chance,
            claim=ClaimTermsOut.of(p.claim),
            card=CardOut.of(p.card),
        )  # fmt: skip


class TierOut(BaseModel):
    model_config = examples_of(examples.TIER)

    threshold: int
    award_ids: list[int]


class ChanceOut(BaseModel):
    model_config = examples_of(examples.CHANCE)

    award_id: int
    chance: str = Field(description="An exact fraction, e.g. `2/3`.")


class RuleOut(BaseModel):
    """A rule that changes outcomes, published with the odds and frozen with them."""

    model_config = examples_of(examples.RULE)

    rule: Literal["listed", "guarantee"] = Field(
        description="`listed`: a group of listed users gets only the named award on every "
        "draw. `guarantee`: a user's `draw`th draw in the activity wins one of `award_ids`. "
        "Rules run in this list's order; the first that applies decides."
    )
    award_ids: list[int]
    titles: list[str] = Field(description="The awards' titles, in the order of `award_ids`.")
    users: int | None = Field(
        default=None, description="`listed`: how many users are listed (never who)."
    )
    draw: int | None = Field(
        default=None,
        description="`guarantee`: the user's draw number in the activity, this draw counted.",
    )
    level: int | None = Field(
        default=None,
        description="`guarantee` by level: the draw wins a prize of this level or better "
        "(1 is 一等奖); `award_ids` are those prizes, fixed while the activity runs.",
    )
    chances: list[ChanceOut] = Field(
        default_factory=list,
        description="`guarantee`: each prize's exact chance on that draw (rates renormalised "
        "over the guaranteed prizes with stock left).",
    )
    in_force: bool = Field(
        description="`listed`: the award has stock left (without, the fallback). "
        "`guarantee`: one of its prizes has stock left (without, that draw is an ordinary one)."
    )
    text: str = Field(description="The rule in English words.")

    @classmethod
    def of(cls, r: DisclosedRule, titles: Mapping[int, str], fallback: str) -> RuleOut:
        ids = sorted(r.award_ids)
        named = [titles.get(a, f"award {a}") for a in ids]
        if isinstance(r, ListedGroup):
            return cls(
                rule="listed", award_ids=ids, titles=named, users=r.users, in_force=r.in_force,
                text=f"{r.users} listed users get only {named[0]} on every draw "
                f"({fallback} once it is locked or gone).",
            )  # fmt: skip
        promise = "" if r.level is None else f" a prize of level {r.level} or better,"
        return cls(
            rule="guarantee", award_ids=ids, titles=named, draw=r.draw, level=r.level,
            in_force=r.in_force,
            chances=[ChanceOut(award_id=a, chance=str(c)) for a, c in sorted(r.chances.items())],
            text=f"A user's draw {r.draw} in this activity wins{promise} one of: "
            f"{', '.join(named)}"
            + ("." if r.in_force else " (none is left now: that draw is an ordinary one)."),
        )  # fmt: skip


class OddsOut(BaseModel):
    model_config = examples_of(examples.ODDS)

    activity: ActivityOut
    exhaustion: str
    prizes: list[PrizeOut]
    fallback_award_id: int
    fallback_rate: str
    fallback_title: str = Field(description="What the fallback (luck) prize is called.")
    weight_tiers: list[TierOut]
    per_person_caps: PersonCapsIO = Field(
        default_factory=PersonCapsIO,
        description="Per person in the activity: a win these caps stop is the fallback.",
    )
    winners_left: int | None = Field(
        default=None, description="Winners the activity's `award_num_limit` still allows."
    )
    participants_left: int | None = Field(
        default=None, description="New participants its `join_people_total_limit` still takes."
    )
    rules: list[RuleOut] = Field(
        default_factory=list,
        description="Listed users and guarantees: every rule that changes an outcome "
        "besides the weight tiers, locks and caps above.",
    )

    @classmethod
    def of(cls, o: PublishedOdds) -> OddsOut:
        titles = {p.award_id: p.title for p in o.prizes} | o.titles
        return cls(
            activity=ActivityOut.of(o.activity),
            exhaustion=o.strategy.exhaustion.value,
            prizes=[PrizeOut.of(p) for p in o.prizes],
            fallback_award_id=o.fallback_award_id,
            fallback_rate=o.fallback_rate,
            fallback_title=o.fallback_title,
            weight_tiers=[
                TierOut(threshold=t, award_ids=sorted(a)) for t, a in sorted(o.weight_tiers.items())
            ],
            per_person_caps=PersonCapsIO.of(o.person_caps),
            winners_left=o.caps_left.get(Cap.WINNERS),
            participants_left=o.caps_left.get(Cap.PARTICIPANTS),
            rules=[RuleOut.of(r, titles, o.fallback_title) for r in o.rules],
        )


class AccountOut(BaseModel):
    model_config = examples_of(examples.ACCOUNT)

    activity_id: int
    total: int
    total_left: int
    day_left: int
    month_left: int
    chances: int = Field(description="Draws possible now: the tightest of the three limits.")
    draws: int

    @classmethod
    def of(cls, a: QuotaAccount) -> AccountOut:
        return cls(
            activity_id=a.activity_id, total=a.total, total_left=a.total_left,
            day_left=a.day_left, month_left=a.month_left, chances=a.chances, draws=a.draws,
        )  # fmt: skip


class MyPrizeOut(PrizeOut):
    model_config = examples_of(examples.MY_PRIZE)

    draws_to_unlock: int = Field(description="Draws to make before one that can win it.")


class MyTierOut(TierOut):
    model_config = examples_of(examples.MY_TIER)

    draws_to_reach: int


class MyPrizesOut(BaseModel):
    model_config = examples_of(examples.MY_PRIZES)

    account: AccountOut
    prizes: list[MyPrizeOut]
    weight_tiers: list[MyTierOut]


class DrawOut(BaseModel):
    model_config = examples_of(examples.DRAW)

    order_id: str
    activity_id: int
    award_id: int
    award_title: str
    award_kind: str
    points: int | None
    rule: str = Field(
        description="What decided: default, listed, weight, guarantee; lock, stock or a cap "
        "for the fallback."
    )
    draw_count: int
    created_at: datetime
    state: str = Field(
        description="The prize's delivery: create (under way), completed, or failed (operators "
        "are on it)."
    )
    delivery: DeliveryOut | None = Field(
        None, description="What delivery left (a code, content, a shipment); history only."
    )
    card: CardOut | None = Field(
        None, description="The prize's card (level, image); history only, null for the fallback."
    )
    receipt: ReceiptOut | None = Field(
        None,
        description="What the draw can be checked by once its seed is revealed; the draw "
        "only (history: `GET /api/me/draws/{order_id}/receipt`).",
    )

    @classmethod
    def of(cls, r: DrawResult, award: Award) -> DrawOut:
        return cls(
            order_id=r.order_id, activity_id=r.activity_id, award_id=r.award_id,
            award_title=award.title, award_kind=award.kind.value, points=r.points, rule=r.rule,
            draw_count=r.draw_count, created_at=r.created_at, state=WinState.CREATE.value,
            receipt=ReceiptOut.of(r.receipt) if r.receipt else None,
        )  # fmt: skip

    @classmethod
    def of_won(cls, p: WonPrize) -> DrawOut:
        o, w = p.order, p.win
        return cls(
            order_id=o.order_id, activity_id=o.activity_id, award_id=w.award_id,
            award_title=p.award.title, award_kind=p.award.kind.value, points=w.points,
            rule=w.rule, draw_count=o.draw_count, created_at=o.created_at, state=w.state.value,
            delivery=DeliveryOut.of(p), card=CardOut.of(p.card) if p.card else None,
        )  # fmt: skip


def draw_json(r: DrawResult, award: Award) -> str:
    """`DrawOut.of(r, award).model_dump_json()`, byte for byte, without building the model:
    the answer to every draw, the hot route (tests/unit/test_schemas holds the two
    together). Strings go through the json module's C escaping, which pydantic
    matches with non-ASCII left as it is."""
    points = "null" if r.points is None else r.points
    return (
        f'{{"order_id":{_json_string(r.order_id)},"activity_id":{r.activity_id},'
        f'"award_id":{r.award_id},"award_title":{_json_string(award.title)},'
        f'"award_kind":{_json_string(award.kind.value)},"points":{points},'
        f'"rule":{_json_string(r.rule)},"draw_count":{r.draw_count},'
        f'"created_at":"{_iso(r.created_at)}","state":"{WinState.CREATE.value}",'
        f'"delivery":null,"card":null,"receipt":{_receipt_json(r.receipt)}}}'
    )


def _receipt_json(r: Receipt | None) -> str:
    """`ReceiptOut.of(r).model_dump_json()`, byte for byte, written by hand as the rest of
    the draw's answer is (tests/unit/test_schemas holds the two together)."""
    if r is None:
        return "null"
    points = "null" if r.points is None else r.points
    seals = ",".join(f"{_json_string(k)}:{_json_string(v)}" for k, v in r.seals.items())
    return (
        f'{{"activity_id":{r.activity_id},"period":{r.period},'
        f'"order_id":{_json_string(r.order_id)},"nonce":{r.nonce},'
        f'"client_seed":{_json_string(r.client_seed)},"commitment":{_json_string(r.commitment)},'
        f'"odds_hash":{_json_string(r.odds_hash)},"listed":{"true" if r.listed else "false"},'
        f'"trail":{trail_text(r.trail)},"award_id":{r.award_id},"points":{points},'
        f'"rule":{_json_string(r.rule)},"seals":{{{seals}}}}}'
    )


def _iso(at: datetime) -> str:
    """A datetime as pydantic writes it: UTC as Z. Offsets are whole minutes (every zone's)."""
    text = at.isoformat()
    return f"{text[:-6]}Z" if text.endswith("+00:00") else text


class HistoryOut(BaseModel):
    model_config = examples_of(examples.HISTORY)

    draws: list[DrawOut]
    next: str | None = Field(description="Pass as `before` for the next page; null at the end.")


class TopUpIn(BaseModel):
    model_config = examples_of(examples.TOP_UP_IN)

    user_id: UserId
    sku: Id
    out_business_no: str = Field(min_length=1, max_length=64)
    open_account: bool = Field(
        False,
        description="Credit a user id that has no account yet (else 404 `unknown_user`).",
    )


class TopUpOut(BaseModel):
    model_config = examples_of(examples.TOP_UP)

    credited: bool
    account: AccountOut


class LoadedOut(BaseModel):
    model_config = examples_of(examples.LOADED)

    awards: int
    strategies: int
    activities: int
    skus: int
    rebates: int = 0
    codes: int = Field(description="Codes new to their pools.")
    tags: int = 0


class CapDriftOut(BaseModel):
    model_config = examples_of(examples.CAP_DRIFT)

    cap: str = Field(description="`winners` (award_num_limit) or `participants`.")
    limit: int
    claims: int = Field(description="Slots held: by claims where Redis counts, else counted.")
    counted: int = Field(description="What the award rows hold: real wins, or users who drew.")
    leaked: int = Field(description="Slots held by draws that did not commit.")
    over: int = Field(description="Counted beyond the limit: must be 0.")

    @classmethod
    def of(cls, d: CapDrift) -> CapDriftOut:
        return cls(
            cap=d.cap.name.lower(), limit=d.limit, claims=d.claims, counted=d.counted,
            leaked=d.leaked, over=d.over,
        )  # fmt: skip


class PrizeDriftOut(BaseModel):
    model_config = examples_of(examples.DRIFT)

    award_id: int
    stock: int
    claims: int
    wins: int
    left: int | None
    drift: int | None
    leaked: int
    oversold: int

    @classmethod
    def of(cls, p: PrizeDrift) -> PrizeDriftOut:
        return cls(
            award_id=p.award_id, stock=p.stock, claims=p.claims, wins=p.wins, left=p.left,
            drift=p.drift, leaked=p.leaked, oversold=p.oversold,
        )  # fmt: skip
