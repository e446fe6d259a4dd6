"""`dpkit forest train|predict` — a differentially private random forest (DiffPRFs)."""

from __future__ import annotations

from typing import Any

import click

import dpkit
from dpkit.cli.options import (
    domain_options,
    dpkit_command,
    engine_options,
    input_options,
    run_options,
)
from dpkit.defaults import DEFAULT_DECISION


class AutoInt(click.ParamType):
    """An integer in [lo, hi], or ``auto`` (the forest's shape from noisy counts)."""

    name = "integer|auto"

    def __init__(self, lo: int, hi: int) -> None:
        self.range = click.IntRange(lo, hi)

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        return self.range.convert(value, param, ctx)


@dpkit_command("forest", cls=click.Group)
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


@dpkit_command("train", command, config="forest")  # `forest:` in a file, as it always was (configs/forest.yaml)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--schema", "schema_path", type=click.Path(dir_okay=False), default=None,
              help="Schema/taxonomy YAML: the public domains of every column. Without it the domain is "
                   "learned under DP in the run (needs --delta and --target; docs/domain.md).")
@domain_options
@click.option("--target", default=None, help="The class column [default: the schema's target].")
@click.option("--trees", type=AutoInt(1, 10000), default=None, metavar="t|auto",
              help="Number of trees t [default: auto — sized with --depth from noisy class counts (5% of epsilon)].")
@click.option("--depth", type=AutoInt(0, 30), default=None, metavar="d|auto",
              help="Maximum depth d of every tree (d+1 levels share a tree's ε) [default: auto, 1-6, from the "
                   "noisy count of the rarest class].")
@click.option("--features-per-node", default=None, metavar="F",
              help="Attributes drawn at random per node: an integer, 'sqrt' (⌊√|F|⌋) or 'all' [default: sqrt].")
@click.option("--utility", type=click.Choice(["balanced", "max", "info-gain", "gini"]), default=None,
              help="Split score: balanced (max-class-frequency sum with classes weighted by their noisy "
                   "shares; Δ=1), max (unweighted, the paper's), information gain, or Gini [default: balanced].")
@click.option("--sampling", type=click.Choice(["disjoint", "none"]), default=None,
              help="[default: disjoint] disjoint: each tree gets a random disjoint part of the records and all of ε; "
              "none: every tree sees all records with ε/t. (No bootstrap: it breaks the accounting.)")
@click.option("--size-share", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="[default: 0.5] Part of an inner node's level ε spent on its children's noisy "
              "class counts (their sizes); small values make the leaf rule noisier (more, emptier nodes).")
@click.option("--leaf-factor", type=click.FloatRange(0), default=None,
              help="A node is a leaf when its noisy size < FACTOR·√2·|classes|/ε_counts [default: 1].")
@click.option("--columns", default=None, metavar="A,B,...",
              help="Predictor columns [default: every non-ignored schema column but the target].")
@input_options
@engine_options
@run_options
@click.pass_context
def train(ctx: click.Context, **p: Any) -> None:
    """Train a DiffPRFs forest on DATA and write it as JSON (the differentially private release).

    Numeric attributes are split with the continuous exponential mechanism (no
    pre-discretization), categorical ones into one child per value of the schema. The
    report (default MODEL.report.json) lists every ε spent, by tree and level.

    \b
    Example:
      dpkit forest train sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income --epsilon 1 --trees 25 --depth 5 -o model.json
    """
    from dpkit.cli.options import columns_of, domain_keywords, run_private

    run_private(dpkit.forest, p, ("features_per_node", "utility", "sampling", "size_share", "leaf_factor"),
                n_estimators=p.get("trees"), max_depth=p.get("depth"), columns=columns_of(p["columns"]),
                config=p["config"], **domain_keywords(p))


@dpkit_command("predict", command, config=True)
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="Predictions CSV, one row per input row [default: '-', stdout].")
@click.option("--proba", is_flag=True, help="Also write one probability column per class (p_CLASS).")
@click.option("--keep", default=None, metavar="COLS",
              help="Input columns (comma list) to write first, as read, e.g. an id to join on.")
@click.option("--id", "id_column", default=None, metavar="COL", help="An id column to write first (as --keep COL).")
@click.option("--decision", default=DEFAULT_DECISION, show_default=True, metavar="argmax|balanced|threshold:P",
              help="How a class is chosen from the probabilities: the most probable; 'balanced' divides each "
              "by its prior (from the model's noisy leaf counts; for imbalanced targets); 'threshold:P' "
              "predicts the rarer of two classes where its probability is at least P. Free in epsilon.")
@input_options
def predict(model_path: str, data: str, output: str, proba: bool, keep: str | None, id_column: str | None,
            decision: str, encoding: str, delimiter: str) -> None:
    """Predict the class of every row of DATA with a model from `dpkit forest train`.

    Spends no privacy budget (the model is already differentially private). The output
    column is named after the model's target; rows keep the input order. A value equal
    to the schema's missing token follows the branch with the most (noisy) records (or the
    missing branch or leaf a `keep` schema trained); so does a category the model does not
    know or a number that does not parse, with one warning: every row is scored.

    \b
    Example:
      dpkit forest predict model.json sample_data/adult/test.csv -o predictions.csv --proba
    """
    from dpkit.cli.options import output_delimiter, read_options

    if model_path == "-" and data == "-":
        raise dpkit.DpkitUsageError("only one of MODEL and DATA can be read from stdin ('-')")
    dpkit.check_output_paths([model_path, data], [output])
    dpkit.load_forest(model_path).predictions(read_options(data, encoding, delimiter), proba=proba, output=output,
                                              output_delimiter=output_delimiter(), decision=decision,
                                              keep=[c.strip() for c in [id_column or "", *(keep or "").split(",")] if c.strip()])
