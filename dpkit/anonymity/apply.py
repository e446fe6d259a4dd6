"""Map another file (a test split, new records) onto a `kanon-select` release.

The release names its kept quasi-identifiers (``selected``), the generalization of each
(``cut``: taxonomy node names or ``[lo, hi]`` intervals, in publish's format) and those
released as written (``as_written``). Every other candidate was dropped. Records are not
suppressed here: suppression protects the released table, and a test split is not released.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.errors import DataError, DpkitWarning, warn

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.data.schema import Schema


def apply_release(
    df: pd.DataFrame, release: dict[str, Any], schema: Schema | None, target: str | None, source: str = "<data>",
    carry: list[str] | tuple[str, ...] = (),
) -> pd.DataFrame:
    """``df`` projected on the release's kept columns (+ target when present), generalized alike.

    ``carry``: the columns the release wrote as they are beside the quasi-identifiers (its
    ``keep`` and ``sensitive`` columns), carried through too (issue 23: an ``evaluate`` after
    ``generalize`` needs them); the columns come in the input's order, as kanon-select writes them.
    """
    import pandas as pd

    from dpkit.data.table import encode
    from dpkit.release.cut import Cut

    selected = list(release.get("selected") or [])
    cut_json = dict(release.get("cut") or {})
    as_written = set(release.get("as_written") or [])
    absent = [c for c in selected if c not in df.columns]
    if absent:
        raise DataError(f"{source}: column(s) {', '.join(map(repr, absent))} of the release are not in the header")
    if cut_json and schema is None:
        raise DataError(f"{source}: the release generalizes {', '.join(cut_json)}; give its schema",
                        param="schema")
    carried = [c for c in carry if c in df.columns]
    chosen = set(selected) | set(carried) | ({target} if target and target in df.columns else set())
    wanted = [c for c in df.columns if c in chosen]
    if schema is not None and schema.missing is not None:
        miss = np.zeros(len(df), dtype=bool)
        for c in wanted:
            miss |= df[c].to_numpy() == schema.missing
        if miss.any():
            from dpkit.console import private

            if schema.missing_policy == "error":
                r = int(np.flatnonzero(miss)[0])
                raise DataError(f"{private(f'{source}:{r + 2}', source)}: a missing value ({schema.missing!r}); "
                                "set missing_policy: drop")

            warn(private(f"{source}: dropped {int(miss.sum())} row(s) with a missing value",
                                  f"{source}: dropped rows with a missing value"), DpkitWarning)
            df = df.loc[~miss].reset_index(drop=True)
    out: dict[str, Any] = {}
    if cut_json:
        cut = Cut.from_json(schema, target or "", cut_json, source=source)  # type: ignore[arg-type]
        table = encode(df, schema, list(cut.attributes), source=source)  # type: ignore[arg-type]
    for c in wanted:
        if c in cut_json:
            attr = cut.attributes[c]
            labels = np.asarray(attr.labels(), dtype=object)
            out[c] = labels[attr.codes(table.columns[c])]
        elif c in as_written or c == target or c in carried:
            out[c] = df[c].to_numpy()
        else:
            raise DataError(f"{source}: the release neither generalizes nor keeps {c!r} as written")
    return pd.DataFrame(out, columns=wanted)
