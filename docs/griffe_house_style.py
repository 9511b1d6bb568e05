"""A griffe extension: the API reference reads livescore's docstrings in the house style.

The docstrings are Google style as Sphinx's napoleon reads them, so two things need a word
to mkdocstrings:

- ``Example:`` opens the examples section (napoleon takes ``Example:`` and ``Examples:``;
  griffe only the plural, and would show the doctest lines as prose).
- Sphinx roles (``:class:`~livescore.Run```, ``:meth:`flush```) become cross-references
  into the API reference, resolved from where the docstring stands (its class, its module,
  the packages above). A role griffe cannot resolve stays plain code; one that resolves to
  an object the reference does not show fails ``mkdocs build --strict``, like any broken
  link.

``mkdocs.yml`` loads it (``extensions:`` of the python handler).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

logger = griffe.get_logger(__name__)

EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.M)
ROLE = re.compile(
    r":(?:class|func|meth|mod|data|attr|exc|obj):"
    r"`(?:(?P<title>[^`<\n]+?) <(?P<titled>[^`>\n]+)>|(?P<tilde>~?)(?P<target>[^`\s]+))`"
)


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


def _lookup(scope: griffe.Object, dotted: str) -> griffe.Object | griffe.Alias | None:
    current: Any = scope
    for part in dotted.split("."):
        members = current.all_members if current.is_class else current.members
        if part not in members:
            return None
        current = members[part]
        if current.is_alias:
            try:
                current = current.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                return None
    return current  # type: ignore[no-any-return]


def _shown(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def _public(found: griffe.Object) -> bool:
    """Whether the API reference shows ``found``: by its own path or by a public alias."""
    return _shown(found.path) or any(_shown(path) for path in found.aliases)


def resolve(obj: griffe.Object, target: str) -> str | None:
    """The path of the object ``target`` names, seen from ``obj``'s docstring (``""`` when
    it exists but the API reference does not show it: private helpers)."""
    target = target.removesuffix("()").lstrip(".")
    package = obj.package
    first = target.split(".", 1)[0]
    if first == package.name:
        rest = target[len(first) + 1 :]
        found = _lookup(package, rest) if rest else package
        return None if found is None else (found.path if _public(found) else "")
    if first.startswith("livescore"):  # another distribution's package: trust the path
        return target
    scope: griffe.Object | None = obj if obj.is_class or obj.is_module else obj.parent
    while scope is not None:
        found = _lookup(scope, target)
        if found is not None:
            return found.path if _public(found) else ""
        scope = scope.parent
    return None


def rewrite(obj: griffe.Object, text: str) -> str:
    """``text`` (a docstring of ``obj``) with its examples section and roles made plain."""
    text = EXAMPLE.sub(r"\1Examples:", text)

    def role(match: re.Match[str]) -> str:
        if match.group("titled"):
            target, shown = match.group("titled"), match.group("title")
        else:
            target = match.group("target")
            shown = target.rsplit(".", 1)[-1] if match.group("tilde") else target
        path = resolve(obj, target)
        if path == "":
            return f"`{shown}`"
        if path is None:
            where = obj.filepath if isinstance(obj.filepath, Path) else obj.path
            logger.warning(f"{where}: {obj.path}: cannot resolve {match.group(0)}")
            return f"`{shown}`"
        return f"[`{shown}`][{path}]"

    return ROLE.sub(role, text)


class HouseStyle(griffe.Extension):
    """Rewrites every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj, obj.docstring.value)
