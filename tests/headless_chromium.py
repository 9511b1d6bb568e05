"""Headless Chromium driven over the DevTools protocol, on a pipe.

``--remote-debugging-pipe`` makes Chromium read protocol commands from its file descriptor 3
and write replies and events to descriptor 4, each message a JSON object ended by a NUL
byte. So a test can load a page, click it with the mouse as a user would
(``Input.dispatchMouseEvent`` at an element's place on the screen), read the DOM back and
take a screenshot, with no port opened, no websocket client and no browser-automation
package. Used by the report's browser test and ``docs/report_screenshot.py``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

# The flags of tests/phoenix_server.py's renderer: nothing but the page itself.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
)

# Generous: a loaded 2-core machine starts Chromium in seconds, not milliseconds.
TIMEOUT_S = 60.0


def find_chromium() -> str | None:
    """A headless-capable Chromium, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, or did not answer in time."""


class Browser:
    """One headless Chromium for the ``with`` block; :meth:`open` loads a page in it."""

    def __init__(self, profile: Path, *, chromium: str | None = None) -> None:
        found = chromium or find_chromium()
        if found is None:
            raise BrowserError("headless Chromium is not installed (make browser)")
        self._chromium = found
        self._profile = profile
        self._next_id = 0
        self._buffer = b""
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path = profile / "chromium.log"
        self._log: Any = None

    def __enter__(self) -> Browser:
        self._profile.mkdir(parents=True, exist_ok=True)
        self._log = self._log_path.open("wb")
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()
        # Chromium must find the pipes at descriptors 3 and 4: a small Python trampoline puts
        # them there and becomes Chromium (a shell's redirections stop at descriptor 9).
        ends = (to_browser_read, from_browser_write)
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import fcntl, os, sys\n"
                "high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD_CLOEXEC, 10) for fd in sys.argv[1:3]]\n"
                "os.dup2(high[0], 3); os.dup2(high[1], 4)\n"
                "os.execv(sys.argv[3], sys.argv[3:])",
                *(str(fd) for fd in ends),
                self._chromium,
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            pass_fds=ends,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        for fd in ends:
            os.close(fd)
        self._send_fd = to_browser_write
        self._receive_fd = from_browser_read
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        process = self._process
        assert process is not None
        # Already gone or not: the process is reaped below either way.
        with contextlib.suppress(BrowserError, OSError):
            self.command("Browser.close")
        try:
            process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(self._send_fd)
        os.close(self._receive_fd)
        self._log.close()

    def command(self, method: str, session: str | None = None, **params: Any) -> Any:
        """Send one protocol command and return its result (events met meanwhile are
        dropped: the pages here are polled, not listened to)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._send_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._receive(deadline)
            if reply.get("id") != self._next_id:
                continue
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error'].get('message')}")
            return reply.get("result", {})

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._receive_fd], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {TIMEOUT_S:.0f} s")
            chunk = os.read(self._receive_fd, 1 << 16)
            if not chunk:
                log = self._log_path.read_text(errors="replace")[-2000:]
                raise BrowserError(f"Chromium closed its DevTools pipe; its log ends:\n{log}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def open(self, url: str, *, size: tuple[int, int] = (1400, 900)) -> Page:
        """Load ``url`` in a new tab of ``size`` CSS pixels and wait until it is loaded."""
        target = self.command("Target.createTarget", url="about:blank")["targetId"]
        session = self.command("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.command(
            "Emulation.setDeviceMetricsOverride",
            width=size[0],
            height=size[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        page.command("Page.bringToFront")
        page.command("Page.navigate", url=url)
        page.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")
        return page


class Page:
    """A tab of :class:`Browser`: evaluate script in it, click it, take a screenshot."""

    def __init__(self, browser: Browser, session: str) -> None:
        self._browser = browser
        self._session = session

    def command(self, method: str, **params: Any) -> Any:
        return self._browser.command(method, self._session, **params)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable)."""
        result = self.command("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> None:
        """Poll until ``expression`` is true in the page."""
        deadline = time.monotonic() + TIMEOUT_S
        while not self.evaluate(expression):
            if time.monotonic() > deadline:
                raise BrowserError(f"still false after {TIMEOUT_S:.0f} s: {expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """Click the middle of the first element ``selector`` finds, with the mouse: the
        page gets the events a user's click makes (the element scrolled into view first)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise BrowserError(f"nothing to click: {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.command(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left" if kind != "mouseMoved" else "none",
                clickCount=1 if kind != "mouseMoved" else 0,
            )

    def screenshot(self, path: Path, *, element: str | None = None, height: int = 900) -> None:
        """Write a PNG of the page to ``path``: the viewport, or the page's width from the
        top of ``element`` (a selector) to its bottom, ``height`` pixels at most."""
        params: dict[str, Any] = {"format": "png"}
        if element is not None:
            box = self.evaluate(
                f"(() => {{ const r = document.querySelector({json.dumps(element)})"
                ".getBoundingClientRect(); return [r.top + window.scrollY, r.height + 16,"
                " document.documentElement.clientWidth]; })()"
            )
            params["clip"] = {
                "x": 0,
                "y": box[0],
                "width": box[2],
                "height": min(box[1], height),
                "scale": 1,
            }
            params["captureBeyondViewport"] = True
        data = self.command("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
