"""Install hints name the command that works where livescore came from.

While ``livescore-ai`` is not on the package index, and whenever livescore was installed from
a checkout, a hint says ``pip install -e ".[extra]"``; once published, an install from the
index is told the index form. Where livescore came from is what pip recorded (PEP 610's
``direct_url.json``), read here from real distribution metadata folders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

from livescore import _version
from livescore._version import install_hint


def _installed(tmp_path: Path, direct_url: dict[str, object] | None) -> PathDistribution:
    """A distribution's metadata folder as pip leaves it (``direct_url.json`` when given)."""
    folder = tmp_path / "livescore_ai-0.1.0.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: livescore-ai\nVersion: 0.1.0\n")
    if direct_url is not None:
        (folder / "direct_url.json").write_text(json.dumps(direct_url))
    return PathDistribution(folder)


InstalledAs = Callable[..., None]


@pytest.fixture
def installed_as(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[InstalledAs]:
    """Pretend livescore was installed as ``direct_url`` says (``None``: from an index)."""

    def install(direct_url: dict[str, object] | None, *, published: bool) -> None:
        found = _installed(tmp_path, direct_url)
        monkeypatch.setattr(_version, "distribution", lambda name: found)
        monkeypatch.setattr(_version, "ON_PACKAGE_INDEX", published)
        _version._installed_from_checkout.cache_clear()

    yield install
    _version._installed_from_checkout.cache_clear()


def test_this_checkout_is_told_the_editable_form() -> None:
    # The test suite runs from a checkout installed with pip install -e.
    assert _version._installed_from_checkout()
    assert install_hint("fleet") == 'pip install -e ".[fleet]"'
    assert install_hint("langchain", "sdk") == (
        'pip install -e ".[langchain,sdk]" -e integrations/langchain'
    )
    assert install_hint("openai-agents") == (
        'pip install -e ".[openai-agents]" -e integrations/openai-agents'
    )


def test_an_index_install_is_told_the_index_form_once_published(installed_as: InstalledAs) -> None:
    installed_as(None, published=True)  # pip records no direct_url.json for an index install
    assert install_hint("fleet") == "pip install 'livescore-ai[fleet]'"
    assert install_hint("langchain") == "pip install 'livescore-ai[langchain]'"


def test_a_wheel_file_install_is_told_the_index_form_once_published(
    installed_as: InstalledAs,
) -> None:
    installed_as(
        {"url": "file:///tmp/livescore_ai-0.1.0-py3-none-any.whl", "archive_info": {}},
        published=True,
    )
    assert install_hint("pii") == "pip install 'livescore-ai[pii]'"


def test_a_checkout_is_told_the_editable_form_even_once_published(
    installed_as: InstalledAs,
) -> None:
    installed_as(
        {"url": "file:///home/me/livescore", "dir_info": {"editable": True}}, published=True
    )
    assert install_hint("pii") == 'pip install -e ".[pii]"'


def test_before_publication_every_install_is_told_the_editable_form(
    installed_as: InstalledAs,
) -> None:
    installed_as(None, published=False)
    assert install_hint("pii") == 'pip install -e ".[pii]"'
