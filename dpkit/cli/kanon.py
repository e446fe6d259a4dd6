"""`dpkit kanon-select` — a k-anonymous table by choosing which quasi-identifiers to release."""

from __future__ import annotations

import click

from dpkit.cli.options import (
    CONTEXT_SETTINGS,
    engine_options,
    global_options,
    input_options,
    json_option,
    state_for,
)


@click.command(name="kanon-select", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--target", "-t", default=None,
              help="Class column (kept in the output; ranks the features) [default: the schema's target].")
@click.option("-k", "k", type=int, default=None, help="Every equivalence class keeps at least k records.")
@click.option(
    "--quasi-identifiers", "--qi", "quasi_identifiers", default=None, metavar="A,B,...",
    help="Candidate quasi-identifiers (default: every non-target column, or every non-ignored "
    "schema column).",
)
@click.option("--schema", type=click.Path(dir_okay=False), default=None,
              help="Schema YAML: column types for the ranker, ignored columns, missing values.")
@click.option("--ranker", type=click.Choice(["xgboost", "hamming"]), default="xgboost", show_default=True,
              help="xgboost = XGB-KA (XGBoost gain); hamming = Greedy-Hamdist baseline.")
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
@click.option("--rank-sample", type=click.IntRange(min=0), default=100_000, show_default=True, metavar="N",
              help="Train the XGBoost ranking on at most N records drawn with --seed (0: all); "
              "the k-anonymity test always uses every record.")
@click.option("--generalize", is_flag=True,
              help="Generalize along the --schema's hierarchies and suppress outliers instead of only "
              "keeping or dropping columns (Flash lattice search; needs --schema).")
@click.option("--max-suppression", type=float, default=0.02, show_default=True, metavar="FRACTION",
              help="With --generalize: suppress (remove) at most this fraction of the records.")
@click.option("--max-lattice", type=click.IntRange(min=1), default=20_000, show_default=True, metavar="N",
              help="With --generalize: the top-ranked columns whose lattice has at most N nodes are "
              "searched jointly; the others enter one by one.")
@click.option("--check-only", is_flag=True,
              help="Do not select: report k (and ℓ) of DATA on --quasi-identifiers; exit 1 if -k/--l fail.")
@json_option
@input_options(short_tabs=False)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Output CSV [default: '-', stdout; then give --report FILE]; none with --check-only.")
@click.option("--report", "report", type=click.Path(dir_okay=False), default=None,
              help="Where to write the JSON report (default: OUTPUT.report.json).")
@engine_options
@global_options
def command(
    data: str, target: str | None, k: int | None, quasi_identifiers: str | None, schema: str | None,
    ranker: str, keep: str | None, sensitive: str | None, l_div: int | None, require_features: bool,
    seed: int | None, rank_sample: int, generalize: bool, max_suppression: float, max_lattice: int,
    check_only: bool, as_json: bool, encoding: str, delimiter: str,
    output: str | None, report: str | None, engine: str | None = None, spark_master: str | None = None,
) -> None:
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
    from dpkit.anonymity.frame import parse_columns, require_columns
    from dpkit.cli.options import read_options
    from dpkit.data.table import read_table
    from dpkit.errors import DpkitUsageError

    if k is not None and k < 1:
        raise DpkitUsageError(f"-k must be ≥ 1, got {k}")
    if l_div is not None and l_div < 1:
        raise DpkitUsageError(f"--l must be ≥ 1, got {l_div}")
    if l_div is not None and sensitive is None:
        raise DpkitUsageError("--l needs --sensitive COLUMN (the column that must be ℓ-diverse)")
    if generalize and check_only:
        raise DpkitUsageError("--generalize and --check-only cannot be combined")
    if generalize and schema is None:
        raise DpkitUsageError("--generalize needs --schema S.yaml (its taxonomies and bounds are the hierarchies)")
    if not 0 <= max_suppression < 1:
        raise DpkitUsageError(f"--max-suppression must be a fraction in [0, 1), got {max_suppression:g}")
    from dpkit.cli.options import engine_of

    on_spark = engine_of({"engine": engine}) == "spark"
    if on_spark and (check_only or generalize):
        raise DpkitUsageError(f"kanon-select {'--check-only' if check_only else '--generalize'} runs on "
                              "--engine numpy only for now; drop --engine spark (or $DPKIT_ENGINE)")
    qis = parse_columns(quasi_identifiers, "--quasi-identifiers")
    keep_cols = parse_columns(keep, "--keep") or []
    source = "<stdin>" if data == "-" else data

    if check_only:
        if qis is None:
            raise DpkitUsageError("--check-only needs --quasi-identifiers A,B,... (the columns to check)")
        if output is not None or report is not None:
            raise DpkitUsageError("--check-only writes nothing: drop -o/--report (use --json for JSON)")
        from dpkit.anonymity.checks import check_table

        df = read_table(read_options(data, encoding, delimiter), categorical=True,
                        columns=[*qis] + ([sensitive] if sensitive else []))
        _release_reader_memory()
        require_columns(df, qis, "--quasi-identifiers", source)
        if sensitive is not None:
            require_columns(df, [sensitive], "--sensitive", source)
        if k is not None and k > len(df) and not state_for().quiet:
            from dpkit.console import private

            click.echo("dpkit: note: " + private(f"-k {k} is larger than the table ({len(df)} records)",
                                                 f"-k {k} is larger than the table"), err=True)
        result = check_table(df, qis, k=k, sensitive=sensitive, l=l_div)
        if as_json:
            import json

            click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        else:
            click.echo("\n".join(result.lines()))
        if not result.satisfied:
            parts = []
            if k is not None and result.k < k:
                parts.append(f"not {k}-anonymous (smallest class {result.k})")
            if l_div is not None and (result.l or 0) < l_div:
                parts.append(f"not {l_div}-diverse (ℓ = {result.l})")
            from dpkit.errors import DataError

            # an error (exit 1) so that scripts can test a table: `... --check-only -k 5 && publish`
            raise DataError(f"{source}: {' and '.join(parts)}")
        return

    if target is None and schema is None:
        raise DpkitUsageError("--target is required (the class column), unless --check-only or --schema names one")
    if k is None:
        raise DpkitUsageError("-k is required (every equivalence class keeps at least k records)")
    if output is None:
        output = "-"  # stdout, as every data command (the report then needs --report)
    from dpkit.anonymity.select import ALGORITHMS, kanon_select
    from dpkit.cli.options import default_report_path, output_delimiter
    from dpkit.report import build_kanon_report, write_report
    from dpkit.run import check_distinct_paths

    report_path = default_report_path(output, report)
    check_distinct_paths([data, schema], [output, report_path])
    loaded_schema = None
    if schema is not None:
        from dpkit.data.schema import load_schema

        loaded_schema = load_schema(schema, allow_draft=True)
        target = target or loaded_schema.target
        if target is None:
            raise DpkitUsageError(f"give --target: schema {schema} declares no target")
    opts = read_options(data, encoding, delimiter)
    # the columns the selection can use (the reader skips the others when the header has them all)
    used = None if qis is None and loaded_schema is None else list(dict.fromkeys(
        [*(qis if qis is not None else loaded_schema.predictors(target)), target, *keep_cols]
        + ([sensitive] if sensitive else [])))
    if generalize:
        df = read_table(opts, categorical=True, columns=used)
        _release_reader_memory()
        _generalize(df, data, source, output, report_path, target, k, qis, loaded_schema, schema, ranker,
                    keep_cols, sensitive, l_div, require_features, seed, rank_sample, max_suppression,
                    max_lattice)
        return
    if on_spark:  # Spark reads, selects and writes the output rows (docs/spark.md)
        from dpkit.engine.spark_kanon import kanon_select_spark

        sel = kanon_select_spark(
            opts, output=output, delimiter=output_delimiter(), target=target, k=k, quasi_identifiers=qis,
            schema=loaded_schema, ranker=ranker, keep=keep_cols, sensitive=sensitive, l=l_div,
            require_features=require_features, seed=seed, rank_sample=rank_sample, source=source,
            master=spark_master,
        )
    else:
        df = read_table(opts, categorical=True, columns=used)
        _release_reader_memory()
        sel = kanon_select(
            df, target=target, k=k, quasi_identifiers=qis, schema=loaded_schema, ranker=ranker,
            keep=keep_cols, sensitive=sensitive, l=l_div, require_features=require_features,
            seed=seed, rank_sample=rank_sample, source=source,
        )
    parameters = {
        "k": k,
        "target": target,
        "ranker": ranker,
        "quasi_identifiers": qis,
        "schema": schema,
        "keep": keep_cols,
        "sensitive": sensitive,
        "l": l_div,
        "require_features": require_features,
        "seed": seed,
        "rank_sample": rank_sample,
    }
    rep = build_kanon_report(
        command="kanon-select", algorithm=ALGORITHMS[ranker], k=k, parameters=parameters,
        release=sel.release,
    )
    if l_div is not None:
        rep["privacy"]["l"] = l_div
        rep["privacy"]["sensitive"] = sensitive
    if not on_spark:
        _write_codes(sel.output, output, output_delimiter())
    if report_path:
        write_report(rep, report_path)
    selected = sel.release["selected"]
    if as_json:
        from dpkit.cli.results import emit_json, run_result

        result = run_result(rep, output=output, report=report_path)
        # which columns were kept is public (the output's header); class sizes are not
        result.update(selected=list(selected), candidates=list(sel.candidates))
        emit_json(result, data_on_stdout=output == "-")
    if not state_for().quiet:
        chosen = ", ".join(selected) or "none"
        click.echo(
            f"dpkit: kept {len(selected)} of {len(sel.candidates)} quasi-identifiers "
            f"({chosen}); smallest class {sel.release['equivalence_classes']['smallest']} ≥ k={k}"
            + (f"; report {report_path}" if report_path else ""),
            err=True,
        )


WRITE_CHUNK = 1 << 20  # _write_codes: the cell ids of this many records at a time, not of the whole table


def _write_codes(df, path: str, delimiter: str) -> None:
    """Write ``df`` as ``write_csv`` does, formatting each distinct row once.

    The output's columns are ``category`` columns (codes + values): every distinct row is
    formatted by the csv module (as pandas' ``to_csv`` does) and the records are written as
    those lines, a million at a time — no Python string per cell. Anything else (object
    columns, Parquet, many distinct rows) goes through ``write_csv``.
    """
    import csv
    import io

    import numpy as np
    import pandas as pd

    from dpkit.data.table import atomic_output, is_parquet_path, write_csv

    cols = [df[c] for c in df.columns]
    cards = [len(s.cat.categories) if isinstance(s.dtype, pd.CategoricalDtype) else 0 for s in cols]
    cells = int(np.prod(cards, dtype=object)) if cols else 0
    if is_parquet_path(path) or not len(df) or not all(cards):
        write_csv(df, path, delimiter=delimiter)
        return
    if cells > 1 << 22:  # many distinct rows: Arrow's CSV writer when no value needs quotes
        if not _write_unquoted(df, path, delimiter):
            write_csv(df, path, delimiter=delimiter)
        return
    codes = [s.cat.codes.to_numpy() for s in cols]
    if any((c < 0).any() for c in codes):
        write_csv(df, path, delimiter=delimiter)
        return
    step = WRITE_CHUNK

    def cell_ids(start: int) -> np.ndarray:
        key = np.zeros(min(step, len(df) - start), dtype=np.int64)
        for c, card in zip(codes, cards, strict=True):
            key *= card
            key += c[start:start + step]
        return key

    seen = np.zeros(cells, dtype=bool)
    for start in range(0, len(df), step):
        seen[cell_ids(start)] = True
    present = np.flatnonzero(seen)
    lines = np.empty(cells, dtype=object)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    values = [np.asarray(s.cat.categories, dtype=object) for s in cols]
    digits = np.array(np.unravel_index(present, cards)).T
    for cell, row in zip(present, digits, strict=True):
        buf.seek(0)
        buf.truncate()
        writer.writerow([v[i] for v, i in zip(values, row, strict=True)])
        lines[cell] = buf.getvalue()
    buf.seek(0)
    buf.truncate()
    writer.writerow(list(df.columns))
    with atomic_output(path) as fh:
        fh.write(buf.getvalue())
        for start in range(0, len(df), step):
            fh.write("".join(lines[cell_ids(start)]))


def _write_unquoted(df, path: str, delimiter: str) -> bool:
    """Write ``df``'s category columns with Arrow's CSV writer, ``WRITE_CHUNK`` records at a time.

    Only when every value is a string that the csv module would write as it is (no delimiter,
    quote or line break; no lone empty field): then the bytes are those of ``to_csv``. Returns
    False (nothing written) otherwise.
    """
    import csv
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from dpkit.data.table import atomic_output

    cols = [df[c] for c in df.columns]
    dictionaries = []
    for s in cols:
        values = list(s.cat.categories)
        if not all(isinstance(v, str) for v in values):
            return False
        if any(delimiter in v or '"' in v or "\n" in v or "\r" in v for v in values):
            return False
        if len(cols) == 1 and "" in values:
            return False  # a lone empty field is written as ""
        dictionaries.append(pa.array(values, type=pa.string()))
    codes = [s.cat.codes.to_numpy() for s in cols]
    head = io.StringIO()
    csv.writer(head, delimiter=delimiter, lineterminator="\n").writerow(list(df.columns))
    options = pacsv.WriteOptions(include_header=False, delimiter=delimiter, quoting_style="none")
    step = max(1, WRITE_CHUNK // 4)  # ~100 bytes a record: ~25 MB of text per write
    with atomic_output(path, binary=True) as fh:
        fh.write(head.getvalue().encode("utf-8"))
        for start in range(0, len(df), step):
            table = pa.table({f"c{j}": pa.DictionaryArray.from_arrays(c[start:start + step], d)
                              for j, (c, d) in enumerate(zip(codes, dictionaries, strict=True))})
            buf = io.BytesIO()
            pacsv.write_csv(table, buf, write_options=options)
            fh.write(buf.getvalue())
    return True


def _release_reader_memory() -> None:
    """Hand Arrow's freed read buffers back to the system before the selection allocates.

    The columnar reader's pool keeps the blocks it freed; numpy allocates elsewhere, so
    without this the selection's arrays stack on top of the read's peak.
    """
    import sys

    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def _generalize(
    df, data, source, output, report_path, target, k, qis, loaded_schema, schema, ranker, keep_cols,
    sensitive, l_div, require_features, seed, rank_sample, max_suppression, max_lattice,
) -> None:
    """--generalize: the Flash search, the output table and its report."""
    from dpkit.anonymity.generalization import kanon_generalize
    from dpkit.anonymity.select import ALGORITHMS
    from dpkit.cli.options import output_delimiter
    from dpkit.errors import DataError
    from dpkit.report import build_kanon_report, write_report

    gen = kanon_generalize(
        df, target=target, k=k, schema=loaded_schema, quasi_identifiers=qis, ranker=ranker,
        keep=keep_cols, sensitive=sensitive, l=l_div, max_suppression=max_suppression,
        max_nodes=max_lattice, seed=seed, rank_sample=rank_sample, source=source,
    )
    if require_features and not gen.release["selected"]:
        raise DataError("no quasi-identifier can be kept (--require-features); lower -k or raise --max-suppression")
    parameters = {
        "k": k, "target": target, "ranker": ranker, "quasi_identifiers": qis, "schema": schema,
        "keep": keep_cols, "sensitive": sensitive, "l": l_div, "require_features": require_features,
        "seed": seed, "rank_sample": rank_sample, "generalize": True,
        "max_suppression": max_suppression, "max_lattice": max_lattice,
    }
    rep = build_kanon_report(
        command="kanon-select", algorithm=ALGORITHMS[ranker] + "+flash", k=k, parameters=parameters,
        release=gen.release,
    )
    if l_div is not None:
        rep["privacy"]["l"] = l_div
        rep["privacy"]["sensitive"] = sensitive
    rep["privacy"]["suppressed_records"] = gen.suppressed
    _write_codes(gen.output, output, output_delimiter())
    if report_path:
        write_report(rep, report_path)
    if not state_for().quiet:
        rel = gen.release
        chosen = ", ".join(
            f"{c} ({rel['generalization']['levels'][c]['meaning']})" for c in rel["selected"]
        ) or "none"
        click.echo(
            f"dpkit: kept {len(rel['selected'])} of {len(rel['candidates'])} quasi-identifiers "
            f"({chosen}); suppressed {gen.suppressed} record(s) "
            f"({100 * rel['suppression']['fraction']:.2f}% ≤ {100 * max_suppression:g}%); "
            f"smallest class {rel['equivalence_classes']['smallest']} ≥ k={k}"
            + (f"; report {report_path}" if report_path else ""),
            err=True,
        )
