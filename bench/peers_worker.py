"""Fit one of dpmm's generators (AIM or MST) and sample a synthetic table — run by
``bench/bench_peers.py`` in its own virtual environment (``.venv-peers``: dpmm 0.1.9 pins
numpy 1.26, pandas 2.1 and scikit-learn 1.5, which dpkit's environment does not share).

No dpkit import: the input is already encoded (one integer code per cell, domain sizes from
dpkit's public schema), so this file only calls dpmm.

Usage: ``python bench/peers_worker.py MODEL CODES.csv DOMAIN.json EPSILON DELTA SEED OUT.csv``
"""

import json
import sys
import time

import pandas as pd


def main() -> None:
    model_name, codes, domain_path, eps, delta, seed, out = sys.argv[1:8]
    from dpmm.models import AIMGM, MSTGM

    domain = json.loads(open(domain_path).read())
    df = pd.read_csv(codes).astype("int64")
    cls = {"aim": AIMGM, "mst": MSTGM}[model_name]
    # dpmm's defaults (its own compression of rare values from noisy counts included), all cores
    model = cls(epsilon=float(eps), delta=float(delta))
    model.set_domain(domain)
    model.set_random_state(__import__("numpy").random.RandomState(int(seed)))
    t0 = time.perf_counter()
    model.fit(df)
    # as many records as the training split has: the peers' papers do the same (a benchmark
    # device; a real release would sample from the model's own noisy total)
    synth = model.generate(n_records=len(df))
    seconds = time.perf_counter() - t0
    synth[list(df.columns)].to_csv(out, index=False)
    print(json.dumps({"seconds": seconds}))


if __name__ == "__main__":
    main()
