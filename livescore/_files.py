"""Output files that are never half-written: a temporary file beside the target, renamed.

What ``livescore eval --out`` and ``write_report`` write goes to a temporary file in the
target's own folder and replaces the target in one rename when it is complete. An
interrupted or failed write leaves the previous file as it was (and no temporary file).
A target that is a symbolic link is followed on purpose: the file it points to is replaced
and the link stays a link (writing through the link's name would replace the link).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import IO

__all__ = ("AtomicFile", "output_target", "write_text_atomically")


def output_target(path: str | os.PathLike[str]) -> Path:
    """The file an output path names: symbolic links followed, made absolute.

    Example:
        >>> output_target("/tmp/../tmp/report.html").name
        'report.html'
    """
    return Path(os.path.realpath(path))


class AtomicFile:
    """A text file written beside ``path`` and moved onto it by :meth:`commit`.

    Usable as a context manager: leaving the block without :meth:`commit` (an exception)
    discards what was written.

    Args:
        path: The destination (followed if it is a symbolic link).

    Raises:
        OSError: The temporary file cannot be created (the folder is not writable).

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with AtomicFile(target) as out:
        ...     _ = out.file.write("done\\n")
        ...     out.commit()
        >>> target.read_text()
        'done\\n'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.target = output_target(path)
        fd, name = tempfile.mkstemp(
            dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".partial"
        )
        self.temporary = Path(name)
        self.file: IO[str] = os.fdopen(fd, "w", encoding="utf-8", newline="")
        self._finished = False

    def commit(self) -> None:
        """Close the temporary file and rename it onto the target."""
        if self._finished:
            return
        self._finished = True
        try:
            self.file.close()
            os.chmod(self.temporary, _mode_for(self.target))
            os.replace(self.temporary, self.target)
        except BaseException:
            with contextlib.suppress(OSError):
                self.temporary.unlink()
            raise

    def discard(self) -> None:
        """Close and remove the temporary file; the target is left as it was."""
        if self._finished:
            return
        self._finished = True
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.temporary.unlink()

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()  # after commit() it does nothing


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through an :class:`AtomicFile`; the target."""
    with AtomicFile(path) as out:
        out.file.write(text)
        out.commit()
    return out.target


def _mode_for(target: Path) -> int:
    """The permissions the new file gets: the old file's, else the usual ones (umask)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
