"""The ``livescore`` command: the parser (each sub-command added by its ``add_*_parser(sub)``,
which sets a ``handler``), and how errors become exit codes."""

from __future__ import annotations

import argparse
import difflib
import re
import signal
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from livescore.cli._collect import add_collect_parser
from livescore.cli._common import EXIT_INTERRUPTED, EXIT_USAGE, UsageError, make_console
from livescore.cli._demo import add_demo_parser
from livescore.cli._eval import add_eval_parser
from livescore.cli._inspect import add_traces_parser
from livescore.cli._worker import add_worker_parser

__all__ = ("build_parser", "main")


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line, with the nearest option or command ("did
    you mean --scorer?"), instead of a usage block; its sub-commands' parsers are too."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}{self._nearest(message)}\n")

    def _nearest(self, message: str) -> str:
        """``"; did you mean --scorer?"`` for a misspelt option or choice, else a pointer to
        ``-h``."""
        help_hint = f" ({self.prog} -h lists the options)"
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice is not None:
            words, known = [choice.group(1)], re.findall(r"'([^']*)'", choice.group(2))
        elif message.startswith("unrecognized arguments: "):
            words = [w.split("=", 1)[0] for w in message.split()[2:] if w.startswith("-")]
            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        else:
            return help_hint
        for word in words:
            close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
            if close:
                return f"; did you mean {close[0]}?{help_hint}"
        return help_hint


def build_parser() -> argparse.ArgumentParser:
    """The ``livescore`` argument parser: one sub-command per line below."""
    from livescore._version import DISTRIBUTION, __version__

    parser = _Parser(
        prog="livescore",
        description=(
            "Score what AI agents say, live or over a dataset, and publish every score as "
            "OpenTelemetry data."
        ),
        epilog="Run 'livescore demo' to see it work, 'livescore eval -h' for datasets.",
    )
    parser.add_argument(
        "--version", action="version", version=f"livescore {__version__} ({DISTRIBUTION})"
    )
    sub = parser.add_subparsers(dest="command", metavar="{eval,demo,worker,collect,traces}")
    add_eval_parser(sub)
    add_demo_parser(sub)
    add_worker_parser(sub)
    add_collect_parser(sub)
    add_traces_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``livescore`` command; returns the exit code (the console script's).

    Without ``argv`` (the console script, ``python -m livescore``) it is the program: once
    the command is over, a late Ctrl-C is ignored, so it can neither print a traceback nor
    turn the command's exit code into a death by signal while the process exits. Ctrl-C
    before then exits 130 (see each command's ``--help``).

    Example:
        >>> main(["--version"])  # doctest: +SKIP
        livescore <version> (livescore-ai)
    """
    program = argv is None
    try:
        code = _run(argv)
        if program:
            _ignore_sigint()
    except KeyboardInterrupt:  # pressed just as the command ended
        if program:
            _ignore_sigint()
        code = EXIT_INTERRUPTED
    return code


def _ignore_sigint() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # Said by the sub-command's parser, which knows the options it was given.
        chosen = _subparsers(parser).get(getattr(args, "command", None) or "", parser)
        chosen.error(f"unrecognized arguments: {' '.join(unknown)}")
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except UsageError as exc:
        from rich.markup import escape

        make_console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        make_console(stderr=True).print("interrupted")
        return EXIT_INTERRUPTED


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
