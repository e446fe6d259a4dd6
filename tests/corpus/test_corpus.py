"""Every command, CLI and library, on a corpus of tables as they come (issue 43, item 5).

On every messy table (tests/corpus/strategies.py), with the table's public schema and without
one (the domain learned in the run), each command holds:

- exit 0, or exit 1/2 with exactly one line on stderr: never 70, never a traceback;
- no partial output file after a failure, and the input file untouched;
- the library fails exactly when the command does, with a DpkitError of the same exit code;
- a keyed run (``--seed KEY`` / ``random_state=KEY``) writes the same bytes both ways;
- the report spends at most the budget;
- generalize and predict give back every input row, in order (a DataFrame's index kept), and
  every generalized value is one the release's cut holds (or the documented missing label).

CI draws a fixed, derandomized handful of tables per test (a few minutes on 2 cores);
``make fuzz`` (``DPKIT_CORPUS=fuzz``) draws hundreds, at random. Run them apart with
``-m corpus``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dpkit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (  # noqa: E402
    KEY,
    check_clean,
    check_same_outcome,
    check_spend,
    cli,
    counted,
    env_examples,
    lib,
    read_output,
    same_bytes,
    workdir,
    write_schema,
)
from strategies import KINDS, ROW, MessyTable, messy_tables  # noqa: E402

pytestmark = pytest.mark.corpus

FUZZ = os.environ.get("DPKIT_CORPUS") == "fuzz"


def corpus(ci: int) -> settings:
    """``ci`` derandomized examples in CI, not shrunk (a failure prints its table as drawn; shrinking
    one took minutes: DPKIT_CORPUS_SHRINK=1 shrinks); many random ones under ``make fuzz``."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if os.environ.get("DPKIT_CORPUS_SHRINK"):
        phases.append(Phase.shrink)
    return settings(max_examples=env_examples(ci), deadline=None, derandomize=not FUZZ, database=None,
                    print_blob=True, phases=phases,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


class Files:
    """One example's files: the table, its test split and its public schema."""

    def __init__(self, d: Path, t: MessyTable) -> None:
        self.dir = d
        self.train = d / "train.csv"
        self.test = d / "test.csv"
        self.schema = d / "schema.yaml"
        self.train.write_bytes(t.csv_bytes())
        self.test.write_bytes(t.test_bytes())
        write_schema(t.schema(), self.schema)
        self._train_bytes = self.train.read_bytes()
        self._test_bytes = self.test.read_bytes()

    def untouched(self, shape: str) -> None:
        assert self.train.read_bytes() == self._train_bytes, f"{shape}\nthe input was modified"
        assert self.test.read_bytes() == self._test_bytes, f"{shape}\nthe test input was modified"


def _test_frame(t: MessyTable) -> pd.DataFrame:
    """The test split as a DataFrame of strings, with an index that is not 0..n-1."""
    data = {c.name: list(c.test_cells) for c in t.columns}
    return pd.DataFrame(data, index=pd.Index([1000 + 7 * i for i in range(t.n_test)][::-1], name="rid"))


def _domain_flags(t: MessyTable, learned: bool, ignore_ids: bool, public_classes: bool) -> tuple[list[str], dict]:
    """The CLI flags and library keywords of a run with the schema, or learning the domain."""
    if not learned:
        return ["--schema", "SCHEMA"], {"schema": "SCHEMA"}
    args = ["--delta", "1e-6", "--target", t.target]
    kw: dict = {"delta": 1e-6, "target": t.target}
    ids = [c.name for c in t.columns if c.kind == "id"]
    if ignore_ids and ids:
        args += ["--ignore", ",".join(ids)]
        kw["ignore"] = ids
    if public_classes:
        args += ["--values", f"{t.target}={','.join(t.classes)}"]
        kw["values"] = {t.target: list(t.classes)}
    return args, kw


def _fill(args: list[str], kw: dict, f: Files) -> tuple[list[str], dict]:
    args = [str(f.schema) if a == "SCHEMA" else a for a in args]
    kw = {k: (str(f.schema) if v == "SCHEMA" else v) for k, v in kw.items()}
    return args, kw


def _allowed_labels(release: dpkit.Release) -> dict[str, set[str]]:
    """Per predictor, the values the release's cut holds."""
    return {c: {str(v) for v in labels} for c, labels in release.noisy.cut.labels().items()}


def _check_generalized(df: pd.DataFrame, t: MessyTable, allowed: dict[str, set[str]], shape: str, *,
                       strict: bool = False) -> None:
    """Every test row back, in order, and every value one the cut holds, or the documented
    ``(missing)`` label; ``strict``: ``(missing)`` only where the cut has more than its root
    (issue 43 item 4: a column cut at its root maps every value, missing included, to the root)."""
    assert len(df) == t.n_test, f"{shape}\n{len(df)} rows back of {t.n_test}"
    if t.target in df.columns:  # the class column is kept as it is: it gives the order away
        tokens = {m.strip() for m in t.missing}
        got = [str(v).strip() for v in df[t.target]]
        want = [v.strip() for v in t.column(t.target).test_cells]
        assert [g for g, w in zip(got, want, strict=True) if w not in tokens] == [w for w in want if w not in tokens], \
            f"{shape}\nrows out of order: {got} for {want}"
    for col, labels in allowed.items():
        if col not in df.columns:
            continue
        extra = {"(missing)"} if len(labels) > 1 or not strict else set()
        bad = set(df[col].astype(str)) - labels - extra
        assert not bad, f"{shape}\ngeneralized {col!r} holds {sorted(bad)}, not in the cut {sorted(labels)}"


# --------------------------------------------------------------------------- publish


@pytest.mark.parametrize("learned", [False, True], ids=["schema", "learned"])
@corpus(40)
@given(t=messy_tables(), epsilon=st.sampled_from([1.0, 10.0]), levels=st.sampled_from(["2", "auto"]),
       ignore_ids=st.booleans(), public_classes=st.booleans(), with_schema=st.booleans())
@counted
def test_publish_generalize_evaluate(learned: bool, t: MessyTable, epsilon: float, levels: str,
                                     ignore_ids: bool, public_classes: bool, with_schema: bool) -> None:
    shape = f"publish ({'learned' if learned else 'schema'}, ε={epsilon}, levels={levels}): {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        args, kw = _fill(*_domain_flags(t, learned, ignore_ids, public_classes), f)
        if not learned:
            args += ["--target", t.target]
        out, rep = d / "cli.csv", d / "cli.report.json"
        c = cli(["publish", str(f.train), *args, "--epsilon", str(epsilon), "--levels", levels, "--seed", KEY,
                 "-o", str(out), "--report", str(rep)])
        check_clean(c, [out, rep, d / "cli.schema.yaml"], shape)
        lout, lrep = d / "lib.csv", d / "lib.report.json"
        # an option given on the command line is part of the keyed run's identity: give it here too
        options = {"levels": levels if levels == "auto" else int(levels)}
        lo = lib(dpkit.publish, str(f.train), **kw, epsilon=epsilon, random_state=KEY, output=lout, report=lrep,
                 **({} if learned else {"target": t.target}), **options)
        check_same_outcome(c, lo, shape)
        f.untouched(shape)
        if c.code:
            return
        same_bytes(out, lout, shape)
        same_bytes(rep, lrep, shape, replace=(str(d / "cli"), str(d / "lib")))
        same_bytes(d / "cli.schema.yaml", d / "lib.schema.yaml", shape)
        check_spend(rep, epsilon, shape, delta=1e-6 if learned else 0.0)
        release: dpkit.Release = lo.value
        allowed = _allowed_labels(release)
        released = read_output(out)
        for col, labels in allowed.items():  # the release holds the cut's values only
            assert set(released[col]) <= labels, f"{shape}\nreleased {col!r} outside its cut"

        # generalize the test split with the release's cut: CLI, library, DataFrame
        gen = d / "gen.csv"
        g = cli(["generalize", str(f.test), "--cut", str(rep), "-o", str(gen)])
        check_clean(g, [gen], "generalize after " + shape)
        lg = lib(dpkit.generalize, str(f.test), str(lrep), output=d / "lgen.csv")
        check_same_outcome(g, lg, "generalize after " + shape)
        if g.code == 0:
            same_bytes(gen, d / "lgen.csv", "generalize after " + shape)
            _check_generalized(read_output(gen), t, allowed, "generalize after " + shape, strict=True)
        if not t.short_header:
            frame = _test_frame(t)
            fo = lib(release.generalize, frame)
            check_same_outcome(g, fo, "Release.generalize(DataFrame) after " + shape)
            if fo.code == 0:
                assert fo.value.index.equals(frame.index), f"Release.generalize(DataFrame) after {shape}\nindex lost"
                _check_generalized(fo.value, t, allowed, "Release.generalize(DataFrame) after " + shape, strict=True)
        f.untouched(shape)
        if g.code:
            return

        # evaluate classify: a tree trained on the release, scored on the generalized split (the
        # schema says the column kinds; without it they are read from the tables)
        schema = (str(f.schema) if not learned else str(d / "cli.schema.yaml")) if with_schema else None
        e = cli(["evaluate", "classify", "--train", str(out), "--test", str(gen), "--target", t.target,
                 *(["--schema", schema] if schema else []), "--json"])
        check_clean(e, [], "evaluate classify after " + shape)
        le = lib(dpkit.evaluate_classifier, str(gen), target=t.target, train=str(out), schema=schema)
        check_same_outcome(e, le, "evaluate classify after " + shape)
        if e.code == 0:
            assert json.loads(e.stdout) == json.loads(json.dumps(le.value)), f"evaluate classify after {shape}"


@corpus(40)
@given(t=messy_tables(dialects=False), levels=st.sampled_from([2, "auto"]))
@counted
def test_generalize_maps_every_row_into_the_cut(t: MessyTable, levels) -> None:  # noqa: ANN001
    """Issue 43 item 4: once a release is made, generalize maps every row of any file of its
    columns — an unseen category, a missing or unparsable value — to a value the cut holds, and
    never refuses the file for some rows; a forest's predict scores every row alike. (Library
    only: the command's parity is checked above.)"""
    shape = f"generalize (strict, levels={levels}): {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        lo = lib(dpkit.publish, str(f.train), schema=str(f.schema), target=t.target, epsilon=10.0,
                 random_state=KEY, levels=levels)
        if lo.code:
            return
        g = lib(lo.value.generalize, str(f.test))
        assert g.code == 0, f"{shape}\ngeneralize refused the file: {g.explain()}"
        _check_generalized(g.value, t, _allowed_labels(lo.value), shape, strict=True)
        # and a forest's predict: every row scored, none refused for an unseen category
        fo = lib(dpkit.forest, str(f.train), schema=str(f.schema), target=t.target, epsilon=10.0, n_estimators=2,
                 max_depth=2, random_state=KEY)
        if fo.code == 0:
            p = lib(fo.value.predict, str(f.test))
            assert p.code == 0, f"forest predict (strict): {t.describe()}\npredict refused the file: {p.explain()}"
            assert len(p.value) == t.n_test, f"forest predict (strict): {t.describe()}\nrows lost"


# --------------------------------------------------------------------------- forest


@pytest.mark.parametrize("learned", [False, True], ids=["schema", "learned"])
@corpus(30)
@given(t=messy_tables(), epsilon=st.sampled_from([1.0, 10.0]), ignore_ids=st.booleans(),
       public_classes=st.booleans())
@counted
def test_forest_train_predict(learned: bool, t: MessyTable, epsilon: float, ignore_ids: bool,
                              public_classes: bool) -> None:
    shape = f"forest train ({'learned' if learned else 'schema'}, ε={epsilon}): {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        args, kw = _fill(*_domain_flags(t, learned, ignore_ids, public_classes), f)
        if not learned:
            args += ["--target", t.target]
            kw["target"] = t.target
        model, rep = d / "cli.json", d / "cli.report.json"
        c = cli(["forest", "train", str(f.train), *args, "--epsilon", str(epsilon), "--trees", "2", "--depth", "2",
                 "--seed", KEY, "-o", str(model), "--report", str(rep)])
        check_clean(c, [model, rep, d / "cli.schema.yaml"], shape)
        lmodel, lrep = d / "lib.json", d / "lib.report.json"
        lo = lib(dpkit.forest, str(f.train), **kw, epsilon=epsilon, n_estimators=2, max_depth=2, random_state=KEY,
                 output=lmodel, report=lrep)
        check_same_outcome(c, lo, shape)
        f.untouched(shape)
        if c.code:
            return
        same_bytes(model, lmodel, shape, replace=(str(d / "cli"), str(d / "lib")))
        same_bytes(rep, lrep, shape, replace=(str(d / "cli"), str(d / "lib")))
        check_spend(rep, epsilon, shape, delta=1e-6 if learned else 0.0)

        pred = d / "p.csv"
        # --keep the target (as read) beside the prediction: the rows' order shows
        numbered = d / "numbered.csv"  # the test split with a row-number column, kept beside each prediction
        numbered.write_bytes(t.test_bytes(row_numbers=True))
        p = cli(["forest", "predict", str(model), str(numbered), "--proba", "--keep", ROW, "-o", str(pred)])
        shape = "forest predict after " + shape
        check_clean(p, [pred], shape)
        forest: dpkit.Forest = lo.value
        lp = lib(forest.predictions, str(numbered), proba=True, keep=[ROW], output=d / "q.csv")
        check_same_outcome(p, lp, shape)
        if p.code == 0:
            same_bytes(pred, d / "q.csv", shape)
            got = read_output(pred)
            assert got[ROW].tolist() == [str(i) for i in range(t.n_test)], f"{shape}\nrows lost or out of order"
            assert set(got[forest.model.target]) <= set(t.classes), shape
        if not t.short_header:
            frame = _test_frame(t).drop(columns=[t.target])
            fo = lib(forest.predict, frame)
            check_same_outcome(p, fo, "Forest.predict(DataFrame) after " + shape)
            if fo.code == 0:
                assert fo.value.index.equals(frame.index), f"Forest.predict(DataFrame) after {shape}\nindex lost"
        f.untouched(shape)


# --------------------------------------------------------------------------- cluster


@corpus(40)
@given(t=messy_tables(), epsilon=st.sampled_from([1.0, 10.0]), mode=st.sampled_from(["schema", "bounds", "learned"]))
@counted
def test_cluster(t: MessyTable, epsilon: float, mode: str) -> None:
    numeric = t.numeric_columns() or [c.name for c in t.columns if c.name != t.target][:1] or [t.target]
    shape = f"cluster ({mode}, ε={epsilon}, columns={numeric}): {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        args: list[str] = []
        kw: dict = {}
        if mode == "schema":
            args, kw = ["--schema", str(f.schema)], {"schema": str(f.schema)}
        elif mode == "bounds":
            spec = t.schema()["columns"]
            b = ",".join(f"{spec[c]['bounds'][0]}:{spec[c]['bounds'][1]}" if "bounds" in spec.get(c, {}) else "0:1"
                         for c in numeric)
            args, kw = ["--bounds", b], {"bounds": b}
        out, rep, assign = d / "cli.csv", d / "cli.report.json", d / "cli.assign.csv"
        c = cli(["cluster", str(f.train), "--columns", ",".join(numeric), "-k", "2", "--epsilon", str(epsilon),
                 *args, "--seed", KEY, "--assign", str(assign), "-o", str(out), "--report", str(rep)])
        check_clean(c, [out, rep, assign], shape)
        lo = lib(dpkit.cluster, str(f.train), columns=numeric, n_clusters=2, epsilon=epsilon, **kw,
                 random_state=KEY, assign=d / "lib.assign.csv", output=d / "lib.csv", report=d / "lib.report.json")
        check_same_outcome(c, lo, shape)
        f.untouched(shape)
        if c.code:
            return
        same_bytes(out, d / "lib.csv", shape)
        same_bytes(assign, d / "lib.assign.csv", shape)
        same_bytes(rep, d / "lib.report.json", shape, replace=(str(d / "cli"), str(d / "lib")))
        check_spend(rep, epsilon, shape)


# --------------------------------------------------------------------------- kanon-select


@corpus(30)
@given(t=messy_tables(max_rows=40), mode=st.sampled_from(["plain", "schema", "generalize"]),
       ranker=st.sampled_from(["hamming", "xgboost"]))
@counted
def test_kanon_select(t: MessyTable, mode: str, ranker: str) -> None:
    shape = f"kanon-select ({mode}, {ranker}): {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        args: list[str] = []
        kw: dict = {}
        if mode in ("schema", "generalize"):
            args, kw = ["--schema", str(f.schema)], {"schema": str(f.schema)}
        if mode == "generalize":
            args.append("--generalize")
            kw["generalize"] = True
        out, rep = d / "cli.csv", d / "cli.report.json"
        c = cli(["kanon-select", str(f.train), "--target", t.target, "-k", "2", "--ranker", ranker, *args,
                 "-o", str(out), "--report", str(rep)])
        check_clean(c, [out, rep], shape)
        lo = lib(dpkit.kanon_select, str(f.train), k=2, target=t.target, ranker=ranker, **kw,
                 output=d / "lib.csv", report=d / "lib.report.json")
        check_same_outcome(c, lo, shape)
        f.untouched(shape)
        if c.code:
            return
        same_bytes(out, d / "lib.csv", shape)
        untimed = [{k: v for k, v in json.loads(p.read_text()).items() if k != "seconds"}
                   for p in (rep, d / "lib.report.json")]
        for r in untimed:  # wall-clock timings differ from run to run
            r.get("release", {}).pop("seconds", None)
        assert json.dumps(untimed[0]).replace(str(d / "cli"), "@") == json.dumps(untimed[1]).replace(str(d / "lib"), "@"), \
            f"{shape}\nreports differ"
        if mode != "generalize":
            return
        gen = d / "gen.csv"
        g = cli(["generalize", str(f.test), "--cut", str(rep), "-o", str(gen)])
        shape = "generalize after " + shape
        check_clean(g, [gen], shape)
        lg = lib(dpkit.generalize, str(f.test), str(rep), output=d / "lgen.csv")
        check_same_outcome(g, lg, shape)
        if g.code == 0:
            same_bytes(gen, d / "lgen.csv", shape)
            assert len(read_output(gen)) == t.n_test, f"{shape}\nrows lost"
        f.untouched(shape)


# --------------------------------------------------------------------------- taxonomy


@corpus(40)
@given(t=messy_tables(), epsilon=st.sampled_from([1.0, 10.0]))
@counted
def test_taxonomy_infer_validate(t: MessyTable, epsilon: float) -> None:
    shape = f"taxonomy infer: {t.describe()}"
    with workdir() as d:
        f = Files(d, t)
        # the draft (not private): CLI and library write the same text
        draft = d / "draft.yaml"
        c = cli(["taxonomy", "infer", str(f.train), "--target", t.target, "-o", str(draft)])
        check_clean(c, [draft], shape)
        lo = lib(dpkit.draft_schema, str(f.train), target=t.target)
        check_same_outcome(c, lo, shape)
        if c.code == 0:
            assert draft.read_text(encoding="utf-8") == lo.value.text, f"{shape}\ndraft differs"
            # a draft read from the data covers that data
            v = cli(["taxonomy", "validate", str(draft), str(f.train)])
            check_clean(v, [], "taxonomy validate (draft) after " + shape)
            lv = lib(dpkit.validate_schema, str(draft), str(f.train))
            check_same_outcome(v, lv, "taxonomy validate (draft) after " + shape)

        # the table's public schema against the data: covered, or one line saying why not
        v = cli(["taxonomy", "validate", str(f.schema), str(f.train)])
        check_clean(v, [], "taxonomy validate (public schema): " + t.describe())
        lv = lib(dpkit.validate_schema, str(f.schema), str(f.train))
        check_same_outcome(v, lv, "taxonomy validate (public schema): " + t.describe())

        # learned under DP: CLI and library write the same schema and report
        shape = f"taxonomy infer --epsilon {epsilon}: {t.describe()}"
        learned, rep = d / "cli.yaml", d / "cli.report.json"
        c = cli(["taxonomy", "infer", str(f.train), "--target", t.target, "--epsilon", str(epsilon),
                 "--delta", "1e-6", "--seed", KEY, "-o", str(learned), "--report", str(rep)])
        check_clean(c, [learned, rep], shape)
        lo = lib(dpkit.infer_schema, str(f.train), target=t.target, epsilon=epsilon, delta=1e-6, random_state=KEY,
                 output=str(d / "lib.yaml"), report=str(d / "lib.report.json"))
        check_same_outcome(c, lo, shape)
        f.untouched(shape)
        if c.code:
            return
        same_bytes(learned, d / "lib.yaml", shape)
        same_bytes(rep, d / "lib.report.json", shape, replace=(str(d / "cli"), str(d / "lib")))
        check_spend(rep, epsilon, shape, delta=1e-6)
        v = cli(["taxonomy", "validate", str(learned), str(f.train)])
        check_clean(v, [], "taxonomy validate (learned) after " + shape)


def test_corpus_strategies_draw_what_they_promise() -> None:
    """The corpus holds the shapes it is for (200 draws, no command run)."""
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(t=messy_tables())
    def draw(t: MessyTable) -> None:
        raw = t.csv_bytes()
        cells = [v for c in t.columns for v in c.cells]
        flags = {"one row": t.n_rows == 1, "one class": len(t.classes) == 1, "bom": raw.startswith(b"\xef\xbb\xbf"),
                 "crlf": b"\r\n" in raw, "short header": t.short_header, "quoted newline": any("\n" in v for v in cells),
                 "quoted delimiter": any(t.delimiter in v for v in cells), "missing": any(v in t.missing for v in cells),
                 "unicode": any(not v.isascii() for v in cells)}
        flags.update({f"delimiter {t.delimiter!r}": True})
        flags.update({c.kind: True for c in t.columns})
        seen.update(k for k, v in flags.items() if v)

    draw()
    want = {"one row", "one class", "bom", "crlf", "short header", "quoted newline", "quoted delimiter", "missing",
            "unicode", "delimiter ','", "delimiter ';'", "delimiter '\\t'", "delimiter '|'", *KINDS}
    assert want <= seen, sorted(want - seen)


def test_a_table_renders_as_its_dialect_says() -> None:
    """BOM, CRLF, quoting and the short header, on a table built by hand."""
    from strategies import Column

    t = MessyTable([Column("y", "target", {}, ["no", "yes"]), Column("c", "category", {}, ["a;b", "two\nlines"])],
                   target="y", classes=["no", "yes"], missing=[], delimiter=";", bom=True, crlf=True,
                   short_header=True)
    assert t.csv_bytes() == '\ufeffy;c\r\n1;no;"a;b"\r\n2;yes;"two\nlines"\r\n'.encode()


def test_a_short_header_is_read_as_r_writes_it(tmp_path: Path) -> None:
    """Issue 43 item 8: a header with one name fewer than its fields (R's write.csv row names)
    is read as pandas reads it, the first field as row names — not refused as ragged."""
    data = tmp_path / "r.csv"
    data.write_text('"x","y"\n"1",3,"no"\n"2",5,"yes"\n"3",4,"no"\n')
    c = cli(["taxonomy", "infer", str(data), "--target", "y", "-o", str(tmp_path / "d.yaml")])
    assert c.code == 0, c.explain()
    assert "x:" in (tmp_path / "d.yaml").read_text()
