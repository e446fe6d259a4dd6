"""Map another file (a test split, new records) onto a `kanon-select` release.

The release names its kept quasi-identifiers (``selected``), the generalization of each
(``cut``: taxonomy node names or ``[lo, hi]`` intervals, in publish's format) and those
released as written (``as_written``). Every other candidate was dropped. Records are not
suppressed here: suppression protects the released table, and a test split is not released.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpkit.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema


def apply_release(
    df: pd.DataFrame, release: dict[str, Any], schema: Schema | None, target: str | None, source: str = "<data>",
    carry: list[str] | tuple[str, ...] = (),
) -> pd.DataFrame:
    """``df`` projected on the release's kept columns (+ target when present), generalized alike.

    ``carry``: the columns the release wrote as they are beside the quasi-identifiers (its
    ``keep`` and ``sensitive`` columns), carried through too (an ``evaluate`` after
    ``generalize`` needs them); the columns come in the input's order, as kanon-select writes them.
    Every row comes out, in order: a missing value of a generalized column — a category the
    schema does not list and a number that does not parse are missing too, with one warning —
    is the cut's node holding it, or ``(missing)``; the other columns are written as they are.
    """
    import pandas as pd

    from dpkit.algorithms.publish.cut import Cut
    from dpkit.data.encode import encode

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
    out: dict[str, Any] = {}
    if cut_json:
        from dpkit.algorithms.publish.generalized import Generalizer, reading_schema
        from dpkit.data.unknown import mapping_warning, unknown_values
        from dpkit.errors import DpkitWarning, warn

        # every row comes out, none refused: a missing value is the cut's node holding it, or
        # "(missing)" — the rule of a publish cut's generalize (dpkit.algorithms.publish.generalized)
        reading = reading_schema(schema)  # type: ignore[arg-type]
        cut = Cut.from_json(schema, target or "", cut_json, source=source)  # type: ignore[arg-type]
        unknown = unknown_values(df, schema, list(cut.attributes))  # type: ignore[arg-type]
        table = encode(df, reading, list(cut.attributes), source=source)
        labeller = Generalizer.of(cut, reading, list(cut.attributes))
        mapped, unheld = labeller.labelled(table.columns)
        message = mapping_warning(source, len(df), unknown, unheld, schema.missing_policy)  # type: ignore[union-attr]
        if message:
            warn(message, DpkitWarning)
    for c in wanted:
        if c in cut_json:
            out[c] = mapped[c].to_numpy()
        elif c in as_written or c == target or c in carried:
            out[c] = df[c].to_numpy()
        else:
            raise DataError(f"{source}: the release neither generalizes nor keeps {c!r} as written")
    return pd.DataFrame(out, columns=wanted)
