"""Run benchmarks: ``python -m bench.run [name ...] [--quick]`` (``make bench``).

Each ``bench/bench_<name>.py`` defines ``main(quick: bool = False) -> str`` returning a
markdown section; this runner writes it to ``docs/results/bench-<name>.md`` and prints it.
With no names, every benchmark runs (in name order). A failing benchmark is reported and
the others still run; the exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "docs" / "results"


def available() -> list[str]:
    return sorted(p.stem[len("bench_"):] for p in HERE.glob("bench_*.py"))


def run_one(name: str, quick: bool) -> str:
    module = importlib.import_module(f"bench.bench_{name}")
    section = module.main(quick=quick)
    if not isinstance(section, str):
        raise TypeError(f"bench_{name}.main() returned {type(section).__name__}, expected markdown str")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"bench-{name}.md"
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text(section if section.endswith("\n") else section + "\n", encoding="utf-8")
    tmp.replace(out)
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(available())})")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a smoke run)")
    args = parser.parse_args(argv)
    names = args.names or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)} (have: {', '.join(available())})")
    failed = []
    for name in names:
        start = time.perf_counter()
        print(f"== bench {name}{' (quick)' if args.quick else ''}", file=sys.stderr, flush=True)
        try:
            section = run_one(name, args.quick)
        except Exception:  # one broken benchmark must not hide the others' results
            traceback.print_exc()
            failed.append(name)
            continue
        print(section, flush=True)
        print(f"== {name}: {time.perf_counter() - start:.1f} s -> docs/results/bench-{name}.md",
              file=sys.stderr, flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
