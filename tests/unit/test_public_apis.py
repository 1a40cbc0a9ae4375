"""src/ uses other packages through their public APIs: what ruff's SLF001 and PLC2701 miss."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).parents[2] / "src"

# Library classes whose documentation tells users to subclass them, and how.
DOCUMENTED_BASES = {
    "pydantic.BaseModel",
    "pydantic_settings.BaseSettings",
    "sqlalchemy.types.TypeDecorator",  # custom types: process_bind_param / process_result_value
    "yaml.SafeLoader",  # with add_constructor
    "yaml.SafeDumper",  # with add_representer
}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _imported(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it was imported as, for other packages only."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name
    return {
        local: full
        for local, full in names.items()
        if full.split(".")[0] not in {"raffle", *sys.stdlib_module_names}
    }


def library_bases(tree: ast.Module) -> list[str]:
    """The classes of other packages that the module's classes subclass."""
    imported = _imported(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = ast.unparse(base).split("[")[0]
                head, _, rest = name.partition(".")
                if head in imported:
                    found.append(imported[head] + (f".{rest}" if rest else ""))
    return found


def private_names_by_string(tree: ast.Module) -> list[str]:
    """Private attributes reached with getattr / setattr / hasattr / delattr and a literal."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(name := node.args[1], ast.Constant)
            and isinstance(name.value, str)
            and name.value.startswith("_")
            and not name.value.startswith("__")
        ):
            found.append(name.value)
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_subclasses_only_documented_library_bases(path: Path) -> None:
    bases = library_bases(ast.parse(path.read_text()))
    assert [b for b in bases if b not in DOCUMENTED_BASES] == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_reaches_no_private_attribute_by_name(path: Path) -> None:
    assert private_names_by_string(ast.parse(path.read_text())) == []


def test_the_checks_see_what_they_look_for() -> None:
    planted = ast.parse(
        "from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as H\n"
        "import fastapi\n"
        "class P(H): ...\n"
        "class F(fastapi.FastAPI): ...\n"
        "class M(Base): ...\n"
        "reader = getattr(connection, '_reader')\n"
        "size = getattr(connection, '__sizeof__')\n"
    )
    assert library_bases(planted) == [
        "uvicorn.protocols.http.httptools_impl.HttpToolsProtocol",
        "fastapi.FastAPI",
    ]
    assert private_names_by_string(planted) == ["_reader"]
