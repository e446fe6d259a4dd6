"""Benchmark of `dpkit kanon-select`, and the XGB-KA vs Greedy-Hamdist results page.

``main(quick)`` times the selection (docs/algorithms.md §4; issue 6's targets: under 5 s on
Adult's 30,162 records and 13 candidate features for any k, under 60 s on a 1,000,000-row
synthetic table with Adult's schema) and writes ``docs/results/bench-kanon.md``.

``python -m bench.bench_kanon --experiment DIR`` turns the results of
``dpkit evaluate sweep configs/experiments/xgbka.yaml -o DIR`` into
``docs/results/kanon.md`` (means over the five paired splits, wins per k, plots).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
ADULT_SCHEMA = ROOT / "taxonomies" / "adult.yaml"
RESULTS = ROOT / "docs" / "results"
KS = (2, 5, 10, 25, 50, 100)


def _adult_clean():
    import pandas as pd

    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    return df[~(df == "?").any(axis=1)].reset_index(drop=True)


def synthetic_adult(n: int, seed: int = 0):
    """``n`` records with Adult's schema: Adult rows drawn with replacement, age and
    hours-per-week jittered by up to ±2 (within the schema's bounds) so that the table has
    combinations Adult does not."""
    import numpy as np

    base = _adult_clean()
    rng = np.random.default_rng(seed)
    df = base.iloc[rng.integers(0, len(base), n)].reset_index(drop=True)
    for col, lo, hi in (("age", 15, 95), ("hours-per-week", 1, 100)):
        v = df[col].astype(int).to_numpy() + rng.integers(-2, 3, n)
        df[col] = np.clip(v, lo, hi).astype(str)
    return df


def _time_library(df, k: int, ranker: str) -> tuple[float, float, float, int, float]:
    from dpkit.anonymity.select import kanon_select
    from dpkit.data.schema import load_schema

    schema = load_schema(ADULT_SCHEMA)
    start, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = kanon_select(df, target="income", k=k, schema=schema, ranker=ranker, seed=0)
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    return total, sel.selector.rank_seconds_, sel.selector.select_seconds_, len(sel.selector.selected_), cpu


def _time_cli(path: Path, k: int, ranker: str) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of the command in a fresh process."""
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dpkit", "-q", "kanon-select", str(path), "--schema", str(ADULT_SCHEMA),
               "--target", "income", "-k", str(k), "--ranker", ranker, "-o", str(Path(tmp) / "out.csv")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(quick: bool = False) -> str:
    """Time the selection on Adult and on a large synthetic table; returns a markdown section."""
    adult = _adult_clean()
    rows = []
    ks = (2, 100) if quick else KS
    for ranker in ("xgboost", "hamming"):
        for k in ks:
            total, rank, greedy, kept, cpu = _time_library(adult, k, ranker)
            cli = _time_cli(ADULT, k, ranker) if not quick or k == ks[0] else (float("nan"),) * 2
            rows.append(("Adult", len(adult), ranker, k, kept, rank, greedy, total, cpu, *cli))
    n_big = 100_000 if quick else 1_000_000
    big = synthetic_adult(n_big)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.csv"
        big.to_csv(path, index=False)
        for ranker in ("xgboost", "hamming"):
            for k in (10, 100) if not quick else (10,):
                total, rank, greedy, kept, cpu = _time_library(big, k, ranker)
                cli = _time_cli(path, k, ranker)
                rows.append(("synthetic Adult", n_big, ranker, k, kept, rank, greedy, total, cpu, *cli))
    lines = [
        "## kanon-select: running time",
        "",
        f"`dpkit kanon-select DATA --schema taxonomies/adult.yaml --target income -k K --ranker R` "
        f"on Adult (sample_data/adult/train.csv, rows without '?', 13 candidate features) and on a "
        f"{n_big:,}-row synthetic table with Adult's schema (Adult rows drawn with replacement, age "
        f"and hours-per-week jittered ±2). Not differential privacy: no ε. One run per cell; "
        f"machine: 2 cores ({platform.processor() or platform.machine()}), shared with other jobs "
        f"while measured (load average {os.getloadavg()[0]:.1f} at the end), so wall times are inflated; "
        f"CPU = user + system seconds, close to what the single-threaded command takes on an idle core. "
        f"*library* = `kanon_select` on the table in memory (schema encoding + ranking + greedy); "
        f"*CLI* = the whole command in a fresh process (Python and library start-up, CSV read, "
        f"output and report written). XGBoost ranks on at most 100,000 records (`--rank-sample`). "
        f"Targets: Adult < 5 s for any k, 1,000,000 rows < 60 s.",
        "",
        "| data | records | ranker | k | kept | ranking s | greedy s | library s (wall / CPU) | CLI s (wall / CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d, n, r, k, kept, rank, greedy, total, cpu, cli, cli_cpu in rows:
        cli_s = "" if cli != cli else f"{cli:.2f} / {cli_cpu:.2f}"
        lines.append(
            f"| {d} | {n:,} | {r} | {k} | {kept} | {rank:.2f} | {greedy:.2f} | {total:.2f} / {cpu:.2f} | {cli_s} |"
        )
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench-kanon.md").write_text(text, encoding="utf-8")
    return text


# --------------------------------------------------------------------------- results page

SWEEPS = {
    "adult-1500": "Adult, 1,500 records sampled keeping the class ratio (the paper's setting)",
    "adult-all": "Adult, all 30,162 records",
    "breast-cancer": "Breast Cancer Wisconsin (Original), 683 records, malignant (4) positive",
}


def experiment_page(results_dir: str | Path, out: Path = RESULTS / "kanon.md") -> str:
    """docs/results/kanon.md from a sweep's results.csv: means over splits, paired wins, plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    res = pd.read_csv(Path(results_dir) / "results.csv")
    n_splits = res["split"].nunique()
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# kanon-select: XGB-KA vs Greedy-Hamdist",
        "",
        "Reproduces Wang & Wan (XGB-KA), Fig. 1-6: k-anonymous feature selection on the training "
        "part (70 %, stratified), then a linear SVM (scikit-learn `LinearSVC`, C = 1, every selected "
        "feature one-hot) trained on it; precision and recall of the positive class on the held-out "
        f"30 %. Mean over {n_splits} splits (the same splits for both rankers: split = 0..{n_splits - 1} "
        "seeds the sample, the split and XGBoost). k = 1 is no anonymity (every feature kept), the "
        "reference. *seconds* = the selection alone (ranking + greedy), single-threaded XGBoost, on a "
        "2-core machine shared with other jobs. Not differential privacy: no ε.",
        "",
        "Regenerate: `dpkit evaluate sweep configs/experiments/xgbka.yaml -o results/xgbka` then "
        "`python -m bench.bench_kanon --experiment results/xgbka`.",
        "",
    ]
    for sweep, title in SWEEPS.items():
        sub = res[res["sweep"] == sweep]
        if sub.empty:
            continue
        mean = sub.groupby(["ranker", "k"])[["selected_features", "precision", "recall", "seconds"]].mean()
        piv = sub.pivot_table(index=["k", "split"], columns="ranker", values=["precision", "recall"])
        lines += [f"## {title}", "",
                  "| k | XGB-KA features | Hamdist features | XGB-KA precision | Hamdist precision | "
                  "XGB-KA recall | Hamdist recall | XGB-KA s | Hamdist s | splits where XGB-KA ≥ Hamdist (P / R) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for k in sorted(sub["k"].unique()):
            x = mean.loc[("xgboost", k)]
            h = mean.loc[("hamming", k)]
            p = piv.loc[k]
            wins_p = int((p[("precision", "xgboost")] >= p[("precision", "hamming")]).sum())
            wins_r = int((p[("recall", "xgboost")] >= p[("recall", "hamming")]).sum())
            lines.append(
                f"| {k} | {x.selected_features:.1f} | {h.selected_features:.1f} | {x.precision:.3f} | "
                f"{h.precision:.3f} | {x.recall:.3f} | {h.recall:.3f} | {x.seconds:.2f} | {h.seconds:.2f} | "
                f"{wins_p} / {wins_r} of {len(p)} |"
            )
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
        for metric, ax in zip(("precision", "recall", "seconds"), axes, strict=True):
            for ranker, label in (("xgboost", "XGB-KA"), ("hamming", "Greedy-Hamdist")):
                m = sub[sub["ranker"] == ranker].groupby("k")[metric]
                ax.errorbar(m.mean().index, m.mean().values, yerr=m.std().values, marker="o", capsize=3, label=label)
            ax.set_xscale("log")
            ax.set_xlabel("k")
            ax.set_title(metric)
        axes[0].legend()
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        png = out.parent / f"kanon-{sweep}.png"
        fig.savefig(png, dpi=90)
        plt.close(fig)
        lines += ["", f"![{title}]({png.name})", ""]
    lines += _claim_section(res)
    text = "\n".join(lines) + "\n"
    out.write_text(text, encoding="utf-8")
    return text


def _claim_section(res) -> list[str]:
    """What holds of the paper's claim, counted from the results (k ≥ 2 only)."""
    out = ["## What holds of the paper's claim", "",
           "The paper (Fig. 1-6) reports XGB-KA above Greedy-Hamdist in precision and recall at "
           "every k on both data sets, and faster. Counted over the mean of the splits at each "
           "k ≥ 2 (a tie is a cell where both keep the same features, typically when each keeps "
           "one or none):", "",
           "| data | precision: XGB-KA better / tie / worse | recall: better / tie / worse | "
           "selection time XGB-KA ÷ Hamdist |", "|---|---|---|---|"]
    for sweep, title in SWEEPS.items():
        sub = res[(res["sweep"] == sweep) & (res["k"] >= 2)]
        if sub.empty:
            continue
        mean = sub.groupby(["k", "ranker"])[["precision", "recall", "seconds"]].mean().unstack("ranker")
        cells = []
        for metric in ("precision", "recall"):
            d = mean[(metric, "xgboost")] - mean[(metric, "hamming")]
            cells.append(f"{int((d > 1e-9).sum())} / {int((d.abs() <= 1e-9).sum())} / {int((d < -1e-9).sum())} of {len(d)}")
        ratio = mean[("seconds", "xgboost")].mean() / mean[("seconds", "hamming")].mean()
        out.append(f"| {title} | {cells[0]} | {cells[1]} | {ratio:.1f}× |")
    out += ["", CLAIM_NOTES]
    return out


CLAIM_NOTES = """\
**The claim does not hold in this reproduction.** XGB-KA is not better at every k. Over the
18 (data set, k ≥ 2) cells it has the higher mean precision in 2 and the higher mean recall in
none; Greedy-Hamdist is ahead in 6 (precision) and 8 (recall); the rest are ties (both keep
one or no feature, often the same). On all of Adult, XGB-KA is behind at k = 5, 10 and 25
(recall 0.02 against 0.20-0.33) and ahead only in precision at k = 2; on the 1,500-record
sample it ties or is behind; on Breast Cancer Wisconsin the differences are within 0.02. XGB-KA is also *slower*, not faster: training 100
boosted trees costs far more than Greedy-Hamdist's single pass over value-by-class counts
(the paper's Greedy-Hamdist implementation may have computed pairwise distances record by
record, which would explain its timing claim; docs/algorithms.md §4 reads the score from counts).

Why XGB-KA loses on Adult: the greedy selection is order-dependent, and on exact values very
few features fit together at k ≥ 2 (continuous columns such as age or capital-gain, and
many-valued ones such as education or native-country, split the table into small classes).
XGB-KA's first choice is `relationship` (highest gain); after it, the next high-gain features
(`marital-status`, `capital-gain`, `education`, ...) each create a class below k with it and
are rejected, so XGB-KA usually ends with `relationship` alone or with a weak second feature.
No `relationship` value has a majority of `>50K` records (husbands 46 %, wives 49 % on the 30,162 records), so a
classifier on it predicts the negative class for everyone: precision and recall near 0.
Greedy-Hamdist's score favours many-valued features (`age`, `occupation`, `education` come
first: more values, more differing pairs); `age` is rejected and it typically keeps
`education`/`education-num` (or `occupation`) with `sex`, whose combinations include groups
with a `>50K` majority (Masters 56 %, Doctorate 75 %, Prof-school 75 %), so its SVM does find
positives. Gain importance measures a feature's value *inside a model that has
all the features*; what the greedy selection needs is the value of a feature *in the small
set that survives k-anonymity*, which the ranking does not see. The paper gives no numbers
(figures only), and does not say how it preprocessed the data (it may have discretized
numeric columns); `run_experiment` accepts `bin_numeric: N` to try equal-width bins of the
schema's bounds, which in a quick check on the 1,500-record sample (5 bins; split 0; k = 2,
10, 50) did not change the picture: one or two features kept for either ranker.
"""


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--experiment", metavar="DIR", help="write docs/results/kanon.md from a sweep directory")
    args = parser.parse_args()
    os.chdir(ROOT)
    if args.experiment:
        print(experiment_page(args.experiment))
    else:
        print(main(quick=args.quick))
