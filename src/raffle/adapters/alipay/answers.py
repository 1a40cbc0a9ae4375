"""Alipay's answers: the method's JSON object as sent (its exact text is what is signed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


@dataclass(frozen=True, slots=True)
class Answer:
    """The `<method>_response` (or `error_response`) object, its text exactly as it stood in
    the body, and the body's `sign`, if any."""

    fields: dict[str, Any]
    text: str
    sign: str | None


def answer(body: str, method: str) -> Answer:
    """The answer to `method` in a response body; ValueError when there is none. The text
    is cut from the body as it was sent, never re-serialised: a signature covers bytes."""
    node = method.replace(".", "_") + "_response"
    members = dict(_members(body))
    found = members.get(node, members.get("error_response"))
    if found is None:
        raise ValueError(f"no {node} in the answer")
    fields, text = found
    sign = members.get("sign", (None, ""))[0]
    if not isinstance(fields, dict) or not (sign is None or isinstance(sign, str)):
        raise ValueError("an answer of the wrong shape")
    return Answer(fields, text, sign)


def _members(body: str) -> list[tuple[str, tuple[Any, str]]]:
    """The top-level object's members: name → (value, the value's text)."""
    members: list[tuple[str, tuple[Any, str]]] = []
    at = _skip(body, 0)
    if body[at : at + 1] != "{":
        raise ValueError("the answer is not a JSON object")
    at = _skip(body, at + 1)
    while body[at : at + 1] != "}":
        name, at = _DECODER.raw_decode(body, at)
        at = _skip(body, at)
        if not isinstance(name, str) or body[at : at + 1] != ":":
            raise ValueError("the answer is not a JSON object")
        start = _skip(body, at + 1)
        value, at = _DECODER.raw_decode(body, start)
        members.append((name, (value, body[start:at])))
        at = _skip(body, at)
        if body[at : at + 1] == ",":
            at = _skip(body, at + 1)
        elif body[at : at + 1] != "}":
            raise ValueError("the answer is not a JSON object")
    if body[_skip(body, at + 1) :]:
        raise ValueError("text after the answer")
    return members


def _skip(body: str, at: int) -> int:
    while at < len(body) and body[at] in _SPACE:
        at += 1
    return at
