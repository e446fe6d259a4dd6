"""Assemble docs/results.md from the sweep outputs and the measured sections.

Run by ``make reproduce`` after the sweeps (``python scripts/build_results.py``):

- for every experiment in ``configs/experiments/*.yaml``, the sweep's ``results/<stem>/summary.md``
  (tables with the paper's numbers beside ours), its PNGs copied to
  ``docs/results/img/<stem>/`` and the links rewritten; an experiment whose results are not
  on disk keeps its section (and index row) from the current page as it was — so that
  ``make reproduce-dpqt`` on a fresh clone rebuilds dpqt only — and one never run is
  listed with the command that runs it;
- every ``docs/results/*.md`` section (analyses, and ``bench-*.md`` from ``python -m bench.run``);
- a short introduction and an index of the experiments (runs, total run time).

Nothing is recomputed: this only gathers files, so it takes a second.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the papers' order in the README; other experiments follow alphabetically
ORDER = ["maxgddp-adult", "maxgddp-iris", "diffprfs-adult", "dpqt", "xgbka"]
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")


def demote(text: str, levels: int = 1) -> str:
    """Push every markdown heading down ``levels`` levels (outside code blocks)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"^#{1,5} ", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def relink(text: str, prefix: str) -> str:
    """Prefix relative link targets (not URLs, anchors or absolute paths) with ``prefix``."""

    def fix(m: re.Match) -> str:
        target = m.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith(("#", "/")):
            return m.group(0)
        return f"{m.group(1)}{prefix}{target}{m.group(3)}"

    return LINK.sub(fix, text)


def experiment_stats(results_csv: Path) -> tuple[int, float]:
    """(runs, total wall seconds of the runs) from a sweep journal."""
    if not results_csv.exists():
        return 0, 0.0
    with open(results_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    total = 0.0
    for r in rows:
        try:
            total += float(r.get("wall_seconds") or 0)
        except ValueError:
            pass
    return len(rows), total


def experiment_names(config_dir: Path) -> list[str]:
    stems = sorted(p.stem for p in config_dir.glob("*.yaml"))
    return [s for s in ORDER if s in stems] + [s for s in stems if s not in ORDER]


def anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).strip().replace(" ", "-")


def previous_page(text: str, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(section, index row) per experiment that the current page shows as run.

    An experiment's section runs from its ``## name`` heading to the next experiment's or
    to the next top-level ``# `` heading (Analyses, Benchmarks); sections saying "Not run
    yet" are not kept.
    """
    sections: dict[str, str] = {}
    rows: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    fenced = False

    def close() -> None:
        if current is not None:
            body = "\n".join(lines).rstrip()
            if "Not run yet:" not in body:
                sections[current] = body
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        row = re.match(r"^\| \[([^\]]+)\]\(#[^)]*\) \|", line)
        if row and row.group(1) in names and current is None:
            rows[row.group(1)] = line
        head = None if fenced else re.match(r"^(#{1,2}) (\S+)\s*$", line)
        if head and (head.group(1) == "#" or head.group(2) in names):
            close()
            current = head.group(2) if head.group(1) == "##" else None
            lines = []
        if current is not None:
            lines.append(line)
    close()
    return sections, {k: v for k, v in rows.items() if k in sections}


def build(root: Path = ROOT, results: Path | None = None, out: Path | None = None) -> str:
    results = results or root / "results"
    docs = root / "docs"
    out = out or docs / "results.md"
    img_root = out.parent / "results" / "img"  # links below are relative to the page
    names = experiment_names(root / "configs" / "experiments")
    kept, kept_rows = previous_page(out.read_text(encoding="utf-8"), names) if out.exists() else ({}, {})
    index = ["| experiment | runs | run time (sum over runs) | summary |", "|---|---|---|---|"]
    body: list[str] = []
    for name in names:
        src = results / name
        summary = src / "summary.md"
        if not summary.exists() and name in kept:
            # not rerun here (a single `make reproduce-<paper>`, a fresh clone): as it was
            index.append(kept_rows.get(name, f"| [{name}](#{anchor(name)}) | | | results/{name}/summary.md |"))
            body += [kept[name], ""]
            continue
        if not summary.exists():
            index.append(f"| {name} | not run | | `dpkit evaluate sweep configs/experiments/{name}.yaml -o results/{name}` |")
            body += [f"## {name}", "", f"Not run yet: `dpkit evaluate sweep configs/experiments/{name}.yaml -o results/{name}`.", ""]
            continue
        dest = img_root / name
        if dest.exists():
            shutil.rmtree(dest)
        pngs = sorted(src.glob("*.png"))
        if pngs:
            dest.mkdir(parents=True, exist_ok=True)
            for png in pngs:
                shutil.copy2(png, dest / png.name)
        text = summary.read_text(encoding="utf-8")
        text = relink(demote(text), f"results/img/{name}/")
        runs, seconds = experiment_stats(src / "results.csv")
        index.append(f"| [{name}](#{anchor(name)}) | {runs} | {seconds / 60:.1f} min | results/{name}/summary.md |")
        body += [text.rstrip(), ""]
    sections: list[str] = []
    extra = sorted(p for p in (docs / "results").glob("*.md"))
    analyses = [p for p in extra if not p.name.startswith("bench-")]
    benches = [p for p in extra if p.name.startswith("bench-")]
    for group, files in (("Analyses", analyses), ("Benchmarks", benches)):
        if not files:
            continue
        sections += [f"# {group}", ""]
        for p in files:
            text = p.read_text(encoding="utf-8").strip()
            if not text.lstrip().startswith("#"):
                text = f"## {p.stem}\n\n{text}"
            sections += [relink(demote(text), "results/"), ""]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "# dpkit results",
        "",
        "Measured numbers, generated — do not edit by hand. `make reproduce` reruns every paper",
        "experiment (`dpkit evaluate sweep configs/experiments/<name>.yaml -o results/<name>`) and",
        "then `python scripts/build_results.py` rebuilds this page; `make bench` refreshes the",
        "benchmark sections. Each table gives mean ± sd over the runs of a grid point, with the",
        "paper's number beside ours where the paper states one; plots show ±1 sd error bars and",
        "the non-private baseline and majority-class floor as dashed lines. Runs are seeded from",
        "(experiment, sweep, grid point, repeat), so rerunning gives the same numbers. Machine:",
        f"2 cores shared with other work (timings are inflated by contention). Built {now}.",
        "",
        "# Paper experiments",
        "",
        *index,
        "",
    ]
    text = "\n".join(head + body + sections).rstrip() + "\n"
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="sweep output directories (default: results/)")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "results.md", help="default: docs/results.md")
    args = parser.parse_args(argv)
    build(ROOT, args.results, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
