"""`dpkit forest train|predict` — a differentially private random forest (DiffPRFs)."""

from __future__ import annotations

import click

from dpkit.cli.options import (
    CONTEXT_SETTINGS,
    default_report_path,
    engine_options,
    global_options,
    input_options,
    output_options,
    privacy_options,
)
from dpkit.cli.results import json_result_option

UTILITY_CHOICES = ["max", "info-gain", "gini"]
SAMPLING_CHOICES = ["disjoint", "none"]


@click.group(name="forest", context_settings=CONTEXT_SETTINGS)
@global_options
def command() -> None:
    """Train and apply a differentially private random forest (DiffPRFs, Mu et al. 2016).

    `train` spends ε and writes the model (JSON: the DP release) and a report of every
    spend by tree and level; `predict` applies a model to new data and spends nothing.

    \b
    Example:
      dpkit forest train sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income --epsilon 1 -o model.json
      dpkit forest predict model.json sample_data/adult/test.csv -o predictions.csv
    """


@command.command(name="train", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--schema", "schema_path", type=click.Path(dir_okay=False), required=True,
              help="Schema/taxonomy YAML: the public domains of every column.")
@click.option("--target", default=None, help="The class column [default: the schema's target].")
@click.option("--trees", type=click.IntRange(1, 10000), default=25, show_default=True,
              help="Number of trees t.")
@click.option("--depth", type=click.IntRange(0, 30), default=5, show_default=True,
              help="Maximum depth d of every tree (d+1 levels share a tree's ε).")
@click.option("--features-per-node", default="sqrt", show_default=True, metavar="F",
              help="Attributes drawn at random per node: an integer, 'sqrt' (⌊√|F|⌋) or 'all'.")
@click.option("--utility", type=click.Choice(UTILITY_CHOICES), default="max", show_default=True,
              help="Split score: max-class-frequency sum (Δ=1), information gain, or Gini.")
@click.option("--sampling", type=click.Choice(SAMPLING_CHOICES), default="disjoint", show_default=True,
              help="disjoint: each tree gets a random disjoint part of the records and all of ε; "
              "none: every tree sees all records with ε/t. (No bootstrap: it breaks the accounting.)")
@click.option("--size-share", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.5,
              show_default=True, help="Part of an inner node's level ε spent on its children's noisy "
              "class counts (their sizes); small values make the leaf rule noisier (more, emptier nodes).")
@click.option("--leaf-factor", type=click.FloatRange(0), default=1.0, show_default=True,
              help="A node is a leaf when its noisy size < FACTOR·√2·|classes|/ε_counts.")
@click.option("--columns", default=None, metavar="A,B,...",
              help="Predictor columns [default: every non-ignored schema column but the target].")
@input_options
@engine_options
@privacy_options
@output_options
@json_result_option
@global_options
@click.pass_context
def train(ctx: click.Context, **params: object) -> None:
    """Train a DiffPRFs forest on DATA and write it as JSON (the differentially private release).

    Numeric attributes are split with the continuous exponential mechanism (no
    pre-discretization), categorical ones into one child per value of the schema. The
    report (default MODEL.report.json) lists every ε spent, by tree and level.

    \b
    Example:
      dpkit forest train sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income --epsilon 1 --trees 25 --depth 5 -o model.json
    """
    from dpkit.cli.options import apply_config

    p = apply_config(ctx, dict(params), params.get("config"), "forest")  # type: ignore[arg-type]
    _train(p)


def _train(p: dict) -> None:
    from dpkit.cli.options import engine_of, read_options, spark_args
    from dpkit.data.schema import load_schema
    from dpkit.engine import load
    from dpkit.errors import DpkitUsageError
    from dpkit.learn.dprf import DiffPRFs, resolve_features_per_node
    from dpkit.learn.model import save_model
    from dpkit.report import write_report
    from dpkit.run import PrivateRun

    output = p["output"]
    report_path = default_report_path(output, p["report"])
    schema = load_schema(p["schema_path"])
    target = p["target"] or schema.target
    if not target:
        raise DpkitUsageError(f"--target is required ({p['schema_path']} names no target)")
    schema.column(target)
    if p["columns"]:
        predictors = [c.strip() for c in str(p["columns"]).split(",") if c.strip()]
        for c in predictors:
            schema.column(c)
    else:
        predictors = schema.predictors(target)
    resolve_features_per_node(p["features_per_node"], max(len(predictors), 1))
    run = PrivateRun(
        "forest train", "diffprfs", p["epsilon"], p["seed"],
        inputs=[p["data"], p["schema_path"], p["config"]], outputs=[output, report_path],
        ledger=p["ledger"],
    )
    table = load(read_options(p["data"], p["encoding"], p["delimiter"]), schema, [*predictors, target],
                 engine=engine_of(p), **spark_args(p))
    forest = DiffPRFs(
        epsilon=run.epsilon, n_trees=p["trees"], max_depth=p["depth"],
        features_per_node=p["features_per_node"], utility=p["utility"], sampling=p["sampling"],
        size_share=p["size_share"], leaf_factor=p["leaf_factor"],
    )
    with run:
        forest.fit(table, target, accountant=run.accountant, rng=run.rng, features=predictors)
        model = forest.model_
        parameters = {
            "data": p["data"], "schema": p["schema_path"], "target": target,
            "columns": predictors, **forest.get_params(), "config": p["config"],
        }
        model.parameters = {k: v for k, v in parameters.items() if k not in ("data", "config")}
        model.privacy = {
            "epsilon_budget": run.epsilon, "epsilon_spent": run.accountant.spent,
            "seeded": run.seeded, "neighbours": "add/remove one record",
        }
        save_model(model, output)
        if report_path:
            release = {
                "model": output, "format_version": model.to_dict()["format_version"],
                "trees": len(model.trees),
                "nodes": sum(len(t) for t in model.trees),
                "leaves": sum(n.is_leaf for t in model.trees for n in t),
            }
            report = run.report(parameters, release)
            report["spends_by_tree"] = forest.spends_by_tree_
            write_report(report, report_path)
    if p.get("as_json"):
        from dpkit.cli.results import emit_run_result

        emit_run_result(report, output, report=report_path)


@command.command(name="predict", context_settings=CONTEXT_SETTINGS)
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="Predictions CSV, one row per input row [default: '-', stdout].")
@click.option("--proba", is_flag=True, help="Also write one probability column per class (p_CLASS).")
@input_options
@global_options
def predict(model_path: str, data: str, output: str, proba: bool, encoding: str, delimiter: str) -> None:
    """Predict the class of every row of DATA with a model from `dpkit forest train`.

    Spends no privacy budget (the model is already differentially private). The output
    column is named after the model's target; rows keep the input order. A value equal
    to the schema's missing token follows the branch with the most (noisy) records.

    \b
    Example:
      dpkit forest predict model.json sample_data/adult/test.csv -o predictions.csv --proba
    """
    import numpy as np
    import pandas as pd

    from dpkit.cli.options import output_delimiter, read_options
    from dpkit.data.table import first_line, read_table, write_csv
    from dpkit.errors import DpkitUsageError
    from dpkit.learn.model import load_model
    from dpkit.run import check_distinct_paths

    if model_path == "-" and data == "-":
        raise DpkitUsageError("only one of MODEL and DATA can be read from stdin ('-')")
    check_distinct_paths([model_path, data], [output])
    model = load_model(model_path)
    opts = read_options(data, encoding, delimiter)
    df = read_table(opts)
    source = "<stdin>" if data == "-" else data
    X = model.encode_frame(df, source=source, first_line=first_line(opts))
    probs = model.predict_proba(X)
    labels = np.asarray(model.classes, dtype=object)[np.argmax(probs, axis=1)]
    out = pd.DataFrame({model.target: labels})
    if proba:
        for i, c in enumerate(model.classes):
            out[f"p_{c}"] = np.round(probs[:, i], 6)
    write_csv(out, output, delimiter=output_delimiter())
