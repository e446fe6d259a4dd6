"""A private command's parameters, declared once: what each takes, its default, its documentation.

The model is scikit-learn's ``_parameter_constraints``: a declaration beside the code that a
test holds the code to. A :class:`Spec` lists a command's parameters — most are the shared ones
of :data:`COMMON`, written here once for every command that takes them — and:

* fills the ``{parameters}`` line of the library function's docstring (:meth:`Spec.document`),
  so that ``help(dpkit.forest)`` documents ``ledger`` as ``help(dpkit.publish)`` does;
* is what ``tests/api/test_spec.py`` holds the library signature (names, defaults), the command
  line (a ``--flag`` per parameter, the same choices) and the refusals (a value outside a
  parameter's choices or interval is refused naming the parameter, before anything is read)
  against.

The checks themselves stay where the values are used (``engine_name``, ``parse_epsilon``, the
algorithms' ``check``): a run refuses a bad value with the message it always gave.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: the default of a parameter a call must give
REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One parameter: ``doc`` is its numpydoc entry without the name (the type after ``" : "``,
    then the text, one line each); ``choices`` the values it takes, ``interval`` the open
    interval (lo, hi) a number lies in (None: unbounded on that side); ``flag`` the command
    line's option (``--name`` by default; an upper-case name: its argument; ``""``: none, a
    library-only parameter)."""

    doc: str
    default: Any = None
    choices: tuple[Any, ...] | None = None
    interval: tuple[float | None, float | None] | None = None
    flag: str | None = None

    def entry(self, name: str) -> str:
        """The numpydoc entry: ``name : type`` and the text indented under it."""
        kind, _, text = self.doc.partition("\n")
        lines = [f"    {name} : {kind}"] + [f"        {line}" if line else "" for line in text.splitlines()]
        return "\n".join(lines)

    def option(self, name: str) -> str | None:
        """The command line's option for this parameter (None: library only)."""
        if self.flag == "":
            return None
        return self.flag or "--" + name.replace("_", "-")


#: the parameters several commands take, each documented once
COMMON: dict[str, Param] = {
    "data": Param(
        "path, ReadOptions or pandas.DataFrame\n"
        "The private table: a CSV or Parquet path (``-``: stdin; with ``engine='spark'`` a URI or a\n"
        "directory), a ReadOptions, a pandas DataFrame or any Arrow stream (polars, pyarrow, DuckDB)\n"
        "(:mod:`dpkit.engine.inputs`); ``encoding``, ``delimiter``, ``header`` and ``column_names``\n"
        "say how to read a CSV path (the delimiter is sniffed when None).",
        default=REQUIRED, flag="DATA"),
    "schema": Param(
        "Schema or path, optional\n"
        "The public domains (taxonomy trees, numeric bounds, missing-value tokens)."),
    "epsilon": Param(
        "float\n"
        "The whole budget of the run; the report lists every part of it that was spent.",
        default=REQUIRED, interval=(0, None)),
    "target": Param(
        "str, optional\n"
        "The class column (default: the schema's target)."),
    "random_state": Param(
        "int or str, optional\n"
        "A secret key ``0x`` + 32–64 hex digits (reproducible, still ε-DP while the key is\n"
        "secret) or an integer (reproducible, not private: the report says so); None, a fresh\n"
        "key from the operating system. ``seed`` before 0.5 (deprecated).",
        flag="--seed"),
    "ledger": Param(
        "Ledger or path, optional\n"
        "The privacy ledger that books this run against its data set's cap; a refusal raises\n"
        ":class:`dpkit.BudgetExceeded` before the data is read."),
    "engine": Param(
        'str, {"numpy", "spark"}, optional\n'
        "Where the data is read and counted (default ``$DPKIT_ENGINE``, else numpy).",
        choices=("numpy", "spark")),
    "spark_master": Param(
        "str, optional\n"
        "The Spark master URL with ``engine='spark'`` (default: local, or ``$DPKIT_SPARK_MASTER``)."),
    "config": Param(
        "str, optional\n"
        "The parameter file the options came from (the command line's ``--config``), recorded\n"
        "in the report."),
    "encoding": Param("str, optional\nThe CSV's text encoding (default ``utf-8-sig``)."),
    "delimiter": Param("str, optional\nThe CSV's delimiter (default: sniffed among ``,`` ``;`` tab ``|``)."),
    "header": Param("bool\nThe CSV's first line names its columns.", default=True, flag="--no-header-row"),
    "column_names": Param(
        "list of str, optional\n"
        "The columns of a headerless CSV (``header=False``), in order."),
    "on_invalid": Param(
        'str, {"error", "drop"}\n'
        "A record outside the schema's domain (a value outside its taxonomy; a missing value\n"
        'the schema does not drop): ``"error"`` refuses the run (exit 1 on the command line),\n'
        '``"drop"`` drops each such record on its own — the report\'s neighbouring relation then\n'
        "covers any record (docs/formats.md).",
        default="error", choices=("error", "drop")),
    "delta": Param(
        "float, optional\n"
        "Without a schema: the δ of the run, required then (e.g. 1e-6): the domain is learned\n"
        "under (ε, δ)-DP inside the run (docs/domain.md) and the report is (ε, δ)-DP. With a\n"
        "schema it is unused (the domain is public; the run is ε-DP).",
        interval=(0, 1)),
    "domain_share": Param(
        "float, optional\n"
        "Without a schema: the share of ε that learns the domain (default 0.2); the rest runs the\n"
        "algorithm, and with ``output`` the learned schema is written beside it\n"
        "(``<output stem>.schema.yaml``, named in the report).",
        interval=(0, 1)),
    "ignore": Param(
        'list of str or "a,b", optional\n'
        "Without a schema: columns the learned schema declares ignore (a sampling weight, an\n"
        "identifier): no budget is spent on them. With a schema, declare them there."),
    "keep": Param(
        'list of str or "a,b", optional\n'
        "Without a schema: columns named like an identifier (``id``, ``ID``, ``*_id``,\n"
        "``CustomerId``, ``RowNumber``, ``index``, ``Unnamed: 0``: left out by a public rule on\n"
        'the name, with one warning; docs/domain-reference.md, "Identifiers") to learn all the same.'),
    "values": Param(
        "dict, optional\n"
        "Without a schema: public value lists (column → values), e.g. the target's class names\n"
        'when they are public (``{"y": ["no", "yes"]}``): taken as given, nothing spent on them.'),
    "vocabulary": Param(
        "str, optional\n"
        "Without a schema: a YAML file of public value lists (name → values) added to the\n"
        "package's vocabularies (yes/no, 0/1, true/false, male/female, months, weekdays): values\n"
        "named there are public candidates of every learned categorical column, listed by a\n"
        'pure-ε rule on their noisy counts (docs/domain-reference.md, "Public vocabularies").'),
    "bounds": Param(
        "dict, optional\n"
        "Without a schema: public bounds (column → (lo, hi)), taken as given, nothing spent on\n"
        "them: a numeric column left out for too few values is kept with them."),
    "numeric": Param(
        'list of str or "a,b", optional\n'
        "Without a schema: columns declared numeric (public); every other column's type is\n"
        'learned under DP in the domain share (docs/domain-reference.md, "Types and missing tokens").'),
    "categorical": Param('list of str or "a,b", optional\nWithout a schema: columns declared categorical (public).'),
    "integer": Param(
        'list of str or "a,b", optional\n'
        "Without a schema: numeric columns declared of whole numbers (public; else learned under DP)."),
    "date": Param(
        'list of str or "a,b", optional\n'
        "Without a schema: columns declared ISO dates (``YYYY-MM-DD``; public); each is read as its\n"
        'day number (docs/domain-reference.md, "Dates").'),
    "missing": Param(
        'str or list of str, optional\n'
        'Without a schema: the missing-value tokens (``"none"``: none); default: learned under DP\n'
        "from a public list of tokens."),
    "output_delimiter": Param("str\nThe delimiter of a CSV output.", default=","),
}


@dataclass(frozen=True)
class Spec:
    """A command's parameters in the library signature's order (``**options``, the algorithm's
    own, are declared by its estimator's ``__init__``)."""

    command: str
    params: dict[str, Param]

    def document(self, fn: F) -> F:
        """``fn`` with the ``{parameters}`` line of its docstring replaced by the entries."""
        if fn.__doc__ is None:  # python -OO
            return fn
        assert "    {parameters}" in fn.__doc__, f"{fn.__name__}'s docstring has no {{parameters}}"
        entries = "\n".join(p.entry(name) for name, p in self.params.items())
        fn.__doc__ = fn.__doc__.replace("    {parameters}", entries)
        return fn


def spec(command: str, names: str, **own: Param) -> Spec:
    """The :class:`Spec` of ``command``: ``names`` (space-separated) in signature order, each a
    parameter of ``own`` or of :data:`COMMON`; ``own`` overrides a common one of that name."""
    return Spec(command, {n: own.get(n) or COMMON[n] for n in names.split()})


def with_doc(name: str, doc: str, **changes: Any) -> Param:
    """A common parameter with this command's text (and other fields changed)."""
    return replace(COMMON[name], doc=doc, **changes)
