"""What every differentially private run does around its algorithm.

:class:`PrivateRun` validates ε and the seed, refuses outputs that would overwrite an
input, makes the accountant and the generator, and builds the report from the accountant.
The privacy ledger (``ledger=``) hooks in here, so every library function — and through them
every command — books its run the same way (docs/ledger.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn

HUGE_EPSILON = 10.0


def check_output_paths(inputs: Sequence[str | os.PathLike | None],
                       outputs: Sequence[str | os.PathLike | None]) -> None:
    """Refuse outputs before any work is done (and any ε spent): an output that is one of the
    ``inputs`` (nothing the user gave is overwritten), one named twice, two on stdout (``-``), or
    one whose directory is missing or not writable. ``None`` entries are skipped.

    Every private function checks its own inputs and outputs; a script that also writes files of
    its own (a config it read, a model it applies) checks them with this first::

        dpkit.check_output_paths(["model.json", "test.csv"], ["predictions.csv"])
    """
    inputs = [None if p is None else os.fspath(p) for p in inputs]
    outputs = [None if p is None else os.fspath(p) for p in outputs]
    seen: dict[str, str] = {}
    for p in inputs:
        if p and p != "-" and Path(p).exists():
            seen[os.path.realpath(p)] = p
    if sum(p == "-" for p in outputs) > 1:
        # e.g. `-o - --report -`: a CSV and a JSON report interleaved on stdout
        raise DpkitUsageError("only one output can go to stdout ('-')")
    outs: set[str] = set()
    for p in outputs:
        if not p or p == "-":
            continue
        real = os.path.realpath(p)
        if real in seen:
            raise DpkitUsageError(f"output {p} is the input file {seen[real]}; refusing to overwrite it")
        if real in outs:
            raise DpkitUsageError(f"output {p} is named twice")
        outs.add(real)
        parent = Path(p).parent
        if not parent.is_dir():
            raise DataError(f"{p}: directory {parent} does not exist; create it first")
        if not _can_create_in(parent):
            # checked before any noise is drawn: a run that could not write its output
            # would otherwise spend its ε (and, with --ledger, count it as lost)
            raise DataError(f"{p}: directory {parent} is not writable")


def _can_create_in(directory: Path) -> bool:
    """Can a file be created in ``directory``? (os.access is wrong for root and read-only
    mounts, so really create and remove an empty temp file, as atomic_output will.)"""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".dpkit-probe.", dir=directory)
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return True


def private_rows_mode(input_path: str | None) -> int:
    """File mode for an output that holds the input's private rows (e.g. cluster --assign):
    0644 less the umask (applied by atomic_output), and never wider than the input file's own
    permissions — a 0600 input gives a 0600 output. Stdin (or an unreadable mode): 0600."""
    if not input_path or input_path == "-":
        return 0o600
    try:
        return 0o644 & os.stat(input_path).st_mode & 0o777
    except OSError:
        return 0o600


def parse_epsilon(value: Any) -> float:
    """ε from a flag or config: a finite number > 0; warns above 10 (little protection)."""
    from dpkit import validate

    if value is None:
        raise DpkitUsageError("epsilon is required", param="epsilon")
    eps = validate.epsilon(value)
    if eps > HUGE_EPSILON:
        warn(
            f"epsilon={eps:g} is very large: the release gives little protection", DpkitWarning
        )
    return eps


class PrivateRun:
    """The context of one ε-DP run: accountant, generator, ledger, atomic outputs, report.

    Usage::

        run = PrivateRun("publish", "maxgddp", epsilon, seed, inputs=[data], outputs=[out, rep])
        with run:
            ... algorithm(run.accountant, run.rng) ...
            run.write_csv(df, out); run.write_report(report, rep)
    """

    def __init__(
        self,
        command: str,
        algorithm: str,
        epsilon: Any,
        seed: Any,
        *,
        inputs: list[str | None],
        outputs: list[str | None],
        ledger: Any = None,
        data: Any = None,
        data_path: Any = None,
        delta: float = 0.0,
        identity: dict[str, Any] | None = None,
        on_invalid: str = "error",
    ) -> None:
        from dpkit.privacy import Accountant, check_seed, is_key
        from dpkit.privacy.accountant import validate_delta

        self.command = command
        self.algorithm = algorithm
        self.epsilon = parse_epsilon(epsilon)
        #: the run's δ budget: 0 keeps the pure-ε run and report unchanged
        self.delta = validate_delta(delta)
        self.seed = None if seed is None else check_seed(seed, "random_state")  # the library's name
        if data is not None:
            # the data as the caller gave it: its file is read (so never written), and the ledger
            # and a key take the fingerprint of that file, or of the frame itself
            from dpkit.engine.inputs import source_path

            path = source_path(data)
            inputs, data_path = [path, *inputs], (path if path is not None else data)
        check_output_paths(inputs, outputs)
        self.outputs = [o for o in outputs if o]
        self.accountant = Accountant(self.epsilon, delta=self.delta)
        self.seeded = self.seed is not None
        # a plain integer seed can be searched: such a run is reproducible, not private
        self.private = self.seed is None or is_key(self.seed)
        # a Ledger object or a path (the library's ``ledger=`` takes either); $DPKIT_LEDGER when
        # not given, and inside a reservation only the reservation's ledger
        booked = ledger.data if isinstance(ledger, Booking) else None
        ledger = run_ledger(ledger.ledger if isinstance(ledger, Booking) else ledger, command, self.epsilon)
        self.ledger_path = getattr(ledger, "path", ledger) or None
        self.data_path = data_path if data_path is not None else (inputs[0] if inputs else None)
        #: what the ledger books the run against: the data read, or what an estimator was given
        self._booked = booked if booked is not None else self.data_path
        self._ledger = None
        self._ledger_entry = None
        #: why this run's release is not private (booked in the ledger as "not private: …")
        self.not_private: list[str] = [] if self.private else ["seeded with a plain integer"]
        self._fingerprint: str | None = None
        self._booked_digest: str | None = None
        #: the report's neighbouring relation: records outside the schema's domain refuse the
        #: run (dpkit.report.NEIGHBOURS), or are dropped one by one (on_invalid="drop")
        from dpkit.report import NEIGHBOURS_DROPPING

        self.neighbours: str | None = NEIGHBOURS_DROPPING if on_invalid == "drop" else None
        if self.ledger_path:
            # the ledger check comes before the data is parsed (commands build PrivateRun
            # first): a run that would pass the cap is refused having read only the
            # fingerprint, and nothing is written or recorded (docs/ledger.md)
            from dpkit.ledger import Ledger

            if self._booked is None or isinstance(self._booked, str) and not self._booked:
                raise DpkitUsageError(f"ledger: '{command}' has no data to account", param="ledger")
            self._ledger = Ledger(self.ledger_path)
            self._booked_digest = self._ledger.check(data_path=self._booked, epsilon=self.epsilon,
                                                     command=command, delta=self.delta)
            if booked is None:  # the digest of the data read: the run's key derives from it too
                self._fingerprint = self._booked_digest
        self.rng = self._make_rng(identity or {})

    @classmethod
    def from_call(cls, command: str, algorithm: str, call: dict[str, Any], *, outputs: list[str | None],
                  schema_name: str | None = None, delta: float = 0.0, on_invalid: str = "error",
                  **resolved: Any) -> PrivateRun:
        """The run of a library call: ``call`` is its arguments (``dict(locals())`` on entry), read
        by the names :mod:`dpkit.api.spec` declares — ``epsilon``, ``random_state``, ``data``,
        ``ledger``, ``config`` (a file read, so never written) — and keyed on the call's identity
        (:func:`call_identity`, ``resolved`` replacing some arguments by what they stand for)."""
        return cls(command, algorithm, call["epsilon"], call.get("random_state"), data=call["data"],
                   inputs=[schema_name, call.get("config")], outputs=outputs, ledger=call.get("ledger"), delta=delta,
                   identity=call_identity(call, **resolved), on_invalid=on_invalid)

    def _make_rng(self, identity: dict[str, Any]) -> Any:
        """The run's generator. A secret key is never used as it is: the run's own key is
        derived from it and the run's identity — the input's fingerprint, command, algorithm,
        ε, δ and ``identity`` (every parameter that shapes the output) — so a key reused on
        neighbouring inputs, or under other parameters, draws independent noise, and the same
        key, input, command and parameters give the same bytes (docs/ledger.md,
        "seeded runs")."""
        from dpkit.privacy import is_key, make_rng
        from dpkit.privacy.rng import run_context

        if not is_key(self.seed):
            return make_rng(self.seed)
        digest = self._fingerprint or _input_fingerprint(self.data_path)
        context = run_context(v=1, command=self.command, algorithm=self.algorithm, epsilon=self.epsilon,
                              delta=self.delta, input=digest, parameters=identity)
        return make_rng(self.seed, context=context)

    def __enter__(self) -> PrivateRun:
        if self._ledger is not None:
            # one BEGIN IMMEDIATE transaction re-checks the cap and reserves the whole ε,
            # so concurrent runs cannot together pass it; Ctrl-C waits until the entry is
            # known, so that __exit__ can settle it
            try:
                with _sigint_deferred():
                    self._ledger_entry = self._ledger.reserve(
                        data_path=self._booked, command=self.command, epsilon=self.epsilon,
                        outputs=self.outputs, digest=self._booked_digest,
                        delta=self.delta,
                    )
            except BaseException as exc:
                # a Ctrl-C held during the reservation lands here, where the with-block
                # has not started and would never call __exit__: settle the row now
                self.__exit__(type(exc), exc, exc.__traceback__)
                raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        if self._ledger is None or self._ledger_entry is None:
            _note_outcome(self, exc_type)
            return
        entry, self._ledger_entry = self._ledger_entry, None
        with _sigint_deferred():  # a second Ctrl-C must not leave the row half-settled
            if exc_type is None:
                # outputs are complete (written atomically inside the block): count what
                # the accountant spent and release the rest of the reservation
                note = f"not private: {'; '.join(self.not_private)}" if self.not_private else None
                self._ledger.complete(entry, spent=self.accountant.spent, note=note,
                                      delta=self.accountant.delta_spent)
            # noted inside the deferred block: a Ctrl-C delivered when it ends already
            # finds the run complete (the error boundary then exits 0, not 130)
            _note_outcome(self, exc_type)
            if exc_type is not None:
                # err on the side of privacy: if any mechanism drew noise the whole
                # reservation stays ("spent, output lost"); with no draw it is released
                self._ledger.fail(entry, spent_any=bool(self.accountant.spends),
                                  reason=exc_type.__name__)

    def report(self, parameters: dict[str, Any], release: dict[str, Any] | None = None,
               guarantee: str | None = None) -> dict[str, Any]:
        from dpkit.privacy import is_key
        from dpkit.report import build_report

        return build_report(
            command=self.command, algorithm=self.algorithm, accountant=self.accountant,
            seeded=self.seeded, parameters=parameters, release=release, guarantee=guarantee,
            seed_is_key=is_key(self.seed), neighbours=self.neighbours,
        )


@dataclass(frozen=True)
class Booking:
    """``ledger=`` for a run that books against other data than the frame it reads: an
    estimator's fit reads a frame made of ``X`` (and ``y``) and books against the data set
    registered with ``X`` (:mod:`dpkit.api.fits`). The run's key still derives from the data
    read, so a fit gives the same bytes with and without a ledger."""

    ledger: Any
    data: Any


def run_ledger(ledger: Any, command: str, epsilon: float) -> Any:
    """The ledger a private run books on: ``ledger`` (a Ledger or a path), else
    ``$DPKIT_LEDGER``, else None — the command line's ``--ledger`` reads the same variable, so a
    library call and a command book alike.

    Inside a reservation (``$DPKIT_RESERVATION``: ``budget run``, ``with ledger.reserve()``) a
    run must book on the reservation's ledger: one that names another ledger, or none, would
    spend ε that the reservation never counts. It is refused here, before
    the data is read, and the refusal is recorded in the reservation's ledger. (The guarantee
    is for dpkit's own runs: a script that unsets the variable is outside any bookkeeping.)
    """
    from dpkit.ledger import LEDGER_ENV, RESERVATION_ENV, LedgerError, active_reservation

    if ledger is None or ledger == "":
        ledger = os.environ.get(LEDGER_ENV) or None
    held = active_reservation()
    if held is None:
        return ledger
    group, held_path = held
    path = None if ledger is None else os.fspath(getattr(ledger, "path", ledger))
    if path is not None and _same_file(path, held_path):
        return ledger
    books = "books on no ledger" if path is None else f"books on ledger {path}"
    reason = (f"this run is inside reservation {group} of ledger {held_path} (${RESERVATION_ENV}) but {books}; "
              "a run inside a reservation must book on its ledger, so that what it spends is counted; "
              "nothing was run")
    _record_outside(held_path, group, command, epsilon, reason)
    raise LedgerError(reason)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _record_outside(ledger_path: str, group: int, command: str, epsilon: float, reason: str) -> None:
    """Keep the refusal in the reservation's ledger (``budget history``); never hides it."""
    from dpkit.errors import DpkitError
    from dpkit.ledger import Ledger

    with contextlib.suppress(DpkitError, OSError):
        Ledger(ledger_path).record_refusal_in(group, command, epsilon, reason)


#: arguments that do not shape a run's output: where it is read from and written to, how
#: it is booked and on which engine it runs (engines give the same bytes)
_NOT_IDENTITY = frozenset({"data", "seed", "random_state", "ledger", "output", "report", "histogram", "assign",
                           "engine", "spark_master", "epsilon", "delta"})

#: a renamed parameter (dpkit.validate.RENAMED) counts under its old name, so that a keyed run
#: keeps its key, and its bytes, across the rename
_IDENTITY_NAME = {"n_clusters": "k", "n_estimators": "trees", "max_depth": "depth"}


#: arguments that count only when given: added after keyed runs existed, so a call that does
#: not give them keeps its key (and its bytes)
_WHEN_GIVEN = frozenset({"ignore", "keep", "values", "numeric", "categorical", "integer", "date", "missing",
                        "vocabulary"})


def call_identity(call: dict[str, Any], **resolved: Any) -> dict[str, Any]:
    """A library call's arguments as a keyed run's identity (:meth:`PrivateRun._make_rng`).

    ``call`` is the function's ``locals()`` on entry; ``resolved`` replaces some by what they
    stand for (the loaded schema rather than its path). A config file counts by its bytes.
    """
    from dpkit.io.fingerprint import file_digest

    out = {_IDENTITY_NAME.get(k, k): _number_or_text(v) for k, v in call.items()
           if k not in _NOT_IDENTITY and not (k in _WHEN_GIVEN and v is None)}
    if isinstance(out.get("ignore"), str):  # "a,b" on the command line is ["a", "b"] in Python
        out["ignore"] = [c.strip() for c in out["ignore"].split(",") if c.strip()]
    out.update(resolved)
    for name in ("config", "vocabulary"):  # a file counts by its bytes
        if isinstance(out.get(name), str | os.PathLike) and os.path.isfile(out[name]):
            out[name] = file_digest(out[name])
    return out


def _number_or_text(value: Any) -> Any:
    """An option as the library reads it: the command line's ``"13"`` is the number 13, so a
    CLI run and the same library call share a key (docs/library.md: same bytes)."""
    if isinstance(value, dict):
        return {k: _number_or_text(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_number_or_text(v) for v in value]
    if isinstance(value, str):
        for parse in (int, float):
            try:
                return parse(value)
            except ValueError:
                pass
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


ON_INVALID = ("error", "drop")


def check_on_invalid(on_invalid: str, schema: Any) -> Any:
    """The schema a run reads with: as given (``"error"``: a record outside the domain refuses
    the run), or dropping such records one by one (``"drop"``, :meth:`Schema.dropping_invalid`)."""
    if on_invalid not in ON_INVALID:
        raise DpkitUsageError(f"on_invalid must be one of {', '.join(ON_INVALID)}, got {on_invalid!r}",
                              param="on_invalid")
    return schema.dropping_invalid() if on_invalid == "drop" and schema is not None else schema


def _input_fingerprint(data: Any) -> str:
    """The fingerprint a keyed run derives its key from: a file's, a directory's or a pandas
    DataFrame's (dpkit/io/fingerprint.py). Data dpkit cannot hash here (a URI, a Spark
    DataFrame) cannot take a key: its neighbours would draw the same noise."""
    from dpkit.io.fingerprint import input_digest, is_spark

    try:
        if data is None or is_spark(data):
            raise TypeError
        return input_digest(data)
    except (TypeError, DpkitUsageError):
        raise DpkitUsageError("a seed key needs data dpkit can fingerprint (a file, a directory of files or a "
                              "pandas DataFrame) so that each data set gets its own noise; leave random_state= out "
                              "for a run keyed by the OS", param="random_state") from None


class RunOutcome(NamedTuple):
    """How one private run of this process ended (:func:`private_runs`)."""

    #: the function's command name (``publish``, ``forest``, ...)
    command: str
    #: None when the run completed (outputs, report and ledger row written), else the name of
    #: the exception that ended it (``BrokenPipeError``: its output went to a closed stdout)
    error: str | None
    #: whether any mechanism drew noise: a run that failed after that spent its ε
    noise_drawn: bool


#: how the PrivateRuns of this process ended, in order (private_runs)
_OUTCOMES: list[RunOutcome] = []


def _note_outcome(run: PrivateRun, exc_type: type[BaseException] | None) -> None:
    _OUTCOMES.append(RunOutcome(run.command, None if exc_type is None else exc_type.__name__,
                                bool(run.accountant.spends)))


def private_runs() -> list[RunOutcome]:
    """Every private run this process has made, in order, and how it ended.

    A wrapper decides from it what a failure cost: a run that ended with ``error`` None is
    complete (a Ctrl-C after it must not make cron retry and spend ε again); one that failed
    with ``noise_drawn`` spent its ε without its output. The command line's exit status reads
    it; a step's own runs are those after ``len(private_runs())`` taken when it starts::

        before = len(dpkit.private_runs())
        dpkit.publish(...)
        complete = all(r.error is None for r in dpkit.private_runs()[before:])
    """
    return list(_OUTCOMES)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold SIGINT (Ctrl-C) and SIGTERM while the ledger row changes; delivered right after.

    Only where the platform can block signals, and only in the main thread (elsewhere
    Python never receives SIGINT anyway).
    """
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = mask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})  # SIGTERM ends like Ctrl-C
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)
