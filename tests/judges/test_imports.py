"""``import livescore.judges`` does not import ``openai``: it loads when a judge is built.
Each check runs in a fresh interpreter, where nothing is imported yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_importing_the_judges_does_not_import_openai() -> None:
    result = _run(
        """
        import sys
        import livescore.judges
        from livescore.judges import (
            Judge, JudgeError, JudgeRateLimitError, JudgeReply, JudgeUsage, OpenAIJudge,
            resolve_judge,
        )
        from livescore.testing import OpenAITestServer, ScriptedJudge
        print(sorted(m for m in ("openai", "httpx2", "aiohttp") if m in sys.modules))
        OpenAIJudge("m", base_url="http://127.0.0.1:9/v1")
        print("openai" in sys.modules)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[]", "True"]


def test_the_protocol_errors_and_scripted_judge_work_without_openai() -> None:
    # ``sys.modules["openai"] = None`` makes any ``import openai`` fail, as if not installed.
    result = _run(
        """
        import sys
        sys.modules["openai"] = None
        import anyio
        from pydantic import BaseModel
        from livescore.judges import Judge, JudgeRateLimitError, JudgeUsage, JudgeError
        from livescore.testing import ScriptedJudge

        class Claims(BaseModel):
            claims: list[str]

        judge = ScriptedJudge(["not json", {"claims": ["a"]}])
        assert isinstance(judge, Judge)
        reply = anyio.run(lambda: judge.generate_object(system="s", prompt="p", schema=Claims))
        assert issubclass(JudgeRateLimitError, JudgeError)
        print(reply.value.claims, reply.usage.calls)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['a'] 2"
