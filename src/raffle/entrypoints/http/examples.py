"""Examples of the HTTP shapes, from the demo campaign: each model shows its own in the
OpenAPI document (`examples_of`), and every operation carries them (openapi.py)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

Example = dict[str, Any]

WHEN = "2026-11-11T00:00:08.123456Z"
ORDER = "0k9c2q1v7m3x8d4f"

CREDENTIALS: Example = {"name": "alice", "password": "correct horse battery"}
REGISTRATION: Example = {**CREDENTIALS, "phone": "+8613800138000"}
USER: Example = {"id": "alice", "is_admin": False}
STATUS_CHANGE: Example = {
    "status": "locked",
    "reason": "chargebacks on three orders",
    "by": "root",
    "at": "2026-11-25T02:00:00Z",
}
ACCOUNT_STATUS: Example = {**USER, "status": "locked", "changes": [STATUS_CHANGE]}
STATUS_CHANGE_IN: Example = {"reason": "chargebacks on three orders"}
SWITCH: Example = {"name": "activity.100301.draws", "value": "off", "default": "on"}
SWITCH_IN: Example = {"value": "off"}
SWITCH_CHANGE: Example = {
    "version": 7,
    "name": "activity.100301.draws",
    "old": "on",
    "new": "off",
    "actor": "operator",
    "at": WHEN,
}
HEALTH: Example = {"status": "ok"}
READY: Example = {"status": "ready", "services": {"database": "ok", "redis": "ok"}}
UNREADY: Example = {"status": "unready", "services": {"database": "ok", "redis": "down"}}
LOGIN: Example = {"token": "b3V0IG9mIHNpZ2h0LCBvdXQgb2YgbWluZA", "expires_at": WHEN, "user": USER}
CAPS: Example = {
    "award_num_limit": 500,
    "join_people_total_limit": None,
    "perfect_activity": False,
}
ACTIVITY: Example = {
    "id": 100301,
    "name": "双十一抽奖",
    "description": "The demo activity of the embedded default",
    "state": "running",
    "begin_at": "2025-12-31T16:00:00Z",
    "end_at": "2029-12-31T16:00:00Z",
    "time_zone": "Asia/Shanghai",
    "strategy_id": 100006,
    "caps": CAPS,
    "join_code_required": False,
    "show_winning_list": "ticker",
    "queued": False,
}
CLAIM_TERMS: Example = {
    "validity": {"kind": "days", "first": None, "last": None, "days": 7, "later": 0},
    "conditions": ["phone"],
}
CLAIM: Example = {
    "state": "open",
    "valid_from": None,
    "valid_until": "2026-11-17T16:00:00Z",
    "missing": ["phone"],
    "terms": CLAIM_TERMS,
}
CLAIMED: Example = {"order_id": ORDER, "state": "claimed", "coupon_code": "P30-0007"}
PRIZE_IMAGE = "5f8c1bd6a4f3c0b1e7d24a93f0c6e2b8d1a7f4c39e0b5d2a6c8f1e3b7d9a0c4e"
CARD: Example = {
    "level": 1,
    "level_name": "一等奖",
    "image": PRIZE_IMAGE,
    "image_url": f"/api/prize-images/{PRIZE_IMAGE}",
    "description": "iPhone 17 Pro, 256 GB",
    "win_tips": "We will ask for your address within three days",
    "priority": 1,
    "cell": 2,
    "value_cents": 899900,
}
FEED_WIN: Example = {"winner": "a***e", "award_id": 103, "title": "AirPods", "won_at": WHEN}
FEED: Example = {
    "display": "ticker",
    "wins": [FEED_WIN],
    "next": "MDE5YTJiM2M0ZDVlNmY3MDgxOTJhM2I0LjM",
    "newer": "MDE5YTJiM2M0ZDVlNmY3MDgxOTJhM2I0LjM",
}
PRIZE: Example = {
    "award_id": 109,
    "title": "iPhone",
    "rate": "0.0001",
    "stock": 10,
    "stock_left": 9,
    "lock_after": 3,
    "perfect_chance": None,
    "claim": CLAIM_TERMS,
    "card": CARD,
}
TIER: Example = {"threshold": 60, "award_ids": [102, 103, 104, 105]}
CHANCE: Example = {"award_id": 109, "chance": "1/3"}
RULE: Example = {
    "rule": "guarantee",
    "award_ids": [108, 109],
    "titles": ["付费课程一门", "iPhone"],
    "users": None,
    "draw": 10,
    "level": 2,
    "chances": [{"award_id": 108, "chance": "99/100"}, {"award_id": 109, "chance": "1/100"}],
    "in_force": True,
    "text": "A user's draw 10 in this activity wins a prize of level 2 or better, one of: "
    "付费课程一门, iPhone.",
}
LISTED_RULE: Example = {
    "rule": "listed",
    "award_ids": [100],
    "titles": ["1 积分"],
    "users": 3,
    "draw": None,
    "level": None,
    "chances": [],
    "in_force": True,
    "text": "3 listed users get only 1 积分 on every draw (随机积分 once it is locked or gone).",
}
ODDS: Example = {
    "activity": ACTIVITY,
    "exhaustion": "fallback",
    "prizes": [PRIZE],
    "fallback_award_id": 101,
    "fallback_rate": "0",
    "fallback_title": "随机积分",
    "weight_tiers": [TIER],
    "per_person_caps": {"wins": {"count": 1, "period": "day"}, "once_per_prize": True},
    "winners_left": 417,
    "participants_left": None,
    "rules": [LISTED_RULE, RULE],
}
ACCOUNT: Example = {
    "activity_id": 100301,
    "total": 10,
    "total_left": 7,
    "day_left": 0,
    "month_left": 7,
    "chances": 0,
    "draws": 3,
}
MY_PRIZE: Example = {**PRIZE, "draws_to_unlock": 0}
MY_TIER: Example = {**TIER, "draws_to_reach": 57}
MY_PRIZES: Example = {"account": ACCOUNT, "prizes": [MY_PRIZE], "weight_tiers": [MY_TIER]}
ADDRESS: Example = {
    "name": "张三",
    "phone": "138 0013 8000",
    "region": "浙江省杭州市西湖区",
    "line": "文三路 100 号 2 幢 301",
    "postcode": "310012",
}
SHIPMENT: Example = {
    "order_id": ORDER,
    "user_id": "alice",
    "award_id": 105,
    "state": "ready",
    "address": ADDRESS,
    "tracking": None,
    "created_at": WHEN,
    "updated_at": WHEN,
}
DELIVERY: Example = {
    "coupon_code": None,
    "content_id": None,
    "shipment": SHIPMENT,
    "claim": CLAIM,
}
DRAW: Example = {
    "order_id": ORDER,
    "activity_id": 100301,
    "award_id": 105,
    "award_title": "小米台灯",
    "award_kind": "physical",
    "points": None,
    "rule": "default",
    "draw_count": 1,
    "created_at": WHEN,
    "state": "create",
    "delivery": None,
}
TICKET: Example = {
    "ticket": "t3f9c2a7d41b84e06a5c1d2e3f4a5b6c7",
    "activity_id": 100301,
    "state": "queued",
    "position": 42,
    "accepted_at": WHEN,
}
HISTORY: Example = {"draws": [{**DRAW, "state": "completed", "delivery": DELIVERY}], "next": None}
TOP_UP_IN: Example = {"user_id": "alice", "sku": 9011, "out_business_no": "pay-20261111-0001"}
TOP_UP: Example = {"credited": True, "account": {**ACCOUNT, "total": 15, "total_left": 12}}
LOADED: Example = {
    "awards": 10,
    "strategies": 1,
    "activities": 1,
    "skus": 3,
    "rebates": 1,
    "codes": 60,
}
DRIFT: Example = {
    "award_id": 109,
    "stock": 10,
    "claims": 1,
    "wins": 1,
    "left": 9,
    "drift": 0,
    "leaked": 0,
    "oversold": 0,
}
CAP_DRIFT: Example = {
    "cap": "winners",
    "limit": 500,
    "claims": 83,
    "counted": 83,
    "leaked": 0,
    "over": 0,
}
MINUTE: Example = {"minute": "2026-11-11T00:00:00Z", "draws": 42}
POINTS_ORDER: Example = {
    "order_id": ORDER,
    "kind": "earn",
    "amount": 37,
    "out_business_no": ORDER,
    "reason": "prize",
    "created_at": WHEN,
}
BALANCE: Example = {"total": 137, "available": 37}
POINTS: Example = {"balance": BALANCE, "orders": [POINTS_ORDER], "next": None}
EXCHANGE_IN: Example = {"sku": 9011}
EXCHANGE: Example = {
    "exchanged": True,
    "order": {**POINTS_ORDER, "kind": "spend", "amount": 100, "reason": "exchange"},
    "balance": BALANCE,
    "account": ACCOUNT,
}
REBATE: Example = {
    "order_id": ORDER,
    "activity_id": 100301,
    "behaviour": "sign_in",
    "business_key": "2026-11-11",
    "sku": 9011,
    "points": 10,
    "created_at": WHEN,
}
SIGN_IN: Example = {"granted": True, "day": "2026-11-11", "streak": 3, "rebate": REBATE}
SIGN_INS: Example = {
    "month": "2026-11",
    "days": [9, 10, 11],
    "today": "2026-11-11",
    "signed_today": True,
    "streak": 3,
}
BEHAVIOUR_IN: Example = {
    "user_id": "alice",
    "activity_id": 100301,
    "behaviour": "share",
    "business_key": "share-20261111-0001",
}
BEHAVIOUR: Example = {
    "granted": True,
    "rebate": {**REBATE, "behaviour": "share", "business_key": "share-20261111-0001"},
}
SKU: Example = {
    "sku": 9011,
    "activity_id": 100301,
    "total": 5,
    "day": 5,
    "month": 5,
    "price_points": 100,
    "stock": 100000,
    "stock_left": 99997,
}
GRANT: Example = {"content_id": "course-1", "order_id": ORDER, "granted_at": WHEN}
POOL: Example = {"pool": "phone-30", "total": 60, "handed": 1, "free": 59}
CODES_IN: Example = {"codes": ["P30-7KQ2-M9XD", "P30-4HT8-W2CZ"]}
IMPORTED: Example = {"added": 2, "pool": {**POOL, "total": 62, "free": 61}}
SHIP_IN: Example = {"user_id": "alice", "tracking": "SF1234567890123"}
SHIPMENTS: Example = {"shipments": [SHIPMENT], "next": None}
WIN: Example = {
    "order_id": ORDER,
    "user_id": "alice",
    "activity_id": 100301,
    "award_id": 107,
    "points": None,
    "state": "failed",
    "created_at": WHEN,
    "error": {"code": "code_pool_empty", "message": "pool 'phone-30' has no free code"},
}
PRIZE_DELIVERIES: Example = {
    "award_id": 105,
    "kind": "physical",
    "stock": 100000,
    "records": 12,
    "created": 1,
    "completed": 11,
    "failed": 0,
    "delivered": 11,
    "consistent": True,
}
DELIVERY_COUNTS: Example = {
    "records": 120,
    "created": 2,
    "completed": 117,
    "failed": 1,
    "delivered": 117,
    "unpublished": 0,
}
CAMPAIGN = """\
awards:
  - {id: 1, kind: thanks, title: 谢谢参与}
  - {id: 2, kind: physical, title: 台灯}
strategies:
  - id: 10
    fallback: 1
    prizes:
      - {award: 2, rate: 0.01, stock: 100}
"""
CAMPAIGN_JSON: Example = {
    "awards": [
        {"id": 1, "kind": "thanks", "title": "谢谢参与", "config": ""},
        {"id": 2, "kind": "physical", "title": "台灯", "config": ""},
    ],
    "strategies": [
        {"id": 10, "fallback": 1, "prizes": [{"award": 2, "rate": "0.01", "stock": 100}]}
    ],
}


POLICY: Example = {
    "policy_id": 1,
    "priority": 10,
    "tag": "vip",
    "levels": [3, 4],
    "points_cost": 20,
    "joins": {"count": 3, "period": "week"},
    "wins": {"count": 1, "period": "day"},
}
PARTICIPATION: Example = {
    "policies": [POLICY, {"policy_id": 2, "priority": 20, "joins": {"count": 1, "period": "day"}}],
    "person_caps": {"wins": {"count": 2, "period": "month"}, "once_per_prize": True},
}
TAG: Example = {
    "name": "senior_vip",
    "kind": "dynamic",
    "condition": 'age > 50 and attrs&["vip"] == true',
    "description": "VIPs over 50",
    "references": [],
}
TAG_IN: Example = {
    "kind": "dynamic",
    "condition": 'age > 50 and attrs&["vip"] == true',
    "description": "VIPs over 50",
}
CLAUSE: Example = {"source": "profile", "field": "age", "operator": ">", "value": 50}
MEMBERS_IN: Example = {"user_ids": ["alice", "bob"]}
MEMBERS_CHANGED: Example = {"tag": "beta_testers", "changed": 2}
TAG_DELETED: Example = {"tag": "beta_testers", "deleted": True}
MEMBERS: Example = {"tag": "beta_testers", "user_ids": ["alice", "bob"], "next": "bob"}
PREVIEW: Example = {
    "tag": "senior_vip",
    "matched": 412,
    "scanned": 10000,
    "complete": True,
    "sample": ["u00017", "u00230"],
}


def examples_of(example: Example) -> ConfigDict:
    """A model's configuration that puts `example` in its JSON schema."""
    return ConfigDict(json_schema_extra={"examples": [example]})


ROUTE_TREE_IN: Example = {
    "description": "新客按年龄与会员分流",
    "time_zone": "Asia/Shanghai",
    "root": "by_age",
    "nodes": [
        {
            "id": "by_age",
            "field": "age",
            "lines": [
                {"op": "<", "value": 18, "to": "minors"},
                {"op": "default", "to": "by_tag"},
            ],
        },
        {
            "id": "by_tag",
            "tag": "vip",
            "lines": [
                {"op": "==", "value": True, "to": "vip"},
                {"op": "default", "to": "everyone"},
            ],
        },
    ],
    "leaves": [
        {"id": "minors", "activity": 100302},
        {"id": "vip", "activity": 100303},
        {"id": "everyone", "activity": 100301},
    ],
    "base_version": 2,
}
ROUTE_TREE: Example = {
    "name": "newcomers",
    **{k: v for k, v in ROUTE_TREE_IN.items() if k != "base_version"},
    "version": 3,
    "saved_by": "operator",
    "saved_at": WHEN,
}
ROUTE_TREE_DELETED: Example = {"name": "newcomers", "version": 4}
ROUTE: Example = {
    "tree": "newcomers",
    "activity_id": 100301,
    "leaf": "everyone",
    "path": [
        {"node": "by_age", "known": True, "fact": 30, "line": 1, "op": "default"},
        {"node": "by_tag", "known": True, "fact": False, "line": 1, "op": "default"},
    ],
}

# Paid content (content_schemas.py).
CONTENT_TEXT_IN: Example = {
    "title": "抽奖系统设计 · 第一讲",
    "summary": "奖品、概率与库存：从一张表到一次抽奖。",
    "body": "## 概率\n\n每个奖品的概率是**精确**的……",
    "preview": "本讲介绍抽奖策略的组成。",
    "cover": "https://example.com/covers/lesson-1.png",
    "price_cents": 990,
}
CONTENT_IN: Example = {"id": "course-1", **CONTENT_TEXT_IN}
CONTENT_STATE_IN: Example = {"state": "on_sale"}
CONTENT: Example = {
    **CONTENT_IN,
    "state": "on_sale",
    "created_at": WHEN,
    "updated_at": WHEN,
}
CONTENT_CARD: Example = {
    "id": "course-1",
    "title": CONTENT_TEXT_IN["title"],
    "summary": CONTENT_TEXT_IN["summary"],
    "cover": CONTENT_TEXT_IN["cover"],
    "price_cents": 990,
    "buy": None,
}
CONTENT_PAGE: Example = {
    **CONTENT_CARD,
    "preview_html": "<p>本讲介绍抽奖策略的组成。</p>\n",
    "held": False,
}
CONTENT_BODY: Example = {
    "id": "course-1",
    "title": CONTENT_TEXT_IN["title"],
    "body_html": "<h2>概率</h2>\n<p>每个奖品的概率是<strong>精确</strong>的……</p>\n",
}
MARKDOWN_IN: Example = {"markdown": "## 概率\n\n[更多](https://example.com)"}
MARKDOWN_OUT: Example = {
    "html": '<h2>概率</h2>\n<p><a href="https://example.com" rel="noopener noreferrer nofollow">'
    "更多</a></p>\n"
}
MY_CONTENT: Example = {**GRANT, "title": CONTENT_TEXT_IN["title"], "cover": None}

PAYMENT_ORDER_IN: Example = {"content_id": "course-1"}
PAYMENT_ORDER: Example = {
    "out_trade_no": "0193f2a4c5d6a1b2c3d4e5f6_3",
    "content_id": "course-1",
    "amount_cents": 990,
    "subject": "Knowledge 101",
    "state": "paying",
    "created_at": WHEN,
    "updated_at": WHEN,
    "expires_at": "2026-11-25T09:30:00Z",
    "trade_no": None,
}
PAYMENT: Example = {
    "trade_no": "2026112522001400001234567890",
    "out_trade_no": "0193f2a4c5d6a1b2c3d4e5f6_3",
    "user_id": "alice",
    "amount_cents": 990,
    "state": "refund_failed",
    "attempts": 5,
    "last_error": "gateway_unavailable: the gateway did not answer",
    "out_request_no": "R2026112522001400001234567890",
    "notified_at": WHEN,
    "updated_at": WHEN,
}
RECONCILIATION: Example = {
    "checked": 2,
    "clean": False,
    "mismatches": [
        {
            "out_trade_no": "0193f2a4c5d6a1b2c3d4e5f6_3",
            "kind": "paid_there_not_here",
            "local_state": "closed",
            "local_cents": 990,
            "gateway_status": "TRADE_SUCCESS",
            "gateway_cents": 990,
        }
    ],
}
