"""The corpus tests' session summary: how many tables ran, how many held every invariant, and
how the commands exited (`make fuzz` reports it)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    from harness import TALLY

    if not TALLY:
        return
    tests = sorted({k[0] for k in TALLY if k[1] in ("tables", "clean")})
    terminalreporter.section("corpus")
    for name in tests:
        terminalreporter.write_line(f"{name}: {TALLY[name, 'clean']} of {TALLY[name, 'tables']} tables clean")
    total = sum(TALLY[n, "tables"] for n in tests)
    clean = sum(TALLY[n, "clean"] for n in tests)
    terminalreporter.write_line(f"all: {clean} of {total} tables clean")
    exits = sorted((k, v) for k, v in TALLY.items() if k[1].startswith("exit"))
    terminalreporter.write_line("commands: " + "; ".join(f"{k[0]} {k[1]}: {v}" for k, v in exits))
