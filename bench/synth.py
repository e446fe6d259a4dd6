"""Synthetic Adult-schema tables of any size, for load and scaling benchmarks.

:func:`synthetic_adult` resamples every column of ``sample_data/adult/train.csv``
independently (with replacement), so the result has Adult's header, value sets and
marginals — including its ``?`` missing tokens — but no real record and none of the
columns' correlations. It is for timing code, not for measuring utility.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
SCHEMA = ROOT / "taxonomies" / "adult.yaml"


def synthetic_adult(n_rows: int, seed: int = 0, path: str | Path | None = None) -> pd.DataFrame:
    """``n_rows`` rows of Adult-like data (strings, Adult's header); written to ``path`` if given.

    Each column is drawn independently from Adult's empirical marginal with a generator
    seeded by ``seed`` (benchmark data, no privacy involved), so equal arguments give equal
    tables.
    """
    import numpy as np
    import pandas as pd

    if n_rows < 1:
        raise ValueError(f"n_rows={n_rows} should be >= 1")
    source = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    rng = np.random.default_rng(seed)
    out = {}
    for name in source.columns:
        values = source[name].to_numpy()
        out[name] = values[rng.integers(0, len(values), size=n_rows)]
    df = pd.DataFrame(out, columns=source.columns)
    if path is not None:
        df.to_csv(path, index=False, lineterminator="\n")
    return df


if __name__ == "__main__":  # python -m bench.synth N OUT.csv [SEED]
    import sys

    n, out = int(sys.argv[1]), sys.argv[2]
    synthetic_adult(n, int(sys.argv[3]) if len(sys.argv) > 3 else 0, out)
    print(f"wrote {out}", file=sys.stderr)
