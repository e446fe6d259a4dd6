"""One private command's run over a classification table, written once.

``publish`` and ``forest train`` are the same recipe around their own algorithm:

1. the input resolved once: the schema (or none), how records outside it are handled, and —
   without a schema — the plan of the domain to learn (:func:`dpkit.api.domain.no_schema`),
   all checked before anything is read or spent;
2. the run opened: a :class:`~dpkit.run.PrivateRun` (accountant, generator, ledger booking,
   atomic outputs), keyed on the call's identity;
3. the table: with a schema, loaded and encoded before the run starts (a bad input spends
   nothing); without one, the domain is learned inside the run from its budget
   (:func:`dpkit.api.domain.learn_domain`) and the table encoded against it;
4. the algorithm fits with what is left of ε (:attr:`Pipeline.epsilon`);
5. the report (:meth:`Pipeline.report`), which also writes a learned schema beside the output.

A command builds a :class:`Pipeline`, settles its target and columns on :attr:`Pipeline.schema`
(known only when a schema was given), :meth:`~Pipeline.start`\\s it, and fits inside ``with``::

    call = dict(locals())  # the call's arguments: what the pipeline reads, and a keyed run's identity
    pipe = Pipeline("publish", call)
    pipe.start("maxgddp", target=target, columns=columns, output=output, report=report)
    with pipe:
        model.fit(pipe.frame, pipe.target, accountant=pipe.accountant, rng=pipe.rng)
        doc = pipe.report(parameters, release)

The order of the draws is the recipe's: the domain's first, then the algorithm's, so a keyed
run gives the bytes it gave when each command wrote the recipe out.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from dpkit.engine.inputs import READING, column_dtypes, load, read_dialect, schema_of, source_path
from dpkit.privacy.plan import BudgetPlan
from dpkit.schema.parse import Schema

#: the name a learned schema is recorded under when no file holds it
LEARNED = "<learned>"


#: the arguments of a library call that say which domain to learn without a schema (dpkit.api.domain.no_schema)
DOMAIN = ("delta", "domain_share", "target", "engine", "ignore", "values", "vocabulary", "bounds", "numeric",
          "categorical", "integer", "date", "missing")


class Pipeline:
    """One private run of a command (see the module docstring). ``call`` is the library call's
    arguments (``dict(locals())``, the keyed run's identity too): the pipeline reads the common
    ones itself, by the names :mod:`dpkit.api.spec` declares — ``data``, ``schema``, ``epsilon``,
    ``random_state``, ``ledger``, ``engine``, ``spark_master``, ``on_invalid``, ``config``, the
    reading options (:data:`READING`) and the domain's (:data:`DOMAIN`; ``keep``: the identifier
    columns to keep). ``domain`` overrides what :func:`~dpkit.api.domain.no_schema` is given."""

    def __init__(self, command: str, call: dict[str, Any], *, domain: dict[str, Any] | None = None) -> None:
        from dpkit.api.domain import no_schema
        from dpkit.run import check_on_invalid

        self.command, self.call = command, call
        self.data = call["data"]
        schema_obj, self.schema_name = schema_of(call.get("schema"))
        self.on_invalid = call.get("on_invalid", "error")
        self.schema: Schema | None = check_on_invalid(self.on_invalid, schema_obj)
        #: the domain to learn inside the run (a DomainPlan), None with a schema
        self.learn = no_schema(self.schema, **{k: call.get(k) for k in DOMAIN}, keep_ids=call.get("keep"),
                               **(domain or {}))
        #: a DataFrame's column dtypes (public, as its header is), so that what a run gives back
        #: (a forest's predictions) can be of the caller's types; empty for a file (set by start)
        self.dtypes: dict[str, Any] = {}
        self.frame: Any = None
        self.target: str | None = None
        self.domain: Any = None  # the DomainStep, once learned
        self.learned_path: str | None = None
        self._columns: Callable[[Schema, str], Sequence[str]] | None = None

    def start(self, algorithm: str, *, target: str, columns: Callable[[Schema, str], Sequence[str]],
              output: str | None = None, report: str | None = None, outputs: Sequence[str | None] = (),
              learned_beside_report: bool = False) -> None:
        """Open the run (not yet entered) and, with a schema, load the table: ``columns(schema,
        target)`` names the columns read; ``output``, ``report`` and ``outputs`` the files the run
        writes. Without a schema the learned schema is written beside ``output``
        (:attr:`learned_path`, ``<stem>.schema.yaml``); with ``learned_beside_report`` and no
        output, the result's ``write_report`` writes it beside the report, which is then one of
        the run's outputs too."""
        from dpkit.api.domain import learned_schema_path
        from dpkit.run import PrivateRun

        call = self.call
        self.target, self._columns = target, columns
        learning = self.learn is not None
        self.learned_path = learned_schema_path(output) if learning else None
        beside = (learned_schema_path(report) if learning and learned_beside_report and self.learned_path is None
                  and report else None)
        self._reading = read_dialect(**{k: call.get(k) for k in READING})
        self._engine, self._spark_master = call.get("engine"), call.get("spark_master")
        self.run = PrivateRun.from_call(self.command, algorithm, call, schema_name=self.schema_name,
                                        outputs=[output, report, *outputs, self.learned_path or beside],
                                        delta=0.0 if self.learn is None else self.learn.delta,
                                        on_invalid=self.on_invalid, schema=self.schema, target=target)
        self.dtypes = column_dtypes(self.data)
        if self.learn is None:
            assert self.schema is not None
            self.frame = load(self.data, self.schema, list(columns(self.schema, target)), engine=self._engine,
                              spark_master=self._spark_master, **self._reading)

    def __enter__(self) -> Pipeline:
        from dpkit.api.domain import learn_domain

        self.run.__enter__()
        if self.learn is not None:
            # the domain first, under (ε·share, δ) of this run's budget; the algorithm gets the rest
            assert self.target is not None
            self.domain = learn_domain(self.data, self.run, self.learn, self.target, self._reading,
                                       engine=self._engine, spark_master=self._spark_master,
                                       path=self.learned_path, epsilon=self.plan["domain"])
            self.schema, self.frame = self.domain.schema, self.domain.frame
            self.schema_name = self.learned_path or LEARNED
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        return self.run.__exit__(exc_type, exc, tb)

    @property
    def path(self) -> str | None:
        """The file (or URI) the data was read from, None for a frame in memory."""
        return source_path(self.data)

    @property
    def columns(self) -> list[str]:
        """The columns the table holds (of the schema given or learned)."""
        assert self._columns is not None and self.schema is not None and self.target is not None
        return list(self._columns(self.schema, self.target))

    @property
    def plan(self) -> BudgetPlan:
        """The run's budget plan: without a schema the domain's share of ε, the algorithm the rest."""
        shares = {} if self.learn is None else {"domain": self.learn.share}
        return BudgetPlan(self.run.epsilon, shares, rest="algorithm")

    @property
    def epsilon(self) -> float:
        """The ε the algorithm fits with: the run's, less what the domain spent."""
        return self.plan.left(self.run.accountant.spent if self.learn is not None else 0.0)

    @property
    def accountant(self) -> Any:
        return self.run.accountant

    @property
    def rng(self) -> Any:
        return self.run.rng

    def report(self, parameters: dict[str, Any], release: dict[str, Any]) -> dict[str, Any]:
        """The run's report (:meth:`dpkit.run.PrivateRun.report`); without a schema its parameters
        name the domain step, and the learned schema is written to ``learned_path`` (atomically,
        inside the run: the ledger books the run once it exists)."""
        doc = self.run.report(parameters, release)
        if self.domain is not None:
            self.domain.record(doc["parameters"], self.learned_path)
        return doc


def output_paths(*paths: str | os.PathLike | None) -> list[str | None]:
    """Each output path as a string (None stays None)."""
    return [None if p is None else os.fspath(p) for p in paths]
