"""The "scan and pay" page a QR code opens: the trade, a button to pay, one to pay twice."""

from __future__ import annotations

from html import escape

from alipay_sim.fields import yuan
from alipay_sim.ledger import Trade

_STYLE = """<style>body{font-family:sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem}
.amount{font-size:2rem} button{font-size:1.1rem;margin:.4rem 0;padding:.5rem 1rem;width:100%}
.note{color:#666;font-size:.85rem} td,th{padding:.2rem .6rem;text-align:left}</style>"""
_STATES = {
    "PRECREATED": "等待付款 Waiting for payment",
    "WAIT_BUYER_PAY": "等待付款 Waiting for payment",
    "TRADE_SUCCESS": "支付成功 Paid",
    "TRADE_FINISHED": "交易完成 Finished",
    "TRADE_CLOSED": "交易关闭 Closed",
}


def trades_page(trades: list[tuple[Trade, str]]) -> str:
    """Every trade, newest first, each linking to its pay page (what scanning its QR opens)."""
    rows = "".join(
        f'<tr><td><a href="/qr/{escape(t.code)}">{escape(t.out_trade_no)}</a></td>'
        f"<td>{escape(t.subject)}</td><td>¥{yuan(t.amount_cents)}</td><td>{status}</td></tr>"
        for t, status in reversed(trades)
    )
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>支付宝模拟器 Alipay simulator</title>
{_STYLE}</head>
<body><h1>支付宝模拟器</h1><p class="note">A simulator: no money moves.</p>
<table><tr><th>订单 Order</th><th>商品 Subject</th><th>金额 Amount</th><th>状态 Status</th></tr>
{rows}</table></body></html>"""


def pay_page(trade: Trade, status: str, notice: str = "") -> str:
    payable = status in ("PRECREATED", "WAIT_BUYER_PAY")
    action = f"/qr/{escape(trade.code)}/pay"
    buttons = (
        f'<form method="post" action="{action}"><input type="hidden" name="times" value="1">'
        '<button id="pay" type="submit">付款 Pay</button></form>'
        f'<form method="post" action="{action}"><input type="hidden" name="times" value="2">'
        '<button id="pay-twice" type="submit">付两次 Pay twice (a duplicate payment)</button>'
        "</form>"
        if payable
        else ""
    )
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>支付宝模拟器 Alipay simulator</title>
{_STYLE}</head>
<body><h1>支付宝模拟器</h1><p class="note">A simulator: no money moves.</p>
<p id="subject">{escape(trade.subject)}</p>
<p class="amount" id="amount">¥{yuan(trade.amount_cents)}</p>
<p>订单号 Order: <code>{escape(trade.out_trade_no)}</code></p>
<p id="status" data-status="{status}">{_STATES.get(status, status)}</p>
<p id="notice">{escape(notice)}</p>
{buttons}
</body></html>"""
