"""Public test doubles for testing scorers: a scripted judge and an OpenAI-compatible server."""

from livescore.testing._scripted import ScriptedJudge

__all__ = ("ScriptedJudge",)
