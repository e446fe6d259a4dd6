"""`dpkit kanon-select` — a k-anonymous table by choosing which quasi-identifiers to release."""

from __future__ import annotations

from typing import Any

import click

import dpkit
from dpkit.cli.options import dpkit_command, engine_options, input_options, json_option, say


@dpkit_command("kanon-select", config=True)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--target", default=None,
              help="Class column (kept in the output; ranks the features) [default: the schema's target].")
@click.option("-k", "k", type=int, default=None, help="Every equivalence class keeps at least k records.")
@click.option(
    "--quasi-identifiers", "--qi", "quasi_identifiers", default=None, metavar="A,B,...",
    help="Candidate quasi-identifiers (default: every non-target column, or every non-ignored "
    "schema column).",
)
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="Schema YAML: column types for the ranker, ignored columns, missing values.")
@click.option("--ranker", type=click.Choice(["xgboost", "hamming"]), default=None,
              help="xgboost = XGB-KA (XGBoost gain, the default); hamming = Greedy-Hamdist baseline.")
@click.option("--keep", default=None, metavar="A,B,...",
              help="Non-identifying columns to copy to the output as they are (not quasi-identifiers).")
@click.option("--sensitive", default=None, metavar="COL",
              help="Sensitive column: reported ℓ (distinct ℓ-diversity) and copied to the output.")
@click.option("-l", "--l", "l_div", type=int, default=None, metavar="L",
              help="With --sensitive: every class must also hold ≥ L distinct sensitive values.")
@click.option("--require-features", is_flag=True,
              help="Refuse (exit 1) instead of writing the target-only table when no feature can be kept.")
@click.option("--seed", type=click.IntRange(min=0), default=None, metavar="N",
              help="Seed of the XGBoost ranking model (deterministic either way; default 0).")
@click.option("--rank-sample", type=click.IntRange(min=0), default=None, metavar="N",
              help="Train the XGBoost ranking on at most N records drawn with --seed (0: all) [default: 100000]; "
              "the k-anonymity test always uses every record.")
@click.option("--generalize", is_flag=True,
              help="Generalize along the --schema's hierarchies and suppress outliers instead of only "
              "keeping or dropping columns (Flash lattice search; needs --schema).")
@click.option("--max-suppression", type=float, default=None, metavar="FRACTION",
              help="With --generalize: suppress (remove) at most this fraction of the records [default: 0.02].")
@click.option("--max-lattice", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --generalize: the top-ranked columns whose lattice has at most N nodes are "
              "searched jointly; the others enter one by one [default: 20000].")
@click.option("--check-only", is_flag=True,
              help="Do not select: report k (and ℓ) of DATA on --quasi-identifiers; exit 1 if -k/--l fail.")
@json_option
@input_options
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Output CSV [default: '-', stdout; then give --report FILE]; none with --check-only.")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None,
              help="Where to write the JSON report (default: OUTPUT.report.json).")
@engine_options
def command(**p: Any) -> None:
    """Release a k-anonymous table by keeping only some quasi-identifiers (XGB-KA).

    Ranks the candidate quasi-identifiers by XGBoost gain importance for predicting the
    target (Wang & Wan, XGB-KA; or by Greedy-Hamdist's Hamming score with --ranker hamming),
    then keeps each one in rank order if every equivalence class still has at least k records
    (and, with --sensitive/--l, at least L distinct sensitive values). The output holds the
    selected quasi-identifiers, the target and the --keep/--sensitive columns, in input order.
    This is k-anonymity, not differential privacy: the report states k, never an ε.

    If no feature can be kept, the target-only table is written (exit 0, with a warning);
    --require-features refuses instead (exit 1). Identifier-like columns (a different value
    in every record) are refused as quasi-identifiers.

    With --generalize (and --schema), values are generalized along the schema's taxonomy trees
    and numeric bounds (halved per level) instead: a Flash search over the full-domain
    lattice finds the levels, best by the classification metric, at which the table is
    k-anonymous after suppressing at most --max-suppression of the records (removed from the
    output and counted in the report). `dpkit generalize --cut REPORT` maps a test split alike.

    With --check-only, nothing is selected: prints k (the smallest class), how many records sit
    in classes below -k, and ℓ of --sensitive, for DATA on --quasi-identifiers.

    \b
    Example:
      dpkit kanon-select sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          --target income -k 10 -o adult.k10.csv
      dpkit kanon-select sample_data/adult/train.csv --schema taxonomies/adult.yaml \\
          -k 10 --generalize -o adult.k10g.csv
      dpkit kanon-select --check-only adult.k10.csv --qi relationship,race -k 10
    """
    from dpkit.cli.options import (
        default_report_path,
        emit,
        emit_run_result,
        output_delimiter,
        parse_columns,
        read_options,
    )
    check_only, generalize, output, report = p["check_only"], p["generalize"], p["output"], p["report"]
    if generalize and check_only:
        raise dpkit.DpkitUsageError("--generalize and --check-only cannot be combined")
    if p["engine"] == "spark" and (check_only or generalize):
        raise dpkit.DpkitUsageError(f"kanon-select {'--check-only' if check_only else '--generalize'} runs on "
                              "--engine numpy only for now; drop --engine spark (or $DPKIT_ENGINE)")
    qis = parse_columns(p["quasi_identifiers"], "--quasi-identifiers")
    keep = parse_columns(p["keep"], "--keep") or []
    if check_only:  # k (and ℓ) of the table as it is; exit 1 when -k/--l fail
        if output is not None or report is not None:
            raise dpkit.DpkitUsageError("--check-only writes nothing: drop -o/--report (use --json for JSON)")
        options = read_options(p["data"], p["encoding"], p["delimiter"])
        if qis is None:
            raise dpkit.DpkitUsageError("--check-only needs --quasi-identifiers A,B,... (the columns to check)")
        got = dpkit.check_kanon(options, qis, k=p["k"], sensitive=p["sensitive"], l=p["l_div"])
        emit(p["as_json"], got.check.to_dict(), lines=got.check.lines(), ascii=False)
        if not got.satisfied:
            # an error (exit 1) so that scripts can test a table: `... --check-only -k 5 && publish`
            raise dpkit.DataError(got.failure())
        return
    if p["k"] is None:
        raise dpkit.DpkitUsageError("-k is required (every equivalence class keeps at least k records)")
    output = output or "-"  # stdout, as every data command (the report then needs --report)
    report = default_report_path(output, report)
    result = dpkit.kanon_select(
        read_options(p["data"], p["encoding"], p["delimiter"], resolved=False), k=p["k"], schema=p["schema"], target=p["target"], generalize=generalize, quasi_identifiers=qis,
        ranker=p["ranker"] or "xgboost", keep=keep, sensitive=p["sensitive"], l=p["l_div"],
        require_features=p["require_features"], random_state=p["seed"], rank_sample=p["rank_sample"],
        max_suppression=p["max_suppression"], max_lattice=p["max_lattice"], engine=p["engine"],
        spark_master=p["spark_master"], output=output, report=report, output_delimiter=output_delimiter())
    if p["as_json"]:
        # which columns were kept is public (the output's header); class sizes are not
        emit_run_result(result.report, output, report=report,
                        extra={"selected": result.selected, "candidates": list(result.candidates)})
    say(f"dpkit: {result.summary()}; report {report}")
