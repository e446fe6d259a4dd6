"""`dpkit publish` — a differentially private generalized release (MAXGDDP or DiffGen)."""

from __future__ import annotations

from typing import Any

import click

from dpkit.cli.options import (
    CONTEXT_SETTINGS,
    apply_config,
    default_report_path,
    engine_options,
    global_options,
    input_options,
    output_options,
    privacy_options,
)
from dpkit.cli.results import json_result_option

#: built-in defaults (the same as configs/publish.yaml); a --config file or a flag overrides them.
DEFAULTS: dict[str, Any] = {
    "levels": "auto",
    "raw": False,
    "algorithm": "maxgddp",
    "allocation": "geometric",
    "selection_share": 0.5,
    "selector": "report-noisy-max",
    "grid": 32,
}


@click.command(name="publish", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--schema", "schema_path", required=True, type=click.Path(dir_okay=False),
              help="Schema/taxonomy YAML: the public domains (e.g. taxonomies/adult.yaml).")
@click.option("--target", default=None, help="Class column (default: the schema's target).")
@click.option("--levels", "levels", type=str, default=None, metavar="H|auto",
              help="Number of specializations h, or 'auto' (default): depth from a noisy N and the count noise.")
@click.option("--algorithm", type=click.Choice(["maxgddp", "diffgen"]), default=None,
              help="MAXGDDP (default) or the DiffGen baseline.")
@click.option("--allocation", type=click.Choice(["geometric", "uniform", "adaptive"]), default=None,
              help="Per-level selection budget: geometric r=∛3 (default), uniform, adaptive (MAXGDDP).")
@click.option("--selection-share", type=float, default=None, metavar="S",
              help="Share of ε for the selections (default 0.5); the rest noises the counts (MAXGDDP).")
@click.option("--selector", type=click.Choice(["report-noisy-max", "exponential", "permute-and-flip"]),
              default=None, help="Selection mechanism (default report-noisy-max) (MAXGDDP).")
@click.option("--grid", type=int, default=None, metavar="G",
              help="At most G public split points per numeric interval (default 32) (MAXGDDP).")
@click.option("--raw", is_flag=True, default=None,
              help="Release every positive noisy count (the paper; the default with --levels H) instead of "
                   "suppressing counts below the noise threshold and scaling to the noisy total.")
@click.option("--counts", is_flag=True, default=None,
              help="One row per released cell with a 'count' column instead of repeated records.")
@privacy_options
@output_options
@json_result_option
@input_options
@engine_options
@global_options
@click.pass_context
def command(ctx: click.Context, **kwargs: Any) -> None:
    """Release a differentially private, generalized copy of a classification table.

    Specializes every predictor from its taxonomy root (numbers: from the public bounds),
    choosing each step privately (MAXGDDP, Fu et al. 2018), then releases the noisy
    (cut × class) contingency table as records whose values are taxonomy nodes and intervals
    `[lo,hi)`. `--levels auto` (default) spends 5% of ε on a noisy record count and stops
    where the count noise could no longer resolve the cells; noisy counts below a public
    threshold are suppressed (`--raw`: keep them). The report (OUTPUT.report.json) lists
    every ε spent and the cut; `dpkit generalize` maps other files (e.g. a test split) onto it.

    \b
    Example:
      dpkit publish sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income --epsilon 1 -o out/adult.released.csv
    """
    from dpkit.cli.options import engine_of, output_delimiter, read_options, spark_args
    from dpkit.data.schema import load_schema
    from dpkit.engine import load
    from dpkit.errors import DpkitUsageError
    from dpkit.release.sparse import write_release
    from dpkit.report import write_report
    from dpkit.run import PrivateRun

    p = apply_config(ctx, dict(kwargs), kwargs.get("config"), "publish")
    if p.get("algorithm") == "diffgen":
        given = [f"--{k.replace('_', '-')}" for k in ("allocation", "selection_share", "selector", "grid")
                 if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE]
        if given:
            import warnings

            from dpkit.errors import DpkitWarning

            warnings.warn(f"{', '.join(given)} apply to maxgddp only; diffgen ignores them", DpkitWarning,
                          stacklevel=1)
    for key, value in DEFAULTS.items():
        if p.get(key) is None:
            p[key] = value
    if p.get("epsilon") is None:
        raise DpkitUsageError("--epsilon is required (or set 'epsilon' in the --config file)")
    from dpkit.release.maxgddp import parse_levels, validate_common

    validate_common(p["levels"], p["selection_share"], p["grid"])
    p["levels"] = parse_levels(p["levels"])
    schema = load_schema(p["schema_path"])
    target = p["target"] or schema.target
    if not target:
        raise DpkitUsageError(f"give --target: schema {p['schema_path']} declares no target")
    col = schema.column(target)
    if col.kind != "categorical":
        raise DpkitUsageError(f"--target {target!r} must be a categorical column of {p['schema_path']}")
    output = p["output"]
    report_path = default_report_path(output, p["report"])
    run = PrivateRun("publish", p["algorithm"], p["epsilon"], p["seed"],
                     inputs=[p["data"], p["schema_path"], p.get("config")], outputs=[output, report_path],
                     ledger=p.get("ledger"))
    order = [c for c in schema.used_columns() if c in schema.predictors(target) or c == target]
    table = load(read_options(p["data"], p["encoding"], p["delimiter"]), schema, order, engine=engine_of(p),
                 **spark_args(p))
    with run:
        from dpkit.release import make_model

        model = make_model(p["algorithm"], run.epsilon, p)
        model.fit(table, target, accountant=run.accountant, rng=run.rng)
        rel = model.release_
        parameters = {
            "schema": p["schema_path"],
            "target": target,
            "epsilon": run.epsilon,
            "levels": p["levels"],
            "algorithm": p["algorithm"],
            "counts": bool(p["counts"]),
        }
        parameters["raw"] = model.postprocess == "raw"
        if p["algorithm"] == "maxgddp":
            parameters.update(allocation=p["allocation"], selection_share=p["selection_share"],
                              selector=p["selector"], grid=p["grid"])
        plan = model.depth_
        release = {
            "cut": model.cut_.to_json(),
            "columns": order,
            "target": target,
            "classes": rel.class_labels,
            "selections": [s.to_json() for s in model.selections_],
            "epsilon_counts": model.epsilon_counts_,
            "cells": model.cut_.n_cells() * len(rel.class_labels),
            "released_records": rel.n_records,
            "depth": {"levels": "auto" if plan.n_hat is not None else plan.levels,
                      "schedule_levels": plan.levels, "max_cells": plan.max_cells,
                      "noisy_records": plan.n_hat, "epsilon_noisy_records": plan.epsilon_n},
            "suppression_threshold": model.threshold_,
            "expected_noise_share": round(model.noise_share_, 4),
        }
        if model.noise_share_ > 0.5:
            import warnings

            from dpkit.errors import DpkitWarning

            warnings.warn(f"about {model.noise_share_:.0%} of the released records are expected to be noise "
                          f"({release['cells']:.3g} cells at epsilon {model.epsilon_counts_:.3g} for the counts); "
                          "use --levels auto, fewer --levels or a larger epsilon", DpkitWarning, stacklevel=1)
        report = run.report(parameters, release)
        write_release(rel, output, counts=bool(p["counts"]), columns=order, delimiter=output_delimiter())
        if report_path:
            try:
                write_report(report, report_path)
            except BaseException:
                _remove(output)  # a release without its report is not left behind
                raise
    if p.get("as_json"):
        from dpkit.cli.results import emit_run_result

        emit_run_result(report, output, report=report_path)


def _remove(path: str) -> None:
    import contextlib
    import os

    if path != "-":
        with contextlib.suppress(OSError):
            os.unlink(path)


