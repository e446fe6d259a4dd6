"""Fit one of dpmm's generators (AIM or MST) and sample a synthetic table — run by
``bench/bench_peers.py`` in its own virtual environment (``.venv-peers``: dpmm 0.1.9 pins
numpy 1.26, pandas 2.1 and scikit-learn 1.5, which dpkit's environment does not share).

No dpkit import: this file only calls dpmm (and pandas).

Usage: ``python bench/peers_worker.py MODEL CODES.csv DOMAIN.json EPSILON DELTA SEED OUT.csv`` (the
code mode of bench_peers.py: dpkit's schema gives the domain), or ``python bench/peers_worker.py
frontdoor SPEC.json`` (the no-schema mode of bench_peers_frontdoor.py: raw CSV files, dpmm's own
preprocessing; see :func:`frontdoor`).
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


def frontdoor(spec_path: str) -> None:
    """The front-door mode (``bench/bench_peers_frontdoor.py``): a raw CSV and no domain, as a
    user of dpmm's pipelines would run them (its README's ``MSTPipeline(epsilon, delta,
    proc_epsilon)`` then ``fit(df)``): dpmm's own DP preprocessing (PrivTree bins of each numeric
    column, bounds from its DP approximate-bounds histogram, with ``proc_epsilon`` split evenly
    over the numeric columns) and categories, column kinds and static columns read from the
    data. The generator gets ``epsilon - proc_epsilon`` so that the whole run spends
    ``epsilon``.

    Writes the synthetic table as codes in dpmm's discretized domain (``OUT.synth.csv``), the
    test split mapped into the same domain (``OUT.test.csv``; a category the training split
    did not have gets one more code, which the synthetic table never holds), the domain sizes
    (``OUT.domain.json``) and prints a JSON line: seconds, bins per numeric column, ε spent by
    the preprocessing, the number of privacy-leak warnings dpmm logged."""
    import logging

    import numpy as np
    from dpmm.pipelines import AIMPipeline, MSTPipeline

    spec = json.loads(open(spec_path).read())
    target, dates, drop = spec["target"], spec.get("date", []), spec.get("ignore", [])

    def read(path: str) -> pd.DataFrame:
        # as a user would read it: pandas' type inference; the target kept as labels (a
        # numeric 0/1 target would otherwise be binned as a number); declared dates parsed
        df = pd.read_csv(path, skipinitialspace=True, dtype={target: str}).drop(columns=drop)
        for c in dates:
            df[c] = pd.to_datetime(df[c])
        return df

    train, test = read(spec["train"]), read(spec["test"])
    leaks = []

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "PrivacyLeakage" in record.getMessage():
                leaks.append(record.getMessage())

    logging.getLogger("dpmm").addHandler(Count())
    eps, proc_eps = float(spec["epsilon"]), float(spec["proc_epsilon"])
    cls = {"aim": AIMPipeline, "mst": MSTPipeline}[spec["model"]]
    pipe = cls(epsilon=eps - proc_eps, delta=float(spec["delta"]), proc_epsilon=proc_eps)
    t0 = time.perf_counter()
    pipe.fit(train, random_state=int(spec["seed"]))
    # as many records as the training split has (a benchmark device, as in the code mode)
    codes = pipe.gen.generate(n_records=len(train))
    seconds = time.perf_counter() - t0
    proc = pipe.proc
    domain = {c: int(proc.bin_domain[c]) for c in codes.columns}
    for c, v in proc.nan_columns.items():  # dpmm's missing-value flags, as its transform adds them
        test[v["name"]] = test[c].isna()
        test[c] = test[c].fillna(v["fill_value"])
    out = {}
    for c in proc.cat_cols:
        index = {v: i for i, v in enumerate(proc.categories[c])}
        out[c] = test[c].map(lambda v, index=index, c=c: index.get(v, domain[c])).astype(np.int64)
        if out[c].eq(domain[c]).any():
            domain[c] += 1  # unseen in training: its own code
    for c in proc.num_cols:
        x = test[c]
        if x.isna().any():  # missing in the test split only: the first value (a bench corner)
            x = x.fillna(x.dropna().iloc[0])
        out[c] = pd.Series(proc.binners[c].transform(x.to_numpy()), index=test.index)
    cols = list(codes.columns)
    codes[cols].astype(np.int64).to_csv(spec["out"] + ".synth.csv", index=False)
    pd.DataFrame(out)[cols].to_csv(spec["out"] + ".test.csv", index=False)
    open(spec["out"] + ".domain.json", "w").write(json.dumps(domain))
    print(json.dumps({"seconds": seconds, "bins": {c: int(proc.bin_domain[c]) for c in proc.num_cols},
                      "proc_epsilon_spent": sum(v or 0 for v in proc.spent_epsilon.values()),
                      "static": list(proc.static_columns), "leak_warnings": len(leaks)}))


if __name__ == "__main__":
    if sys.argv[1] == "frontdoor":
        frontdoor(sys.argv[2])
    else:
        main()
