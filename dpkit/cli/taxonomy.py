"""`dpkit taxonomy` — check, draft, learn and convert schema/taxonomy files (format: docs/formats.md).

Each subcommand is one call into :mod:`dpkit.api.taxonomy`; only ``infer --epsilon`` spends privacy
budget (it learns the schema under (ε, δ)-DP, docs/domain.md).
"""

from __future__ import annotations

from typing import Any

import click

import dpkit
from dpkit.cli.options import (
    declaration_options,
    dpkit_command,
    engine_options,
    input_options,
    say,
)
from dpkit.defaults import MAX_CATEGORIES


def _shown(output: str) -> str:
    return "<stdout>" if output == "-" else output


@dpkit_command("taxonomy", cls=click.Group)
def command() -> None:
    """Check, draft, learn and convert schema/taxonomy files (only `infer --epsilon` spends budget).

    \b
    Example:
      dpkit taxonomy validate taxonomies/adult.yaml sample_data/adult/train.csv
    """


@dpkit_command("validate", command, config=True)
@click.argument("schema_path", metavar="SCHEMA.yaml", type=click.Path(dir_okay=False))
@click.argument("data", metavar="[DATA.csv]", required=False, type=click.Path(dir_okay=True, allow_dash=True))
@input_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on stdout.")
@engine_options
def validate(schema_path: str, data: str | None, encoding: str, delimiter: str, as_json: bool, **engine: Any) -> None:
    """Check a schema file and, given DATA.csv, that the schema covers every value.

    Errors in the schema name the file, line and column. With data, lists the first
    values (up to 5 per column) that are not leaves of their column's taxonomy, and warns
    about numeric values outside the public bounds (loading clips them). Exit 0 when all
    is well, 1 otherwise. With --engine spark the scan is a Spark job (docs/spark.md).

    \b
    Example:
      dpkit taxonomy validate taxonomies/adult.yaml sample_data/adult/train.csv
    """
    from dpkit.cli.options import emit, read_options

    result = dpkit.validate_schema(schema_path, None if data is None else read_options(data, encoding, delimiter), **engine)
    say(result.pop("message"))
    if as_json:
        emit(True, result, ascii=False)


@dpkit_command("import", command)
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...", type=click.Path())
@click.option(
    "--format", "fmt", type=click.Choice(["auto", "arx", "diffgen"]), default="auto", show_default=True,
    help="arx: ARX hierarchy CSVs (files or folders); diffgen: the brace format of DiffGen / "
    "Fung et al.; auto: arx for folders and .csv files, else diffgen.",
)
@click.option("-o", "--output", default="-", type=click.Path(dir_okay=False, allow_dash=True),
              help="Schema YAML to write [default: '-', stdout].")
@click.option("--target", default=None, help="The class column (must be categorical).")
@click.option("--rename", multiple=True, metavar="OLD=NEW",
              help="Rename an imported column to the data's header name (repeatable).")
@click.option("--ignore", "ignore_cols", multiple=True, metavar="COLUMN",
              help="Declare a column 'type: ignore' (repeatable).")
@click.option("--numeric", type=click.Choice(["intervals", "bounds", "categorical"]), default="intervals",
              show_default=True,
              help="ARX hierarchies of numbers: a numeric column with an interval hierarchy from "
              "the '[lo, hi[' labels when they nest and tile (else bounds only), with bounds only, "
              "or a categorical tree of the values as written.")
@click.option("--data", "data", default=None, type=click.Path(dir_okay=False),
              help="Also draft the columns of DATA.csv that no hierarchy covers (from the data: "
              "NOT private, review them), in the data's column order.")
@click.option("--hierarchy-delimiter", default=";", show_default=True, metavar="CHAR",
              help="Field delimiter of the ARX files.")
@input_options
def import_(sources: tuple[str, ...], fmt: str, output: str, rename: tuple[str, ...], ignore_cols: tuple[str, ...],
            data: str | None, encoding: str, delimiter: str, **p: Any) -> None:
    """Convert ARX hierarchies or DiffGen brace-format taxonomies into a dpkit schema.

    ARX: one ';'-separated CSV per attribute (named workclass.csv or
    adult_hierarchy_workclass.csv), one row per leaf, from the leaf to '*' (which becomes
    the root 'Any'). DiffGen: blocks 'name:discrete' / 'name:continuous' with a tree
    '{Any {Child {Leaf}} ...}'; a continuous root '{15-95 ...}' gives the bounds. The output
    is checked like any schema before it is written.

    \b
    Example:
      dpkit taxonomy import hierarchies/ --format arx --target income -o adult.yaml
      dpkit taxonomy import taxonomy-fung2007.txt --format diffgen \\
          --rename classes=income --rename martial-status=marital-status \\
          --ignore fnlwgt --target income -o adult.yaml
    """
    from dpkit.cli.options import read_options

    dpkit.check_output_paths([*sources, data], [output])
    imported = dpkit.import_schema(sources, format=fmt, rename=list(rename), ignore=ignore_cols, encoding=encoding,
                             data=read_options(data, encoding, delimiter) if data else None, output_name=output, **p)
    imported.write(output)
    say(f"wrote {_shown(output)}: {imported.summary}")


@dpkit_command("infer", command, config=True)
@click.argument("data", metavar="DATA.csv", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", default="-", type=click.Path(dir_okay=False, allow_dash=True),
              help="Schema YAML to write [default: '-', stdout].")
@click.option("--target", default=None, help="The class column (always categorical).")
@click.option("--max-categories", type=click.IntRange(min=2), default=MAX_CATEGORIES, show_default=True,
              help="Draft mode: text columns with more distinct values are declared 'ignore'.")
@click.option("--missing", "missing", default="auto", show_default=True, metavar="TOKENS",
              help="The missing-value token(s), comma-separated; 'auto': the draft picks one of ? '' NA N/A "
              "NaN null if present, the private mode learns them under DP from a public list; 'none' declares none.")
@click.option("--epsilon", "--eps", "epsilon", type=str, default=None, metavar="ε",
              help="Learn the domains under (ε, δ)-DP with this ε (needs --delta): a schema the "
              "private commands accept. Without it: a NON-private draft to review.")
@click.option("--delta", type=str, default=None, metavar="δ",
              help="δ of the private mode, > 0 and at most 1e-3 (e.g. 1e-6): the chance a value held by "
              "one record is listed.")
@declaration_options("Private mode", date_default="", missing=False)
@click.option("--ignore", "ignore_cols", default=None, metavar="A,B", help="Columns to declare ignore.")
@click.option("--keep", "keep_cols", default=None, metavar="A,B",
              help="Columns named like an identifier (id, *_id, CustomerId, RowNumber, index, ...: declared "
              "ignore by default, a rule on the name) to draft or learn all the same.")
@click.option("--values", "public_values", multiple=True, metavar="COL=A,B,...",
              help="Private mode: a column's public value list (taken as given, no budget spent; repeatable).")
@click.option("--vocabulary", default=None, metavar="FILE", type=click.Path(dir_okay=False),
              help="Private mode: a YAML file of public value lists (name: [a, b, ...]) added to the built-in "
              "ones (yes/no, 0/1, months, ...), listed by a pure-ε rule (docs/domain.md).")
@click.option("--bounds", "public_bounds", multiple=True, metavar="COL=LO:HI",
              help="Private mode: a numeric column's public bounds (taken as given; repeatable).")
@click.option("--levels", type=click.IntRange(0, 8), default=None, metavar="L",
              help="Private mode: levels of each numeric column's interval hierarchy of DP medians "
              "(default 0: bounds only; publish then splits on its grid).")
@click.option("--partition", type=click.Choice(["auto", "laplace", "gaussian"]), default=None,
              help="Private mode: how the category lists are selected: per column with discrete Laplace "
              "noise, all categorical columns at once with discrete Gaussian noise (lower thresholds "
              "with many columns), or auto: the Gaussian when it lowers every column's threshold, from "
              "public numbers only (default: laplace; docs/domain.md).")
@click.option("--report", default=None, type=click.Path(dir_okay=False),
              help="Private mode: the JSON report (default: OUTPUT.report.json; required with -o -).")
@click.option("--seed", type=str, default=None, metavar="N",
              help="Private mode: reproducible noise (a plain integer is not private; a 0x key of 32-64 hex digits is).")
@click.option("--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
              help="Private mode: the privacy ledger that books this run's ε (and δ); also $DPKIT_LEDGER.")
@input_options
@engine_options
def infer(**p: Any) -> None:
    """Draft a schema from DATA.csv — or, with --epsilon and --delta, learn it privately.

    \b
    With --epsilon E --delta D (docs/domain.md): the category lists are learned by
    partition selection (a value held by few records is never listed; unlisted values read
    as '(other)'), the numeric bounds and interval hierarchies by DP quantiles, all under
    (E, D)-DP. The schema is accepted by publish, forest and cluster; its header says what
    was declared and what was learned: the types, whole-number flags and missing tokens
    not declared (--numeric/--categorical/--integer/--date/--ignore, --missing) are learned
    under DP too (docs/domain-reference.md, "Types and missing tokens"). Writes a report.

    \b
    Without --epsilon: a NON-private draft for a person to review. Numeric columns get
    bounds from robust quantiles (1 % and 99 %, widened to the extremes unless those are outliers) rounded,
    with the data's min and max in a comment; text columns a flat list of their values;
    columns named like an identifier (or whose values are all distinct) 'ignore'. Category lists and bounds read from the data reveal it: replace them
    with public knowledge before any private release.

    \b
    Example:
      dpkit taxonomy infer sample_data/adult/train.csv --target income \\
          --epsilon 0.1 --delta 1e-6 -o adult.learned.yaml
      dpkit taxonomy infer sample_data/iris/iris.csv --target species -o iris.draft.yaml
    """
    from dpkit.cli.options import declarations, pairs, public_values, read_options

    data, output, epsilon, delta = p["data"], p["output"], p["epsilon"], p["delta"]
    dpkit.check_output_paths([data], [output])
    if epsilon is not None:
        from dpkit import learn_schema

        learned, report = learn_schema(
            read_options(data, p["encoding"], p["delimiter"], resolved=False), output=output, epsilon=epsilon,
            delta=delta, report=p["report"], bounds=pairs(p["public_bounds"], "--bounds"), missing=p["missing"],
            levels=p["levels"], target=p["target"], random_state=p["seed"], **declarations({**p, "missing": None}),
            ignore=p["ignore_cols"], keep=p["keep_cols"], values=public_values(p["public_values"]),
            ledger=p["ledger"], engine=p["engine"],
            spark_master=p["spark_master"], partition=p["partition"] or "laplace",
            **({"vocabulary": p["vocabulary"]} if p["vocabulary"] is not None else {}))
        if output == "-":
            click.echo(learned.yaml, nl=False)
        say(f"wrote {_shown(output)}: {learned.summary}, learned under (epsilon, delta)-DP "
            f"(epsilon={learned.report['privacy']['epsilon_spent']:.6g}, delta={float(delta):g}); report {report}")
        return
    private_only = {"--delta": delta, **{f"--{k}": p[k] for k in ("numeric", "categorical", "integer", "date", "levels",
                                                                    "partition", "report", "seed", "vocabulary")},
                    "--values": p["public_values"] or None, "--bounds": p["public_bounds"] or None,
                    "--engine spark": p["engine"] == "spark" or None}
    given = [flag for flag, value in private_only.items() if value is not None]
    if given:
        raise dpkit.DpkitUsageError(f"{given[0]} belongs to the private mode: give --epsilon (and --delta) too")
    drafted = dpkit.draft_schema(read_options(data, p["encoding"], p["delimiter"]), target=p["target"],
                           max_categories=p["max_categories"], output_name=output, ignore=p["ignore_cols"],
                           keep=p["keep_cols"],
                           missing=None if p["missing"].lower() == "none" else p["missing"])
    drafted.write(output)
    say(f"wrote draft {_shown(output)}: {drafted.summary} — review it before use (not private)")
