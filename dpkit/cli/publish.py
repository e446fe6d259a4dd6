"""`dpkit publish` — a differentially private generalized release (MAXGDDP or DiffGen)."""

from __future__ import annotations

from typing import Any

import click

from dpkit.cli.options import (
    domain_options,
    dpkit_command,
    engine_options,
    input_options,
    run_options,
)

#: the options only MAXGDDP takes (DiffGen ignores them; tests/cli/test_public_imports.py checks the list)
MAXGDDP_ONLY = ("allocation", "selection_share", "selector", "grid", "score")


@dpkit_command("publish")
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
    import dpkit
    from dpkit.cli.options import declarations, output_delimiter, public_values, run_private

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
                schema=p["schema_path"], target=p["target"], counts=bool(p["counts"]), output_delimiter=output_delimiter(),
                on_invalid=p.get("on_invalid") or "error", delta=p.get("delta"), domain_share=p.get("domain_share"),
                ignore=p.get("ignore"), values=public_values(p.get("public_values")), **declarations(p))
