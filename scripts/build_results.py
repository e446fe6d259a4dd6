"""Assemble the results pages: docs/results.md (an index) and docs/results/paper-<name>.md.

Run by ``make reproduce`` after the sweeps (``python scripts/build_results.py``):

- for every experiment in ``configs/experiments/*.yaml``, the sweep's ``results/<stem>/summary.md``
  (tables with the paper's numbers beside ours) becomes ``docs/results/paper-<stem>.md``, its
  PNGs copied to ``docs/results/img/<stem>/`` and the links rewritten; an experiment whose
  results are not on disk keeps its page (and index row) as it was — so that
  ``make reproduce-dpqt`` on a fresh clone rebuilds dpqt only — and one never run gets a page
  with the command that runs it;
- ``docs/results.md``: a short introduction, the experiments' index (runs, total run time), and
  one paragraph per results area (``AREAS`` below) linking to its pages under ``docs/results/``
  (analyses, and ``bench-*.md`` from ``python -m bench.run``, written by their benchmarks);
  a page no area names is listed under "Other pages", so none is left out.

Nothing is recomputed: this only gathers files, so it takes a second. A page whose content
did not change is not rewritten (the index keeps its "Built" date).
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
PAGE = "paper-{}.md"  # an experiment's page under docs/results/
BUILT = re.compile(r"Built \d{4}-\d\d-\d\d \d\d:\d\d UTC\.")

# One paragraph per results area of the index, and its pages under docs/results/ (stems).
# Hand-written: edit here, then run this script.
AREAS: list[tuple[str, str, list[str]]] = [
    (
        "publish (MAXGDDP, DiffGen)",
        "How accurate a tree trained on a `dpkit publish` release is: against the MAXGDDP paper "
        "and DiffGen on Adult and Iris, on twelve tables nobody tuned for, against dpmm's AIM and "
        "MST, on imbalanced targets, on tables whose strongest predictor is a date, and with "
        "missing values kept. Usage: [docs/publish.md](publish.md).",
        ["publish", "publish-robust", "peers-aim", "peers-mst", "imbalanced", "dates", "missing"],
    ),
    (
        "Learning the domain under DP (no schema)",
        "What a run without `--schema` costs against a hand-written or reviewed schema: the "
        "discovery's defaults on Adult, the metadata (types, missing tokens) learned under DP, "
        "tables as they come and held-out public tables, dpmm's AIM and MST with no schema either, "
        "the public vocabularies and budget of mid-size tables, identifiers and bounds a person "
        "would write. How it works: [docs/domain.md](domain.md).",
        ["domain", "metadata", "frontdoor", "peers-frontdoor", "public-heldout", "affordable", "bounds-ids"],
    ),
    (
        "forest (DiffPRFs)",
        "`dpkit forest` against the DiffPRFs paper (Fig. 1) and diffprivlib's random forest on "
        "Adult: accuracy by ε and depth, and fit time. Usage: [docs/forest.md](forest.md).",
        ["forest", "bench-forest"],
    ),
    (
        "cluster (DPQTk-means)",
        "`dpkit cluster` against the DPQTk-means paper, DPk-means and EUGk-means (NICV ratio and "
        "F-measure on S1, unbalance, Gowalla and Iris), bounds learned under DP when none are "
        "given, and speed and memory. Usage: [docs/cluster.md](cluster.md).",
        ["cluster", "cluster-bounds", "bench-cluster"],
    ),
    (
        "kanon-select (XGB-KA)",
        "`dpkit kanon-select` against the XGB-KA paper's Greedy-Hamdist (precision and recall of a "
        "linear SVM on Adult and breast-cancer) and its running time. Not differential privacy. "
        "Usage: [docs/kanon-select.md](kanon-select.md).",
        ["kanon", "bench-kanon"],
    ),
    (
        "Speed, memory and scale",
        "Start-up and load throughput, `publish`'s time and memory, 1M–100M rows against DuckDB "
        "(generated, and the paired runs by hand), and the Spark engine against numpy. Usage: "
        "[docs/spark.md](spark.md).",
        ["bench-foundation", "bench-publish", "bench-scale", "scale-history", "bench-spark"],
    ),
    (
        "Round 5 (issues 21–25)",
        "What the changes of issues 21–25 cost and gained, measured: the library-first layout's "
        "speed, exact selection, imbalanced targets' split scores, runs without a schema, the "
        "privacy review's figures, the ledger's δ and cluster without bounds.",
        ["round5"],
    ),
]


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


def previous_rows(text: str, names: list[str]) -> dict[str, str]:
    """The experiments' index rows of the current index page (``| [name](...) | ...``)."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        row = re.match(r"^\| \[([^\]]+)\]\([^)]*\) \|", line)
        if row and row.group(1) in names and row.group(1) not in rows:
            rows[row.group(1)] = line
    return rows


def title(page: Path) -> str:
    """A page's first heading (any level), else its stem."""
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,6} (.+?)\s*$", line)
        if m:
            return m.group(1)
    return page.stem


def write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (atomically)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def build(root: Path = ROOT, results: Path | None = None, out: Path | None = None) -> str:
    """Write the experiments' pages and the index ``out``; return the index's text."""
    results = results or root / "results"
    out = out or root / "docs" / "results.md"
    pages = out.parent / "results"  # the index links to pages/<page>, relative to itself
    pages.mkdir(parents=True, exist_ok=True)
    img_root = pages / "img"
    names = experiment_names(root / "configs" / "experiments")
    old = out.read_text(encoding="utf-8") if out.exists() else ""
    kept_rows = previous_rows(old, names)
    index = ["| experiment | runs | run time (sum over runs) | summary |", "|---|---|---|---|"]
    for name in names:
        src = results / name
        summary = src / "summary.md"
        page = pages / PAGE.format(name)
        link = f"results/{PAGE.format(name)}"
        if not summary.exists() and page.exists() and "Not run yet:" not in page.read_text(encoding="utf-8"):
            # not rerun here (a single `make reproduce-<paper>`, a fresh clone): as it was
            index.append(kept_rows.get(name, f"| [{name}]({link}) | | | results/{name}/summary.md |"))
            continue
        if not summary.exists():
            command = f"dpkit evaluate sweep configs/experiments/{name}.yaml -o results/{name}"
            index.append(f"| {name} | not run | | `{command}` |")
            write(page, f"# {name}\n\nNot run yet: `{command}`.\n")
            continue
        dest = img_root / name
        if dest.exists():
            shutil.rmtree(dest)
        pngs = sorted(src.glob("*.png"))
        if pngs:
            dest.mkdir(parents=True, exist_ok=True)
            for png in pngs:
                shutil.copy2(png, dest / png.name)
        text = relink(summary.read_text(encoding="utf-8"), f"img/{name}/")
        write(page, text.rstrip() + "\n")
        runs, seconds = experiment_stats(src / "results.csv")
        index.append(f"| [{name}]({link}) | {runs} | {seconds / 60:.1f} min | results/{name}/summary.md |")
    experiment_pages = {PAGE.format(n) for n in names}
    others = sorted(p for p in pages.glob("*.md") if p.name not in experiment_pages)
    by_stem = {p.stem: p for p in others}
    titles = {p.stem: title(p) for p in others}
    shared = {t for t in titles.values() if list(titles.values()).count(t) > 1}
    # two pages with one title (peers-aim, peers-mst): say which
    titles = {stem: f"{t} — {stem}" if t in shared else t for stem, t in titles.items()}
    body: list[str] = []
    listed: set[str] = set()
    for heading, paragraph, stems in AREAS:
        found = [by_stem[s] for s in stems if s in by_stem]
        if not found:
            continue
        body += [f"## {heading}", "", paragraph, ""]
        body += [f"- [{titles[p.stem]}](results/{p.name})" for p in found]
        body.append("")
        listed.update(p.stem for p in found)
    rest = [p for p in others if p.stem not in listed]
    if rest:
        body += ["## Other pages", ""] + [f"- [{titles[p.stem]}](results/{p.name})" for p in rest] + [""]
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "# dpkit results",
        "",
        "Measured numbers, one page per area under `docs/results/`; this index is generated by",
        "`python scripts/build_results.py` (its paragraphs are `AREAS` in that script) — do not",
        "edit it by hand. `make reproduce` reruns every paper experiment",
        "(`dpkit evaluate sweep configs/experiments/<name>.yaml -o results/<name>`) and then rebuilds",
        "the experiments' pages (`docs/results/paper-<name>.md`) and this index; `make bench` and the",
        "`bench-*` targets rewrite their own pages. Each table gives mean ± sd over the runs of a",
        "grid point, with the paper's number beside ours where the paper states one; plots show",
        "±1 sd error bars and the non-private baseline and majority-class floor as dashed lines.",
        "Runs are seeded from (experiment, sweep, grid point, repeat), so rerunning gives the same",
        "numbers. Machine: 2 cores shared with other work (timings are inflated by contention).",
        f"Built {now}.",
        "",
        "## Paper experiments",
        "",
        "Each paper's experiment, rerun by `make reproduce` (`make reproduce-<paper>` for one),",
        "its tables and plots with the paper's numbers beside ours:",
        "",
        *index,
        "",
    ]
    text = "\n".join(head + body).rstrip() + "\n"
    if old and BUILT.sub("", old) == BUILT.sub("", text):
        return old  # nothing changed: keep the date it was built
    write(out, text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="sweep output directories (default: results/)")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "results.md",
                        help="the index (default: docs/results.md); the pages go to results/ beside it")
    args = parser.parse_args(argv)
    build(ROOT, args.results, args.output)
    print(f"wrote {args.output} and its pages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
