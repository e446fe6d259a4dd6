"""`dpkit publish` — a differentially private generalized release (MAXGDDP or DiffGen) — and
`dpkit generalize`, which maps other data onto a released cut (no privacy budget)."""

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

#: the options only MAXGDDP takes (DiffGen ignores them; tests/cli/test_public_imports.py checks the list)
MAXGDDP_ONLY = ("allocation", "selection_share", "selector", "grid", "score")


@dpkit_command("publish", config=True)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--schema", "schema_path", default=None, type=click.Path(dir_okay=False),
              help="Schema/taxonomy YAML: the public domains (e.g. taxonomies/adult.yaml). Without it the "
                   "domain is learned under DP in the run (needs --delta and --target; docs/domain.md).")
@domain_options
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
@click.option("--score", type=click.Choice(["auto", "max", "gini"]), default=None,
              help="Split score: max (the paper's), gini (favours splits that concentrate a class), or auto "
              "(default: gini when noisy N × ε ≥ 5000, else max) (MAXGDDP).")
@click.option("--grid", type=int, default=None, metavar="G",
              help="At most G public split points per numeric interval (default 32) (MAXGDDP).")
@click.option("--raw", is_flag=True, default=None,
              help="Release every positive noisy count (the paper; the default with --levels H) instead of "
                   "suppressing counts below the noise threshold and scaling to the noisy total.")
@click.option("--counts", is_flag=True, default=None,
              help="One row per released cell with a 'count' column instead of repeated records.")
@run_options
@input_options
@engine_options
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
    from dpkit.cli.options import domain_keywords, output_delimiter, run_private

    p = kwargs
    if p.get("algorithm") == "diffgen":
        given = [k for k in MAXGDDP_ONLY if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE]
        if given:
            import warnings

            from dpkit.errors import DpkitWarning

            warnings.warn(f"{', '.join('--' + k.replace('_', '-') for k in given)} apply to maxgddp only; "
                          "diffgen ignores them", DpkitWarning, stacklevel=1)
        for k in MAXGDDP_ONLY:
            p[k] = None
    run_private(dpkit.publish, p, ("algorithm", "levels", "allocation", "selection_share", "selector", "score", "grid",
                                   "raw"),
                counts=bool(p["counts"]), output_delimiter=output_delimiter(), **domain_keywords(p))


@dpkit_command("generalize", config=True)
@click.argument("data", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--cut", "cut_path", required=True, type=click.Path(dir_okay=False),
              help="The report of a `dpkit publish` or `dpkit kanon-select --generalize` run (its cut is applied).")
@click.option("--schema", "schema_path", default=None, type=click.Path(dir_okay=False),
              help="Schema YAML (default: the schema named in the report).")
@click.option("-o", "--output", "output", default="-", type=click.Path(dir_okay=False, allow_dash=True),
              help="Output file [default: '-', stdout]. --engine spark: also DIR/ or a URI (a directory "
              "of part files) and .parquet (docs/spark.md).")
@input_options
@engine_options
def generalize(data: str, cut_path: str, schema_path: str | None, output: str, **kwargs: Any) -> None:
    """Map DATA onto the generalization released by `dpkit publish` or `kanon-select --generalize`.

    Every predictor value becomes the taxonomy node or interval of the released cut that
    contains it, so a test split (or new records to score) matches the released table's
    columns. The class column is kept as it is when present. Every row comes out, in order: a
    missing value, a category the schema does not list and a number that does not parse are
    read as missing (the cut's node holding it, the root of a column left at its root, else
    '(missing)'), with one warning. This reads only DATA and the public report: it is not a release of
    the training data and spends no ε. With a `kanon-select --generalize` report, DATA is
    projected on the kept quasi-identifiers (+ the target), each generalized to its chosen
    level; no record is suppressed (a test split is not released).

    \b
    Example:
      dpkit generalize sample_data/adult/test.csv --cut out/adult.released.report.json \\
          -o out/adult.test.generalized.csv
    """
    from dpkit.cli.options import output_delimiter, read_options

    dpkit.generalize(read_options(data, kwargs["encoding"], kwargs["delimiter"], resolved=False), cut_path,
                     schema=schema_path, output=output, output_delimiter=output_delimiter(),
                     engine=kwargs.get("engine"), spark_master=kwargs.get("spark_master"))
