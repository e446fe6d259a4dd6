"""Standard output that never loses a write silently.

CPython's ``BufferedWriter.write`` may return fewer bytes than it was given when a large
write meets a pipe whose reader has just gone (``dpkit publish ... | head -1``): the kernel
accepted 64 KiB, the rest is dropped, no error is raised, and ``sys.stdout.write`` (a
``TextIOWrapper``) ignores the count. A release would then end "complete" with its tail
lost. :class:`FullWriter` writes again until every byte is taken, so the closed pipe
surfaces as the ``BrokenPipeError`` the error boundary reports (docs/errors.md,
``head-loses-release``).
"""

from __future__ import annotations

import sys
from typing import IO, Any


class FullWriter:
    """A write-only file object over ``sys.stdout``'s byte buffer that checks every count."""

    def __init__(self, binary: bool = False) -> None:
        self._text = sys.stdout
        self._buffer: IO[bytes] = sys.stdout.buffer
        self._binary = binary
        self._encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        self._text.flush()  # anything printed before comes first

    def write(self, data: Any) -> int:
        raw = data if self._binary else str(data).encode(self._encoding)
        view = memoryview(raw)
        while view.nbytes:
            n = self._buffer.write(view)
            if n is None:  # a non-blocking stream that could take nothing now
                n = 0
            view = view[n:]
        return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._buffer.flush()

    def fileno(self) -> int:
        return self._buffer.fileno()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._buffer.isatty()

    @property
    def closed(self) -> bool:
        return self._buffer.closed

    def __iter__(self) -> Any:  # pandas checks for a file-like object by these attributes
        raise OSError("not readable")

    @property
    def mode(self) -> str:
        return "wb" if self._binary else "w"
