"""`raffle route`: the path a decision tree takes for attributes given on the command line."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

import click

from raffle.adapters.clock import SystemClock
from raffle.bootstrap import Raffle
from raffle.domain.profile_fields import InvalidProfile, attribute_from_text
from raffle.domain.profiles import Gender, age
from raffle.domain.route_tree_checks import FIELDS
from raffle.domain.route_trees import MISSING, Route, RouteTree, Subject
from raffle.entrypoints.cli_common import campaign_path, fail, print_table, read, with_raffle
from raffle.service.route_trees import route_attributes, stored_tree


@click.command("route")
@click.argument("tree")
@click.option(
    "--attr",
    "attributes",
    multiple=True,
    metavar="NAME=VALUE",
    help="A fact of the user: age=30, gender=f, birth_date=1990-06-15, attrs.vip=true, …",
)
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="A tag that holds the user.")
@click.option(
    "--file",
    type=campaign_path,
    help="Take TREE from this campaign file instead of the database.",
)
def route_command(
    tree: str, attributes: tuple[str, ...], tags: tuple[str, ...], file: Path | None
) -> None:
    """Show the path the decision tree TREE (a stored tree's name) takes for a made-up user:
    each node, the fact it tested and the line taken, and the activity at the end. A fact
    not given is unknown, as for a profile without it; the age comes from birth_date (today
    in the tree's zone) unless given."""
    if file is not None:
        found = next((t for t in read(file).trees if t.name == tree), None)
        if found is None:
            fail(f"{file} has no tree {tree!r}")
        _show(found, attributes, set(tags))
        return

    async def use(raffle: Raffle) -> None:
        _show((await stored_tree(tree, raffle.uow)).tree, attributes, set(tags))

    with_raffle(use)


def _show(tree: RouteTree, given: tuple[str, ...], tags: set[str]) -> None:
    facts = dict(_attribute(text) for text in given)
    born = facts.get("birth_date")
    if isinstance(born, date) and "age" not in facts:
        facts["age"] = age(born, SystemClock().now().astimezone(ZoneInfo(tree.time_zone)).date())
    found = route_attributes(tree, facts, tags)
    print_table(("node", "tests", "fact", "line taken", "to"), _rows(tree, found), tree.name)
    click.echo(f"-> activity {found.activity_id} (leaf {found.leaf})")


def _rows(tree: RouteTree, found: Route) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for step in found.path:
        node = tree.node(step.node)
        assert node is not None
        tests = f"tag {node.name}" if node.subject is Subject.TAG else node.name
        fact = "(unknown)" if step.fact is MISSING else json.dumps(step.fact, default=str)
        value = "" if step.value is None else " " + json.dumps(step.value, default=str)
        line = f"{step.line}: {step.op.value}{value}"
        rows.append((step.node, tests, fact, line, node.lines[step.line].to))
    return rows


def _attribute(text: str) -> tuple[str, object]:
    name, equals, value = text.partition("=")
    if not equals or not name:
        fail(f"--attr {text!r}: write NAME=VALUE")
    kind = FIELDS.get(name)
    if kind is None and not name.startswith("attrs."):
        fail(f"--attr {name}: no such fact; known: {', '.join([*FIELDS, 'attrs.<name>'])}")
    try:
        if kind is int:
            return name, int(value)
        if kind is date:
            return name, date.fromisoformat(value)
        if kind is Gender:
            return name, Gender(value).value
        if kind is str:
            return name, value
        return name, attribute_from_text(value, name)  # as a profile file's cell reads
    except (ValueError, InvalidProfile) as error:
        fail(f"--attr {name}: {error}")
