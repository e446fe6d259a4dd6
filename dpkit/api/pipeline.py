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

    pipe = Pipeline("publish", data, schema=schema, on_invalid=on_invalid, domain=dict(delta=delta, ...))
    pipe.start("maxgddp", epsilon, random_state, call=call, target=target, columns=columns, ...)
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

from dpkit.engine.inputs import column_dtypes, load, read_dialect, schema_of, source_path
from dpkit.privacy.plan import BudgetPlan
from dpkit.schema.parse import Schema
from dpkit.types import DataLike

#: the name a learned schema is recorded under when no file holds it
LEARNED = "<learned>"


class Pipeline:
    """One private run of a command over ``data`` (see the module docstring)."""

    def __init__(self, command: str, data: DataLike, *, schema: Any, on_invalid: str,
                 domain: dict[str, Any]) -> None:
        from dpkit.api.domain import no_schema
        from dpkit.run import check_on_invalid

        self.command = command
        self.data = data
        #: a DataFrame's column dtypes (public, as its header is), so that what a run gives back
        #: (a forest's predictions) can be of the caller's types; empty for a file (set by start)
        self.dtypes: dict[str, Any] = {}
        schema_obj, self.schema_name = schema_of(schema)
        self.schema: Schema | None = check_on_invalid(on_invalid, schema_obj)
        self.on_invalid = on_invalid
        #: the domain to learn inside the run (a DomainPlan), None with a schema
        self.learn = no_schema(self.schema, **domain)
        self.frame: Any = None
        self.target: str | None = None
        self.domain: Any = None  # the DomainStep, once learned
        self.learned_path: str | None = None
        self._columns: Callable[[Schema, str], Sequence[str]] | None = None

    def start(self, algorithm: str, epsilon: Any, random_state: Any, *, call: dict[str, Any], target: str,
              columns: Callable[[Schema, str], Sequence[str]], outputs: Sequence[str | None], ledger: Any,
              engine: str | None, spark_master: str | None, reading: dict[str, Any],
              learned_path: str | None = None, extra_inputs: Sequence[str | None] = ()) -> None:
        """Open the run (not yet entered) and, with a schema, load the table: ``columns(schema,
        target)`` names the columns read; ``outputs`` the files the run writes (``learned_path``,
        the learned schema's, among them when given); ``extra_inputs`` files read besides the
        data and the schema (a config)."""
        from dpkit.run import PrivateRun, call_identity

        self.target, self._columns = target, columns
        self.learned_path = learned_path
        self._reading = read_dialect(**reading)
        self._engine, self._spark_master = engine, spark_master
        self.run = PrivateRun(self.command, algorithm, epsilon, random_state,
                              data=self.data, inputs=[self.schema_name, *extra_inputs],
                              outputs=list(outputs), ledger=ledger,
                              delta=0.0 if self.learn is None else self.learn.delta,
                              identity=call_identity(call, schema=self.schema, target=target),
                              on_invalid=self.on_invalid)
        self.dtypes = column_dtypes(self.data)
        if self.learn is None:
            assert self.schema is not None
            self.frame = load(self.data, self.schema, list(columns(self.schema, target)), engine=engine,
                              spark_master=spark_master, **self._reading)

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
