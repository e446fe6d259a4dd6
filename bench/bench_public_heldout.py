"""Held-out public tables the repository does not ship, through bench_frontdoor's protocol ->
printed (docs/results/public-heldout.md records a run).

The files are fetched copies of public UCI tables (docs/results/public-heldout.md names where
each came from); pass their paths. Each is split 2/3 : 1/3 by class (seed 0) and run as
bench/bench_frontdoor.py runs its tables: no schema (0.2 of ε for the domain) against the
reviewed data-derived draft, ε = 1, δ = 1e-6, ROC AUC of the rarer class. Nothing was tuned on
these tables, except where docs/results/public-heldout.md says a decision used one.

Run: ``python -m bench.bench_public_heldout --runs 5 --mushroom M.csv --shoppers S.csv --credit C.csv``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
#: table -> (target, columns declared ignored)
TABLES = {"mushroom": ("edibility", ()), "shoppers": ("Revenue", ()), "credit": ("default.payment.next.month", ("ID",))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    for name in TABLES:
        ap.add_argument(f"--{name}", help=f"the {name} CSV (a fetched copy)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import bench.bench_frontdoor as fd
    from bench.bench_domain import OUT as DOMAIN_OUT

    DOMAIN_OUT.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")
    names = [n for n in TABLES if getattr(args, n)]
    if not names:
        ap.error("give at least one table's path (--mushroom, --shoppers, --credit)")
    for name in names:
        target, ignore = TABLES[name]
        path = getattr(args, name)

        def build(path: str = path, name: str = name, target: str = target, ignore: tuple[str, ...] = ignore) -> fd.Table:
            return fd._write("pub-" + name, pd.read_csv(path, dtype=str, keep_default_na=False), target, ignore)

        fd.TABLES[name] = fd.Entry(build, False, name)
        d = fd.run_table(name, args.runs)
        r = d["results"]
        print(f"{name}: ROC AUC no schema {fd._stat(r['none'], 'roc_auc')}, draft {fd._stat(r['draft'], 'roc_auc')}, "
              f"raw {fd._stat(r['raw'], 'roc_auc')}; accuracy no schema {fd._stat(r['none'], 'accuracy')}, "
              f"draft {fd._stat(r['draft'], 'accuracy')}; errors {d['errors'][:3]}", flush=True)


if __name__ == "__main__":
    main()
