"""``results.csv``, the journal of a sweep: one row per finished run, so a rerun resumes."""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any

from dpkit.errors import DpkitError
from dpkit.sweep.spec import BOOK_COLUMNS, TAIL_COLUMNS, Run, _canonical


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, dict)):
        return _canonical(value)
    return "" if value is None else str(value)


class Journal:
    """``results.csv``: one row per finished run, appended and flushed as runs finish."""

    def __init__(self, path: Path, params: list[str]) -> None:
        self.path = path
        self.params = params
        self.header: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.torn = False
        if path.exists():
            self._load()

    def _load(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # killed in the middle of a write: drop the partial last line
            raw = raw[: raw.rfind(b"\n") + 1]
            self.torn = True
            with open(self.path, "wb") as fh:
                fh.write(raw)
        text = raw.decode("utf-8")
        if not text.strip():
            return
        reader = csv.DictReader(io.StringIO(text))
        self.header = list(reader.fieldnames or [])
        if "run_id" not in self.header:
            raise DpkitError(f"{self.path}: not a dpkit results journal (no run_id column); use another output directory",
                             param="output")
        self.rows = [row for row in reader if row.get("run_id")]

    def done(self) -> set[str]:
        return {row["run_id"] for row in self.rows}

    def append(self, run: Run, metrics: dict[str, float], wall: float) -> None:
        row = {"run_id": run.run_id, "sweep": run.sweep, "repeat": str(run.repeat), "seed": str(run.seed)}
        # a grid parameter of another sweep may be fixed in this one: show its value too
        row.update({p: _cell(run.params[p]) if p in run.params else "" for p in self.params})
        for k, v in metrics.items():
            if k in row:
                k = f"metric_{k}"
            row[k] = _cell(v)
        row["wall_seconds"] = f"{wall:.4f}"
        self.rows.append(row)
        wanted = list(BOOK_COLUMNS) + [p for p in self.params] + [k for k in row if k not in BOOK_COLUMNS and k not in self.params and k not in TAIL_COLUMNS] + list(TAIL_COLUMNS)
        new_columns = [c for c in wanted if c not in self.header]
        if not self.header or new_columns:
            # a new metric (or a first row): rewrite the file with the wider header
            keep = [c for c in self.header if c not in TAIL_COLUMNS]
            self.header = keep + [c for c in wanted if c not in keep and c not in TAIL_COLUMNS] + list(TAIL_COLUMNS)
            from dpkit.io.output import atomic_output

            with atomic_output(self.path) as fh:
                w = csv.DictWriter(fh, self.header, lineterminator="\n")
                w.writeheader()
                w.writerows({c: r.get(c, "") for c in self.header} for r in self.rows)
                fh.flush()
                os.fsync(fh.fileno())  # the journal must survive a crash right after
            return
        with open(self.path, "a", encoding="utf-8", newline="") as fh:
            csv.DictWriter(fh, self.header, lineterminator="\n").writerow({c: row.get(c, "") for c in self.header})
            fh.flush()
            os.fsync(fh.fileno())
