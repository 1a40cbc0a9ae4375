"""Operators' tags: save one (checked, compiled, announced), delete, members, a preview."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from raffle.domain.errors import InvalidConfig
from raffle.domain.tags import (
    InvalidTag,
    Tag,
    TagCycle,
    TagDefinition,
    TagInUse,
    TagKind,
    UnknownTag,
    check,
    check_references,
    in_order,
    referrers,
)
from raffle.service.audience import TagBoard
from raffle.service.news import tell
from raffle.service.ports.tags import ProfilePages

PAGE = 500  # profiles read per page by a preview


@dataclass(frozen=True, slots=True)
class Preview:
    """How many of the profiles scanned the tag holds, and the first few of them."""

    matched: int
    scanned: int
    complete: bool  # every profile was scanned (not stopped at the limit)
    sample: list[str]


async def save_tag(tag: Tag, board: TagBoard) -> bool:
    """Create or replace a tag: refused whole (MalformedCondition with its position,
    InvalidTag, UnknownTag, TagCycle) before anything is written. True if it is new."""
    check(tag)
    if tag.kind is TagKind.DYNAMIC:
        board.language.compile(tag.condition)

    def references_known(others: Mapping[str, Tag]) -> None:
        check_references(tag, others)

    created = await board.store.save(tag, references_known)
    await _announce(board)
    return created


async def delete_tag(name: str, board: TagBoard) -> None:
    """Refused (TagInUse) while another tag refers to it."""

    def unreferenced(others: Mapping[str, Tag]) -> None:
        if users := referrers(name, others.values()):
            raise TagInUse(f"tag {name!r} is referred to by {', '.join(users)}")

    if not await board.store.delete(name, unreferenced):
        raise UnknownTag(f"tag {name!r} does not exist")
    await _announce(board)


async def tags(board: TagBoard) -> list[Tag]:
    await board.refresh()
    return sorted(board.tags.values(), key=lambda t: t.name)


async def tag(name: str, board: TagBoard) -> Tag:
    await board.refresh()
    if (found := board.tags.get(name)) is None:
        raise UnknownTag(f"tag {name!r} does not exist")
    return found


async def add_members(name: str, user_ids: Iterable[str], board: TagBoard) -> int:
    """Add users to a static tag; how many were not members yet."""
    await _static(name, board)
    added = await board.store.add_members(name, user_ids)
    await _announce(board)
    return added


async def remove_members(name: str, user_ids: Iterable[str], board: TagBoard) -> int:
    await _static(name, board)
    removed = await board.store.remove_members(name, user_ids)
    await _announce(board)
    return removed


async def members(name: str, board: TagBoard) -> list[str]:
    await _static(name, board)
    return sorted(await board.members(name))


async def preview(
    name: str,
    board: TagBoard,
    profiles: ProfilePages,
    today: date,
    *,
    sample: int = 20,
    scan: int = 100_000,
) -> Preview:
    """Scan up to `scan` profiles by user id and count those the tag holds on `today`."""
    await tag(name, board)
    matched, scanned, found, after = 0, 0, list[str](), None
    while scanned < scan:
        wanted = min(PAGE, scan - scanned)
        page = await profiles.page(after, wanted)
        for profile in page:
            if await board.answer(name, profile, today):  # not kept: the draws' answers stay
                matched += 1
                if len(found) < sample:
                    found.append(profile.user_id)
        scanned += len(page)
        if len(page) < wanted:  # the last page
            return Preview(matched, scanned, True, found)
        after = page[-1].user_id
    return Preview(matched, scanned, False, found)


async def definition_problems(
    definitions: Sequence[TagDefinition], board: TagBoard
) -> list[InvalidConfig]:
    """A campaign file's tags against the stored ones: references to tags in neither, and
    rings closed through stored tags."""
    await board.refresh()
    tags = dict(board.tags) | {d.tag.name: d.tag for d in definitions}
    found = []
    for i, definition in enumerate(definitions):
        others = {n: t for n, t in tags.items() if n != definition.tag.name}
        try:
            check_references(definition.tag, others)
        except (UnknownTag, TagCycle) as error:
            found.append(InvalidConfig(error.message, ("tags", i, "condition")))
    return found


async def load_definitions(definitions: Sequence[TagDefinition], board: TagBoard) -> None:
    """Save a file's tags, each after those it refers to, and add static tags' members."""
    for definition in in_order(definitions):
        await save_tag(definition.tag, board)
        if definition.members:
            await add_members(definition.tag.name, definition.members, board)


async def definitions(board: TagBoard) -> list[TagDefinition]:
    """Every tag, static ones with their members: what a campaign file exports."""
    found = []
    for tag in await tags(board):
        listed = sorted(await board.members(tag.name)) if tag.kind is TagKind.STATIC else []
        found.append(TagDefinition(tag, tuple(listed)))
    return found


async def _static(name: str, board: TagBoard) -> None:
    if (await tag(name, board)).kind is not TagKind.STATIC:
        raise InvalidTag(f"tag {name!r} is dynamic: its condition says who it holds")


async def _announce(board: TagBoard) -> None:
    await board.refresh()
    await tell(board.news, board.version)
