"""One name per concept (issue 37 item 9): scikit-learn's names where the functions meet the
estimators; the 0.4 names keep working until 0.8 with a DeprecationWarning that points at the
caller's line and gives the same bytes; the command line keeps its flags and never warns; every
public annotation resolves (``typing.get_type_hints``)."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import typing
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import dpkit
from dpkit.validate import RENAMED

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = str(REPO / "taxonomies" / "adult.yaml")
S1 = str(REPO / "sample_data" / "clustering" / "s1.csv")
S1_SCHEMA = str(REPO / "taxonomies" / "clustering.yaml")
KEY = "0x9c4e1a7b3f2d8e6a5c0b9d1f7e3a2c84"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000)


def _deprecated(call: typing.Callable[[], typing.Any], *names: str) -> typing.Any:
    """``call()``'s result; it must warn once per deprecated name, a DeprecationWarning that
    names it and points at this file (the caller's line, not dpkit's)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    got = [w for w in caught if issubclass(w.category, DeprecationWarning) and "removed in dpkit 0.8" in str(w.message)]
    assert sorted(re.search(r"(\S+) is deprecated", str(w.message)).group(1) for w in got) == sorted(names), \
        [str(w.message) for w in got]
    assert {w.filename for w in got} == {__file__}, [w.filename for w in got]
    return result


def _quiet(call: typing.Callable[[], typing.Any]) -> typing.Any:
    """``call()`` with today's names: no deprecation at all."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=".*will be removed in dpkit", category=DeprecationWarning)
        return call()


# ------------------------------------------------------------------- the same output


def test_publish_seed_is_random_state(adult) -> None:
    new = _quiet(lambda: dpkit.publish(adult, schema=SCHEMA, epsilon=1.0, random_state=KEY))
    old = _deprecated(lambda: dpkit.publish(adult, schema=SCHEMA, epsilon=1.0, seed=KEY), "seed=")
    pd.testing.assert_frame_equal(old.counts, new.counts)
    assert old.report == new.report


def test_forest_trees_depth_seed(adult, tmp_path) -> None:
    new = _quiet(lambda: dpkit.forest(adult, schema=SCHEMA, epsilon=1.0, n_estimators=2, max_depth=2,
                                      random_state=KEY))
    old = _deprecated(lambda: dpkit.forest(adult, schema=SCHEMA, epsilon=1.0, trees=2, depth=2, seed=KEY),
                      "trees=", "depth=", "seed=")
    assert len(new.model.trees) == 2
    new.write(tmp_path / "new.json")
    _deprecated(lambda: old.save(tmp_path / "old.json"), "Forest.save()")
    assert (tmp_path / "old.json").read_bytes() == (tmp_path / "new.json").read_bytes()


def test_cluster_k_seed_and_centres() -> None:
    new = _quiet(lambda: dpkit.cluster(S1, columns=["x", "y"], n_clusters=4, epsilon=1.0, schema=S1_SCHEMA,
                                       random_state=KEY))
    old = _deprecated(lambda: dpkit.cluster(S1, columns=["x", "y"], k=4, epsilon=1.0, schema=S1_SCHEMA, seed=KEY),
                      "k=", "seed=")
    pd.testing.assert_frame_equal(old.centroids, new.centroids)
    assert old.report == new.report and len(new.centroids) == 4
    centres = _deprecated(lambda: new.centres, "Clustering.centres")
    np.testing.assert_array_equal(centres, new.centroids[new.columns].to_numpy())


def test_infer_schema_seed(adult) -> None:
    cols = ["age", "sex", "income"]
    new = _quiet(lambda: dpkit.infer_schema(adult[cols], target="income", epsilon=1.0, delta=1e-6,
                                            random_state=KEY))
    old = _deprecated(lambda: dpkit.infer_schema(adult[cols], target="income", epsilon=1.0, delta=1e-6, seed=KEY),
                      "seed=")
    assert old.yaml == new.yaml


def test_kanon_select_and_evaluate_classifier_seed(adult) -> None:
    kw = dict(k=5, schema=SCHEMA, target="income", ranker="hamming")
    new = _quiet(lambda: dpkit.kanon_select(adult, random_state=3, **kw))
    old = _deprecated(lambda: dpkit.kanon_select(adult, seed=3, **kw), "seed=")
    pd.testing.assert_frame_equal(old.table, new.table)
    train, test = adult.iloc[:2000], adult.iloc[2000:]
    new_scores = _quiet(lambda: dpkit.evaluate_classifier(test, target="income", train=train, random_state=4))
    old_scores = _deprecated(lambda: dpkit.evaluate_classifier(test, target="income", train=train, seed=4), "seed=")
    assert old_scores == new_scores


def test_classifier_target_name_is_target() -> None:
    g = np.random.default_rng(0)
    X = g.uniform(0, 10, size=(1500, 2))
    y = (X[:, 0] > 5).astype(int)
    kw = dict(epsilon=2.0, n_estimators=2, max_depth=2, bounds=[(0, 10), (0, 10)], classes=[0, 1],
              random_state=KEY)
    new = _quiet(lambda: dpkit.DiffPRFsClassifier(target="label", **kw).fit(X, y))
    old = _deprecated(lambda: dpkit.DiffPRFsClassifier(target_name="label", **kw).fit(X, y), "target_name=")
    assert new.forest_.target == old.forest_.target == "label"
    np.testing.assert_array_equal(old.predict_proba(X), new.predict_proba(X))
    with pytest.raises(TypeError, match="both target_name"):
        dpkit.DiffPRFsClassifier(target="a", target_name="b", **kw).fit(X, y)


def test_a_keyed_run_keeps_the_bytes_of_0_4() -> None:
    """The renamed parameters count under their 0.4 names in a keyed run's identity
    (dpkit.run._IDENTITY_NAME): the digests below are what main wrote with ``trees=2, depth=2,
    seed=KEY`` and ``k=4, seed=KEY`` (schemas renamed so that the repository's path drops out)."""
    import dataclasses
    import hashlib

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    adult = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000)
    schema = dataclasses.replace(dpkit.load_schema(SCHEMA), path="adult.yaml")
    f = _quiet(lambda: dpkit.forest(adult, schema=schema, epsilon=1.0, n_estimators=2, max_depth=2,
                                    random_state=KEY))
    assert digest(f.predict_proba(adult).round(9).to_csv()) == "a88f7334fccc5e92"
    s1 = dataclasses.replace(dpkit.load_schema(S1_SCHEMA), path="clustering.yaml")
    c = _quiet(lambda: dpkit.cluster(S1, columns=["x", "y"], epsilon=1.0, schema=s1, n_clusters=4,
                                     random_state=KEY))
    assert digest(c.centroids.to_csv(index=False)) == "186d0dd9a0bfdf6b"


# ------------------------------------------------------------------- keywords


def test_both_names_is_a_type_error_and_a_misspelling_names_the_new_one() -> None:
    with pytest.raises(TypeError, match="both 'k' .deprecated. and 'n_clusters'"):
        dpkit.cluster(S1, columns=["x", "y"], k=3, n_clusters=3, epsilon=1.0)
    with pytest.raises(TypeError, match="'tress'; did you mean 'n_estimators'"):
        dpkit.forest(S1, epsilon=1.0, tress=3)
    with pytest.raises(TypeError, match="'seeds'; did you mean 'random_state'"):
        dpkit.cluster(S1, columns=["x", "y"], n_clusters=3, epsilon=1.0, seeds=1)


@pytest.mark.parametrize("where", sorted(RENAMED))
def test_the_new_names_are_in_the_signatures(where: str) -> None:
    params = inspect.signature(getattr(dpkit, where)).parameters
    for old, new in RENAMED[where].items():
        # learn_schema hands its **options to infer_schema, whose signature names them
        assert old not in params and (new in params or where == "learn_schema"), (where, old, new)
    assert "target" in inspect.signature(dpkit.DiffPRFsClassifier).parameters
    assert "write" in vars(dpkit.Forest)


def test_the_draft_has_its_own_name() -> None:
    import dpkit.schema.draft as draft

    assert not hasattr(draft, "infer_schema") and callable(draft.draft_from_data)
    assert dpkit.infer_schema.__module__ == "dpkit.api.domain"


# ------------------------------------------------------------------- the CLI


def test_the_cli_keeps_its_flags_and_never_warns(tmp_path) -> None:
    from dpkit.cli import cli

    data = tmp_path / "adult.csv"
    data.write_text("\n".join(ADULT.read_text(encoding="utf-8").splitlines()[:2001]) + "\n", encoding="utf-8")
    small = tmp_path / "small.csv"
    pd.read_csv(data, dtype=str)[["age", "sex", "income"]].to_csv(small, index=False)
    model = tmp_path / "m.json"
    commands = [
        ["publish", data, "--schema", SCHEMA, "--epsilon", "1", "--seed", KEY, "-o", tmp_path / "p.csv"],
        ["forest", "train", data, "--schema", SCHEMA, "--epsilon", "1", "--trees", "2", "--depth", "2",
         "--seed", KEY, "-o", model],
        ["forest", "predict", model, data, "-o", tmp_path / "pred.csv"],
        ["cluster", S1, "--columns", "x,y", "-k", "3", "--epsilon", "1", "--schema", S1_SCHEMA, "--seed", KEY,
         "-o", tmp_path / "c.csv"],
        ["kanon-select", data, "--schema", SCHEMA, "--target", "income", "-k", "5", "--ranker", "hamming",
         "--seed", "1", "-o", tmp_path / "k.csv"],
        ["taxonomy", "infer", small, "--target", "income", "--epsilon", "1", "--delta", "1e-6", "--seed", KEY,
         "-o", tmp_path / "s.yaml"],
        ["evaluate", "classify", "--train", data, "--test", data, "--target", "income", "--seed", "2"],
    ]
    for args in commands:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            result = CliRunner().invoke(cli, ["-q", *map(str, args)], catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)


# ------------------------------------------------------------------- typing


def _public_callables() -> list[tuple[str, typing.Any]]:
    """Every public function of dpkit.__all__, every public class and each of its methods."""
    out: list[tuple[str, typing.Any]] = []
    for name in dpkit.__all__:
        obj = getattr(dpkit, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            out.append((name, obj))
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, classmethod | staticmethod):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member):
                    out.append((f"{name}.{attr}", member))
        elif inspect.isfunction(obj):
            out.append((name, obj))
    return out


def test_get_type_hints_resolves_every_public_annotation() -> None:
    callables = _public_callables()
    assert len(callables) > 60
    for name, obj in callables:
        hints = typing.get_type_hints(obj)  # NameError on a forward reference it cannot resolve
        assert hints or obj in (dpkit.Ledger,) or inspect.isclass(obj) or not inspect.signature(obj).parameters, name
    hints = typing.get_type_hints(dpkit.publish)
    assert pd.DataFrame in typing.get_args(hints["data"]) and dpkit.ReadOptions in typing.get_args(hints["data"])
    assert dpkit.Ledger in typing.get_args(hints["ledger"])
    assert typing.get_type_hints(dpkit.Forest)["model"].__name__ == "ForestModel"


def test_the_hints_resolve_in_a_fresh_process_and_the_import_stays_light() -> None:
    code = ("import sys, typing, dpkit, dpkit.api.publish, dpkit.api.forest, dpkit.api.cluster; "
            "light = 'pandas' not in sys.modules and 'numpy' not in sys.modules; "
            "h = typing.get_type_hints(dpkit.publish); "
            "print(light, h['data'].__args__[-1].__name__, typing.get_type_hints(dpkit.Clustering.centres.fget)['return'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "DataFrame", "<class", "'numpy.ndarray'>"]


def test_the_keyword_types_name_what_the_functions_take() -> None:
    """The TypedDicts of ``**options``/``**reading`` (dpkit.types) list exactly the keywords the
    runtime check (dpkit.validate.keywords) accepts: a type and a check that cannot drift apart."""
    from dpkit import kmeans, release, types
    from dpkit.api import forest, inputs

    assert set(types.PublishOptions.__annotations__) == set(release.OPTIONS)
    assert set(types.ForestOptions.__annotations__) == set(forest.OPTIONS) - {"n_estimators", "max_depth"}
    assert set(types.ClusterOptions.__annotations__) == {o for opts in kmeans.OPTIONS.values() for o in opts}
    assert set(types.Reading.__annotations__) == set(inputs.READING)
    generalize = set(inspect.signature(dpkit.generalize).parameters) - {"data", "cut", "schema"}
    assert set(types.GeneralizeOptions.__annotations__) == generalize
    infer = set(inspect.signature(dpkit.infer_schema).parameters)
    learn = set(inspect.signature(dpkit.learn_schema).parameters) | {"encoding", "delimiter"}  # from its data
    assert set(types.LearnOptions.__annotations__) == infer - learn


#: the public parameters still typed Any, and why: Ledger.register takes its 0.4 argument order
#: too (its new one is the ledger split's to type)
STILL_ANY = {("Ledger.register", n) for n in ("name", "data", "cap", "delta_cap", "data_path")}


def test_no_other_public_parameter_is_typed_any() -> None:
    typed_any = set()
    for name, obj in _public_callables():
        if inspect.isclass(obj):
            continue
        for p in inspect.signature(obj).parameters.values():
            if p.annotation in ("Any", typing.Any) and not p.name.startswith("_"):
                typed_any.add((name, p.name))
    assert typed_any == STILL_ANY  # 46 on main before (of 402 public parameters)
