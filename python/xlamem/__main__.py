# SPDX-License-Identifier: Apache-2.0
"""`python -m xlamem COMMAND ...`: the xlamem tool, from the Python package.

Not a second command line: the extension holds the tool's own front door
(tools/xlamem/command_line.hpp), so every command, option, default, help text, output and exit
status is the tool's (README, "The command-line tool"). Python adds two things: the tool's
standard output, error and input are `sys.stdout`, `sys.stderr` and `sys.stdin` (a notebook,
pytest's capture or `contextlib.redirect_stdout` see what it prints), and `main()` called in a
process of one's own turns Ctrl-C into KeyboardInterrupt once the solvers of plan, diff and pack
have stopped. Run as `python -m xlamem`, Ctrl-C and a closed pipe end the process as they end
the tool.
"""

from __future__ import annotations

import codecs
import signal
import sys
from typing import Callable, Optional, Sequence, TextIO

from . import _xlamem


def _writer(stream: TextIO) -> Callable[[bytes], None]:
    """write(bytes) onto a text stream: its binary buffer where it has one (the bytes as the
    tool wrote them), else decoded (UTF-8, as the tool writes; a character split across two
    writes is joined)."""
    binary = getattr(stream, "buffer", None)
    if binary is not None:
        def write(data: bytes) -> None:
            stream.flush()  # what Python printed before comes first
            binary.write(data)
            binary.flush()
        return write
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode

    def write_text(data: bytes) -> None:
        stream.write(decode(data))
        stream.flush()
    return write_text


def _reader(stream: TextIO) -> Callable[[int], bytes]:
    """read(size) -> at most size bytes of a text stream (its binary buffer where it has one)."""
    binary = getattr(stream, "buffer", None)
    pending = bytearray()

    def read(size: int) -> bytes:
        if not pending:
            if binary is not None:
                pending.extend(binary.read1(size) if hasattr(binary, "read1") else binary.read(size))
            else:
                pending.extend(stream.read(size).encode("utf-8"))
        data = bytes(pending[:size])
        del pending[:size]
        return data
    return read


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs `xlamem ARGV...` (default: this process's arguments); returns its exit status."""
    args = [str(a) for a in (sys.argv[1:] if argv is None else argv)]
    return _xlamem.run_command_line(args, _writer(sys.stdout), _writer(sys.stderr), _reader(sys.stdin))


if __name__ == "__main__":
    # The tool's way: Ctrl-C ends the process at once (every command, shard's search too), and
    # so does writing to a closed pipe (`python -m xlamem plan m.hlo | head`).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
