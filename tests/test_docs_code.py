"""Every ```python block of README.md, examples/README.md and docs/ runs as written, against
a local judge server.

Each block runs in a fresh interpreter (the install commands of the pages are what this
project's environment has), with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` pointing at an
:class:`~livescore.testing.OpenAITestServer` whose responder answers any request plausibly:
structured judge requests with an instance of the requested JSON schema, the agent's chat
model (LangChain's ``init_chat_model("openai:...")``) with a short answer. A block that
appears on several pages (the README's examples are also on their docs pages) runs once. A
block that needs a running external service is marked by an HTML comment on the line before
it: ``<!-- docs-test: skip (needs Phoenix) -->``; the reason is required. Blocks in other
languages (``bash``, program output) are not run: the commands they show are the ones the
tests of the CLI, the demo and the examples run.

Dashboards: a block that uses ``PhoenixSink`` runs against the session's real Phoenix
(``PHOENIX_COLLECTOR_ENDPOINT`` points there) and must report its scores sent; a block
that uses ``LangfuseSink`` runs against :class:`LangfuseTestReceiver`, a loopback test
double of Langfuse's scores and OTLP endpoints (``LANGFUSE_*`` point there; Langfuse's
server cannot run here), which must receive its scores and spans.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from score_api_doubles import LangfuseTestReceiver

from livescore.testing import OpenAITestServer, Reply

ROOT = Path(__file__).resolve().parents[1]
PAGES = (
    ROOT / "README.md",
    ROOT / "examples" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
)
_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    line: int
    code: str
    skip: str | None
    page: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(text: str, page: str = "") -> list[Block]:
    """The ```python blocks of ``text`` with their line number and skip reason."""
    blocks = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        reason = skip.group("reason") if skip else None
        blocks.append(Block(line, match.group(1), reason, page))
    return blocks


def unique_blocks(
    pages: tuple[Path, ...], root: Path = ROOT
) -> tuple[list[Block], dict[str, list[str]]]:
    """Each distinct block once (where it first appears), and every place each appears."""
    first: dict[str, Block] = {}
    places: dict[str, list[str]] = {}
    for path in pages:
        for block in page_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(root))):
            first.setdefault(block.code, block)
            places.setdefault(block.code, []).append(block.where)
    return list(first.values()), places


# -- the responder (a test double for a judge model and an agent model) -------------------


def _instance(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small, valid instance of a JSON schema (what a careful model would answer)."""
    if "$ref" in schema:
        return _instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _instance(options[0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _instance(sub, defs) for name, sub in props.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        count = min(count, int(schema.get("maxItems", count)))
        return [_instance(schema.get("items", {"type": "string"}), defs) for _ in range(count)]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return "The answer states this."


def plausible_responder(body: dict[str, Any]) -> Any:
    """Answers any chat-completions request the pages' code makes."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        return _instance(schema, schema.get("$defs", {}))
    if fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        schema = fmt["schema"]
        return _instance(schema, schema.get("$defs", {}))
    if body.get("tools"):  # the agent's own model: answer without calling a tool
        return "It is 21°C and sunny in Paris."
    if body.get("logprobs"):  # a one-word verdict (logprob mode): the first token's odds
        return Reply.token_probabilities({"supported": 0.8, "unsupported": 0.15, "un": 0.05})
    return "The score is 0 because every claim is supported by the context."


# -- the tests ------------------------------------------------------------------------------

BLOCKS, PLACES = unique_blocks(PAGES)

# The live examples (README's, docs/live/'s) print what was scored, each score on a line of
# its own: "keyword-coverage: score=0.5 label=partial reason=Covered 1 of 2 keywords…".
_LIVE_ENTRY = re.compile(
    r"\b(LiveScoringHandler|LiveScoringProcessor|LiveScoringSpanProcessor|LiveDispatcher)\("
)
_SCORE_LINE = re.compile(r"^[\w.-]+: score=\d[\d.]* label=\S+ reason=\S", re.M)


def prints_live_scores(block: Block) -> bool:
    """Whether ``block`` is a live example of the README or docs/live/, which must print
    each score it makes."""
    places = PLACES.get(block.code, [block.where])
    shown = any(p.startswith(("README.md:", "docs/live/")) for p in places)
    return shown and _LIVE_ENTRY.search(block.code) is not None


def test_the_pages_have_python_blocks_and_skips_are_rare() -> None:
    assert len(BLOCKS) >= 25
    assert {b.page for b in BLOCKS} >= {"README.md", "docs/getting-started.md"}
    skipped = [b for b in BLOCKS if b.skip]
    assert len(skipped) <= 1, [(b.where, b.skip) for b in skipped]


def test_the_live_examples_are_found() -> None:
    live = [b for b in BLOCKS if prints_live_scores(b)]
    pages = {p.split(":")[0] for b in live for p in PLACES[b.code]}
    assert {"README.md", "docs/live/langchain.md", "docs/live/openai-agents.md"} <= pages
    assert len(live) >= 4, [b.where for b in live]
    assert _SCORE_LINE.search("keyword-coverage: score=0.5 label=partial reason=Covered 1 of 2")
    assert not _SCORE_LINE.search("DispatchStats(sampled=1, scored=1)")


def test_a_block_on_two_pages_runs_once_and_names_both(tmp_path: Path) -> None:
    code = "```python\nprint(1)\n```\n"
    one, two = tmp_path / "a.md", tmp_path / "b.md"
    one.write_text(code, encoding="utf-8")
    two.write_text("Text.\n\n" + code, encoding="utf-8")
    blocks, places = unique_blocks((one, two), root=tmp_path)
    assert [b.where for b in blocks] == ["a.md:1"]
    assert places["print(1)\n"] == ["a.md:1", "b.md:3"]


def test_the_schema_instance_is_valid_for_livescores_judge_answers() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        statement: str
        verdict: str
        reason: str

    class Verdicts(BaseModel):
        verdicts: list[Verdict]

    schema = Verdicts.model_json_schema()
    answer = _instance(schema, schema.get("$defs", {}))
    assert Verdicts.model_validate(answer).verdicts[0].statement


@pytest.fixture(scope="module")
def server() -> Any:
    with OpenAITestServer(responder=plausible_responder) as running:
        yield running


@pytest.mark.parametrize(
    "block",
    [
        # a block with a PhoenixSink runs against the real Phoenix (and its start-up time)
        pytest.param(b, marks=[pytest.mark.phoenix] if "PhoenixSink(" in b.code else [])
        for b in BLOCKS
    ],
    ids=[b.where for b in BLOCKS],
)
def test_the_block_runs(
    block: Block, server: OpenAITestServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if block.skip:
        pytest.skip(f"{block.where}: {block.skip}")
    prefixes = ("OPENAI_", "LIVESCORE_", "PHOENIX_", "LANGFUSE_", "OTEL_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update(
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-docs-test",
        # Nothing leaves the machine: a request to anywhere but loopback (the Agents SDK
        # exporting its traces to OpenAI, say) meets a closed local port and fails at once.
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
    )
    phoenix = "PhoenixSink(" in block.code
    if phoenix:
        env["PHOENIX_COLLECTOR_ENDPOINT"] = request.getfixturevalue("phoenix_url")
    with contextlib.ExitStack() as stack:
        langfuse = None
        if "LangfuseSink(" in block.code:
            langfuse = stack.enter_context(LangfuseTestReceiver())
            env.update(
                LANGFUSE_PUBLIC_KEY="pk-lf-docs",
                LANGFUSE_SECRET_KEY="sk-lf-docs",
                LANGFUSE_BASE_URL=langfuse.url,
            )
        script = tmp_path / f"block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert done.returncode == 0, (
            f"{', '.join(PLACES[block.code])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )
        if prints_live_scores(block):
            assert _SCORE_LINE.search(done.stdout), (
                f"{', '.join(PLACES[block.code])} scores live but prints no score line "
                f"('<scorer>: score=… label=… reason=…'):\n{done.stdout[-2000:]}"
            )
        if phoenix or langfuse is not None:
            # the block prints its sink's stats: every score was delivered
            assert re.search(r"sent=[1-9]\d*, failed=0, dropped=0", done.stdout), done.stdout
        if langfuse is not None:
            assert langfuse.scores()
            assert any(r.path == langfuse.OTLP_PATH for r in langfuse.requests)


def test_skip_markers_need_a_reason() -> None:
    text = "<!-- docs-test: skip (needs Phoenix) -->\n```python\nprint(1)\n```\n"
    assert page_blocks(text) == [Block(2, "print(1)\n", "needs Phoenix")]
    assert page_blocks("<!-- docs-test: skip -->\n```python\nx\n```\n")[0].skip is None
    assert json.dumps(plausible_responder({"messages": []})).startswith('"The score is')
