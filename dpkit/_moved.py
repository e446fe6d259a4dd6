"""Module paths that moved: the old ones still import, with a DeprecationWarning, until dpkit 0.9.

The algorithms live in ``dpkit/algorithms/`` (``publish/``, ``forest/``, ``cluster/``, ``kanon/``),
the schema in ``dpkit/schema/`` and the readers and writers in ``dpkit/io/``
(docs/architecture.md). A program that imports an old path (``dpkit.release.maxgddp``) gets the
new module itself — the same module object, so its classes, functions and monkeypatches are the
new path's — and one warning naming the new path, pointing at the program's import line.
``import dpkit`` puts the finder first on :data:`sys.meta_path`; it answers only the names of
:data:`MOVED`. Standard library only: ``dpkit --help`` imports this module.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: the version that removes the old paths
REMOVED_IN = "0.9"

#: old module path -> new module path
MOVED = {
    "dpkit.release": "dpkit.algorithms.publish",
    **{f"dpkit.release.{m}": f"dpkit.algorithms.publish.{m}"
       for m in ("cut", "depth", "diffgen", "generalized", "maxgddp", "scoring", "sparse")},
    "dpkit.learn": "dpkit.algorithms.forest",
    **{f"dpkit.learn.{m}": f"dpkit.algorithms.forest.{m}" for m in ("dprf", "model")},
    "dpkit.kmeans": "dpkit.algorithms.cluster",
    **{f"dpkit.kmeans.{m}": f"dpkit.algorithms.cluster.{m}"
       for m in ("assign", "common", "dplloyd", "dpqt", "eug", "kmeans")},
    "dpkit.anonymity": "dpkit.algorithms.kanon",
    **{f"dpkit.anonymity.{m}": f"dpkit.algorithms.kanon.{m}"
       for m in ("apply", "checks", "frame", "generalization", "greedy", "hamdist", "hierarchy", "lattice",
                 "select", "utility", "xgb_ka")},
    "dpkit.data.schema": "dpkit.schema.parse",
    "dpkit.data.dates": "dpkit.schema.dates",
    "dpkit.data.infer": "dpkit.schema.draft",
    "dpkit.data.importers": "dpkit.schema.importers",
    # the mechanisms of domain discovery, beside the others (their public grids: dpkit.domain.grid)
    "dpkit.privacy.partition": "dpkit.privacy.mechanisms.partition",
    "dpkit.privacy.quantiles": "dpkit.privacy.mechanisms.quantiles",
    # what a library call accepts as data, read beside the engines that read it
    "dpkit.api.inputs": "dpkit.engine.inputs",
    **{f"dpkit.data.{m}": f"dpkit.io.{m}"
       for m in ("source", "exact_csv", "columnar", "codes", "parquet", "table", "output", "category_csv",
                 "stdout", "pandas_compat", "fingerprint")},
}


def message(old: str) -> str:
    return f"{old} is deprecated and will be removed in dpkit {REMOVED_IN}; import {MOVED[old]}"


class _Finder:
    """Finds an old path of :data:`MOVED` and loads it as the new module, warning once (a meta
    path finder and its loader; not derived from :mod:`importlib.abc`, whose import is not cheap)."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=False)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # the warning names the line of the program that imports the old path: the frames of the
        # import system (and of importlib.import_module) are skipped, and the filters see the
        # importer's module (a script's old import warns, as DeprecationWarnings in __main__ do)
        frame = sys._getframe(1)
        while frame.f_back is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                            or frame.f_code.co_filename == importlib.__file__):
            frame = frame.f_back
        where = frame.f_globals
        warnings.warn_explicit(message(spec.name), DeprecationWarning, frame.f_code.co_filename, frame.f_lineno,
                               module=where.get("__name__", "<unknown>"),
                               registry=where.setdefault("__warningregistry__", {}),
                               # the source line is read through the importer's loader: ``python -c``'s
                               # (a built-in importer) refuses with ImportError, so only for a file
                               module_globals=where if where.get("__file__") else None)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # the new module ran when it was imported


def install() -> None:
    """Put the finder first on :data:`sys.meta_path` (once): an old path is answered before a
    stale directory of that name could be found as a namespace package."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
