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
    from dpkit.algorithms.kanon.select import kanon_select
    from dpkit.schema.parse import load_schema

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
    return text + "\n" + generalize_timing(n_big, (10,) if quick else (10, 100))


def generalize_timing(n_big: int = 1_000_000, ks: tuple[int, ...] = (10, 100)) -> str:
    """Whole-command times of `kanon-select --generalize` (Adult, and an n_big-row synthetic
    Adult); replaces that section of docs/results/bench-kanon.md."""
    import json

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "synthetic.csv"
        synthetic_adult(n_big).to_csv(big, index=False)
        for label, path, n in (("Adult", ADULT, len(_adult_clean())), ("synthetic Adult", big, n_big)):
            for k in ks:
                import resource

                out = Path(tmp) / "out.csv"
                cmd = [sys.executable, "-m", "dpkit", "-q", "kanon-select", str(path), "--schema",
                       str(ADULT_SCHEMA), "-k", str(k), "--generalize", "-o", str(out)]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(cmd, check=True, cwd=ROOT)
                wall = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                rel = json.loads((Path(tmp) / "out.report.json").read_text())["release"]
                g = rel["generalization"]
                rows.append((label, n, k, len(rel["selected"]), 100 * rel["suppression"]["fraction"],
                             g["lattice_nodes"], g["checked"], rel["seconds"]["ranking"],
                             rel["seconds"]["search"], wall, cpu))
    lines = [
        "## kanon-select --generalize: running time", "",
        "`dpkit kanon-select DATA --schema taxonomies/adult.yaml -k K --generalize -o OUT`, the whole "
        "command in a fresh process (start-up, CSV read, ranking, Flash search, output and report "
        f"written), one run per cell; load average {os.getloadavg()[0]:.1f} on 2 cores at the end, so "
        "wall times are inflated: CPU = user + system seconds. Targets: Adult < 10 s, 1,000,000 rows < 60 s.",
        "",
        "| data | records | k | kept | suppressed | lattice nodes | checked | ranking s | search s | CLI s (wall / CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d, n, k, kept, sup, nodes, checked, rank, search, wall, cpu in rows:
        lines.append(f"| {d} | {n:,} | {k} | {kept} | {sup:.2f} % | {nodes:,} | {checked:,} | {rank:.2f} | "
                     f"{search:.2f} | {wall:.2f} / {cpu:.2f} |")
    section = "\n".join(lines) + "\n"
    path = RESULTS / "bench-kanon.md"
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    head = old.split("## kanon-select --generalize: running time")[0].rstrip()
    path.write_text((head + "\n\n" if head else "") + section, encoding="utf-8")
    return section


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
    lines += [""] + generalization_section(results_dir)
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


# --------------------------------------------------------------------------- generalization series

GEN_DATA = {
    "adult": ("Adult, all 30,162 records", ADULT, ADULT_SCHEMA, "income", ">50K"),
    "breast-cancer": ("Breast Cancer Wisconsin (Original), 683 records",
                      ROOT / "sample_data" / "breast-cancer-wisconsin" / "breast-cancer-wisconsin.csv",
                      ROOT / "taxonomies" / "breast-cancer-wisconsin.yaml", "class", "4"),
}
METHODS = ("xgb-ka", "hamdist", "generalize", "anjana")


def _ladders(frame, candidates, schema):
    """The schema's hierarchies as dpkit's ladders, over the values of ``frame``."""
    import numpy as np
    import pandas as pd

    from dpkit.algorithms.kanon.hierarchy import categorical_ladder, numeric_ladder

    out = {}
    for c in candidates:
        col = schema.columns[c]
        if col.kind == "categorical":
            out[c] = (categorical_ladder(col), None)
        else:
            codes, uniques = pd.factorize(frame[c].to_numpy())
            vals = np.clip(pd.to_numeric(pd.Series(uniques)).to_numpy(dtype=float), col.lo, col.hi)
            out[c] = (numeric_ladder(col, vals, [str(u) for u in uniques]), codes)
    return out


def anjana_peer(train, candidates, schema, target: str, k: int, max_suppression: float):
    """anjana's k-anonymity (greedy full-domain generalization, suppression ≤ the fraction)
    on the same hierarchies dpkit searches; returns the output, its levels and a release that
    maps a test split alike."""
    import contextlib
    import io

    import numpy as np
    from anjana.anonymity._k_anonymity import k_anonymity_inner

    ladders = _ladders(train, candidates, schema)
    hierarchies = {}
    for c, (lad, _) in ladders.items():
        # anjana's hierarchy: one row per value as written, one column per level
        hierarchies[c] = {h: np.asarray(lv.labels, dtype=object)[lv.maps] for h, lv in enumerate(lad.levels)}
    with contextlib.redirect_stdout(io.StringIO()):  # anjana prints its progress
        out, suppressed, levels = k_anonymity_inner(
            train[[*candidates, target]], [], list(candidates), int(k), 100 * max_suppression, hierarchies,
        )
    release = {"selected": list(candidates), "cut": {}, "as_written": []}
    for c, (lad, _) in ladders.items():
        lv = lad.levels[int(levels[c])]
        if lv.cut is None:
            release["as_written"].append(c)
        else:
            release["cut"][c] = lv.cut
    kept = [c for c in candidates if int(levels[c]) < ladders[c][0].height]
    return out.reset_index(drop=True), release, kept, int(suppressed)


def generalization_series(outdir: str | Path, splits: dict[str, int] | None = None,
                          ks: tuple[int, ...] = KS, max_suppression: float = 0.02) -> Path:
    """XGB-KA vs Greedy-Hamdist vs --generalize vs anjana, same splits, one process → CSV."""
    import pandas as pd
    import pycanon.anonymity as pycanon
    from sklearn.model_selection import train_test_split

    from dpkit.algorithms.kanon.apply import apply_release
    from dpkit.algorithms.kanon.generalization import kanon_generalize
    from dpkit.algorithms.kanon.select import kanon_select
    from dpkit.algorithms.kanon.utility import classifier_utility
    from dpkit.sweep.tasks.kanon import _load

    splits = splits or {"adult": 2, "breast-cancer": 5}
    rows = []
    for name, (_title, data, schema_path, target, positive) in GEN_DATA.items():
        frame, schema = _load(str(data), str(schema_path), target)
        candidates = [c for c in schema.predictors(target) if c in frame.columns]
        for split in range(splits[name]):
            train, test = train_test_split(frame, test_size=0.3, stratify=frame[target].to_numpy(),
                                           random_state=split + 1)
            train, test = train.reset_index(drop=True), test.reset_index(drop=True)
            for k in ks:
                for method in METHODS:
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if method in ("xgb-ka", "hamdist"):
                            sel = kanon_select(train, target=target, k=k, schema=schema, seed=split,
                                               ranker="xgboost" if method == "xgb-ka" else "hamming")
                            out, kept, suppressed = sel.output, list(sel.selector.selected_), 0
                            mapped = test[[*kept, target]]
                        elif method == "generalize":
                            gen = kanon_generalize(train, target=target, k=k, schema=schema, seed=split,
                                                   max_suppression=max_suppression)
                            out, kept, suppressed = gen.output, gen.release["selected"], gen.suppressed
                            mapped = apply_release(test, gen.release, schema, target)
                        else:
                            out, release, kept, suppressed = anjana_peer(train, candidates, schema, target, k,
                                                                         max_suppression)
                            mapped = apply_release(test, release, schema, target)
                    seconds = time.perf_counter() - start
                    features = kept if method != "anjana" else candidates
                    k_seen = pycanon.k_anonymity(out, features) if features and len(out) else len(out)
                    u = classifier_utility(out, mapped, features, target, positive=positive, seed=split)
                    rows.append({
                        "data": name, "split": split, "k": k, "method": method, "features": len(kept),
                        "suppressed": suppressed / len(train), "k_pycanon": int(k_seen),
                        "svm_accuracy": u["svm"]["accuracy"], "precision": u["svm"]["precision"],
                        "recall": u["svm"]["recall"], "tree_accuracy": u["entropy_tree"]["accuracy"],
                        "seconds": seconds,
                    })
                    print(rows[-1], flush=True)
    path = Path(outdir) / "generalization.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def generalization_section(results_dir: str | Path) -> list[str]:
    """The generalization series as markdown (empty when it was not run)."""
    import pandas as pd

    path = Path(results_dir) / "generalization.csv"
    if not path.is_file():
        return []
    res = pd.read_csv(path)
    lines = [
        GEN_HEADING, "",
        "The same training/test splits (70/30, stratified, seeds 1..), in one run "
        "(`python -m bench.bench_kanon --generalization results/xgbka`): XGB-KA and Greedy-Hamdist "
        "selection (keep or drop whole columns), `kanon-select --generalize` (Flash over the "
        "schema's hierarchies, ≤ 2 % of the records suppressed, utility CM + 0.1·LM), and the peer "
        "anjana 1.2 (`k_anonymity`, its greedy full-domain generalization with ≤ 2 % suppression) on "
        "the *same* hierarchies (dpkit's ladders passed as anjana hierarchies; anjana generalizes "
        "all 13 / 9 candidates). The test split is mapped onto each output's levels; classifiers "
        "are trained on the output. *k seen* = the smallest k over runs, checked by pycanon on "
        "every output. *features* = columns not generalized to the whole domain. Means over splits.",
        "",
    ]
    for name, (title, *_rest) in GEN_DATA.items():
        sub = res[res["data"] == name]
        if sub.empty:
            continue
        n_splits = sub["split"].nunique()
        sub = sub.assign(method=pd.Categorical(sub["method"], categories=list(METHODS), ordered=True))
        mean = sub.groupby(["k", "method"], observed=True).agg(
            features=("features", "mean"), suppressed=("suppressed", "mean"), svm=("svm_accuracy", "mean"),
            precision=("precision", "mean"), recall=("recall", "mean"), tree=("tree_accuracy", "mean"),
            seconds=("seconds", "mean"), k_seen=("k_pycanon", "min"))
        lines += [f"### {title} ({n_splits} splits)", "",
                  "| k | method | features | suppressed | SVM accuracy | precision | recall | tree accuracy | k seen | seconds |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for (k, method), r in mean.iterrows():
            lines.append(f"| {k} | {method} | {r.features:.1f} | {100 * r.suppressed:.2f} % | {r.svm:.3f} | "
                         f"{r.precision:.3f} | {r.recall:.3f} | {r.tree:.3f} | {int(r.k_seen)} | {r.seconds:.2f} |")
        piv = sub.pivot_table(index=["k", "split"], columns="method", values="svm_accuracy", observed=True)
        if {"generalize", "anjana"} <= set(piv.columns):
            better = piv.groupby(level="k").apply(lambda d: int((d["generalize"] > d["anjana"]).sum()))
            lines += ["", "Splits where `--generalize`'s SVM accuracy beats anjana's, per k: "
                      + ", ".join(f"k={k}: {v}/{n_splits}" for k, v in better.items()), ""]
        lines.append("")
    return lines


GEN_HEADING = "## Generalization: `kanon-select --generalize` against selection and anjana"


def update_generalization_section(results_dir: str | Path, page: Path = RESULTS / "kanon.md") -> str:
    """Replace (or append) the generalization section of an existing results page."""
    section = "\n".join(generalization_section(results_dir)).rstrip() + "\n"
    old = page.read_text(encoding="utf-8") if page.is_file() else ""
    before, _, after = old.partition(GEN_HEADING)
    tail = ""
    if after:  # keep whatever followed the old section (the next top-level heading on)
        rest = after.split("\n## ", 1)
        tail = ("\n## " + rest[1]) if len(rest) > 1 else ""
    text = before.rstrip() + "\n\n" + section + GEN_NOTES + tail
    page.write_text(text, encoding="utf-8")
    return section


GEN_NOTES = """
**What holds.** Every output of every method was k-anonymous by pycanon's check (*k seen* ≥ k
in every row). On Adult, `--generalize` keeps 6-9 generalized columns with at most 2 % of
the records suppressed and reaches an SVM accuracy of 0.82-0.84 at every k (0.838 at k = 10,
the target was ≥ 0.80), against 0.75-0.78 for selection alone (which keeps one or two whole
columns; 0.75 is the majority class). It beats anjana on the same hierarchies in SVM accuracy
at every k, on every split of both data sets (the counts above); on Adult by 0.02-0.07.
anjana generalizes every candidate greedily (the column with the most distinct values first,
whatever its use for the class) and keeps more columns, but coarser where it matters; at
k = 100 on Adult its SVM predicts almost only the majority class (recall 0.08).
anjana's recall is higher than ours at k = 2 on Adult (0.56 against 0.53): our measure
trades some recall for precision there.

**What does not.** On Breast Cancer Wisconsin at k = 25 `--generalize` keeps 2 columns, not
the ≥ 4 the issue asked for. That target cannot be met by full-domain generalization of the
halving hierarchy within 2 % suppression: every combination of 4 of the 9 columns, at the
coarsest split of each (2 intervals), still leaves at least 31 of the 683 records (4.5 %) in
classes smaller than 25 (checked exhaustively for split points 3, 4, 5 and 6). With
`--max-suppression 0.05` it keeps 3 columns (13 records suppressed): a fourth would cost 31+
suppressed records, which the classification metric counts as errors. Selection alone keeps
nothing there from k = 25 on.

**Timing** (wall seconds, on a 2-core machine at load ≈ 10 from other jobs, so inflated):
`--generalize` takes 3-6 s per run on the 21,113-record Adult training part (XGBoost ranking
included), anjana 66-142 s (its greedy loop maps values in Python); on Breast Cancer
Wisconsin 0.2-0.9 s against 1.8-2.8 s. Whole-command times, incl. 1,000,000 rows:
[bench-kanon.md](bench-kanon.md).
"""


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--experiment", metavar="DIR", help="write docs/results/kanon.md from a sweep directory")
    parser.add_argument("--generalization", metavar="DIR",
                        help="run the generalization series (incl. anjana) into DIR/generalization.csv")
    parser.add_argument("--page-only", action="store_true",
                        help="with --generalization: only rewrite the section of docs/results/kanon.md")
    parser.add_argument("--generalize-timing", action="store_true",
                        help="time kanon-select --generalize (Adult, 1,000,000 rows) into bench-kanon.md")
    args = parser.parse_args()
    os.chdir(ROOT)
    if args.generalize_timing:
        print(generalize_timing(100_000 if args.quick else 1_000_000))
    elif args.generalization:
        if not args.page_only:
            print(generalization_series(args.generalization))
        print(update_generalization_section(args.generalization))
    elif args.experiment:
        print(experiment_page(args.experiment))
    else:
        print(main(quick=args.quick))
