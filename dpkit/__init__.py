"""dpkit: differentially private and k-anonymous release of tabular data sets.

A library first (docs/library.md), with the ``dpkit`` command line as its veneer::

    import dpkit
    release = dpkit.publish("train.csv", schema="taxonomies/adult.yaml", epsilon=1.0)
    release.table                  # the released records (pandas)
    release.report                 # exactly the JSON report the command line writes
    test = release.generalize("test.csv")

The public names are imported on first use (PEP 562), so that ``import dpkit`` — and with it
``dpkit --help`` — loads neither numpy nor pandas.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dpkit import _moved
from dpkit.version import __version__

_moved.install()  # the module paths that moved still import, with a DeprecationWarning

#: public name -> the module that defines it
_EXPORTS = {
    "load_schema": "dpkit.schema.parse",
    "Schema": "dpkit.schema.parse",
    "infer_schema": "dpkit.api.domain",
    "LearnedSchema": "dpkit.api.domain",
    "publish": "dpkit.api.publish",
    "Release": "dpkit.api.publish",
    "generalize": "dpkit.api.generalize",
    "forest": "dpkit.api.forest",
    "Forest": "dpkit.api.forest",
    "load_forest": "dpkit.api.forest",
    "cluster": "dpkit.api.cluster",
    "Clustering": "dpkit.api.cluster",
    "kanon_select": "dpkit.api.kanon",
    "KAnonymousTable": "dpkit.api.kanon",
    "check_kanon": "dpkit.api.kanon",
    "DiffPRFsClassifier": "dpkit.api.estimators",
    "DPQTKMeans": "dpkit.api.estimators",
    "DpkitError": "dpkit.errors",
    "DpkitUsageError": "dpkit.errors",
    "DataError": "dpkit.errors",
    "SchemaError": "dpkit.errors",
    "DpkitWarning": "dpkit.errors",
    "PrivacyLeakWarning": "dpkit.errors",
    "ParameterTypeError": "dpkit.errors",
    "Ledger": "dpkit.ledger",
    "set_verbosity": "dpkit.console",
    "ReadOptions": "dpkit.io.source",
    "DataLike": "dpkit.types",
    "SeedLike": "dpkit.types",
    "LedgerLike": "dpkit.types",
    "SchemaLike": "dpkit.types",
    "LedgerError": "dpkit.errors",
    "BudgetExceeded": "dpkit.errors",
    "import_schema": "dpkit.api.taxonomy",
    "draft_schema": "dpkit.api.taxonomy",
    "validate_schema": "dpkit.api.taxonomy",
    "learn_schema": "dpkit.api.taxonomy",
    "evaluate_classifier": "dpkit.api.evaluate",
    "evaluate_clustering": "dpkit.api.evaluate",
    "evaluate_kanon": "dpkit.api.evaluate",
    "report_card": "dpkit.api.card",
    "register_dataset": "dpkit.api.budget",
    "check_budget": "dpkit.api.budget",
    "run_in_reservation": "dpkit.api.budget",
    "budget_events": "dpkit.api.budget",
    "load_experiment": "dpkit.sweep.spec",
    "plan_sweep": "dpkit.sweep.runner",
    "run_sweep": "dpkit.sweep.runner",
    "check_output_paths": "dpkit.run",
    "private_runs": "dpkit.run",
}

__all__ = [  # every name of _EXPORTS (tests/api/test_publish.py checks)
    "__version__",
    "load_schema",
    "Schema",
    "infer_schema",
    "LearnedSchema",
    "publish",
    "Release",
    "generalize",
    "forest",
    "Forest",
    "load_forest",
    "cluster",
    "Clustering",
    "kanon_select",
    "KAnonymousTable",
    "check_kanon",
    "DiffPRFsClassifier",
    "DPQTKMeans",
    "DpkitError",
    "DpkitUsageError",
    "DataError",
    "SchemaError",
    "DpkitWarning",
    "PrivacyLeakWarning",
    "ParameterTypeError",
    "Ledger",
    "set_verbosity",
    "ReadOptions",
    "DataLike",
    "SeedLike",
    "LedgerLike",
    "SchemaLike",
    "LedgerError",
    "BudgetExceeded",
    "import_schema",
    "draft_schema",
    "validate_schema",
    "learn_schema",
    "evaluate_classifier",
    "evaluate_clustering",
    "evaluate_kanon",
    "report_card",
    "register_dataset",
    "check_budget",
    "run_in_reservation",
    "budget_events",
    "load_experiment",
    "plan_sweep",
    "run_sweep",
    "check_output_paths",
    "private_runs",
]

if TYPE_CHECKING:
    from dpkit.api.budget import budget_events, check_budget, register_dataset, run_in_reservation
    from dpkit.api.card import report_card
    from dpkit.api.cluster import Clustering, cluster
    from dpkit.api.domain import LearnedSchema, infer_schema
    from dpkit.api.estimators import DiffPRFsClassifier, DPQTKMeans
    from dpkit.api.evaluate import evaluate_classifier, evaluate_clustering, evaluate_kanon
    from dpkit.api.forest import Forest, forest, load_forest
    from dpkit.api.generalize import generalize
    from dpkit.api.kanon import KAnonymousTable, check_kanon, kanon_select
    from dpkit.api.publish import Release, publish
    from dpkit.api.taxonomy import draft_schema, import_schema, learn_schema, validate_schema
    from dpkit.console import set_verbosity
    from dpkit.errors import (
        BudgetExceeded,
        DataError,
        DpkitError,
        DpkitUsageError,
        DpkitWarning,
        LedgerError,
        ParameterTypeError,
        PrivacyLeakWarning,
        SchemaError,
    )
    from dpkit.io.source import ReadOptions
    from dpkit.ledger import Ledger
    from dpkit.run import check_output_paths, private_runs
    from dpkit.schema.parse import Schema, load_schema
    from dpkit.sweep.runner import plan_sweep, run_sweep
    from dpkit.sweep.spec import load_experiment
    from dpkit.types import DataLike, LedgerLike, SchemaLike, SeedLike


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpkit' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next access does not come here
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
