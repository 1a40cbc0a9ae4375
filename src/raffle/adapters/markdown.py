"""Operators' Markdown as HTML a page may insert: markdown-it-py, raw HTML off, then nh3."""

from __future__ import annotations

from functools import cache

import nh3
from markdown_it import MarkdownIt

# What CommonMark and its tables make, nothing else: no raw HTML, no style, no events.
_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s",
    "code", "pre", "blockquote", "ul", "ol", "li", "a", "img",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}
# No javascript:, vbscript: or data: (markdown-it lets data: images through; nh3 does not).
_SCHEMES = {"http", "https", "mailto"}


@cache
def _parser() -> MarkdownIt:
    options = {"html": False, "linkify": False, "typographer": False}
    return MarkdownIt("commonmark", options).enable(["table", "strikethrough"])


def render(markdown: str) -> str:
    """The Markdown as sanitised HTML: raw HTML in it shows as text, and what the parser
    makes passes an allow-list of tags, attributes and URL schemes (a second line of
    defence should a parser change let something through)."""
    html = _parser().render(markdown)
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
