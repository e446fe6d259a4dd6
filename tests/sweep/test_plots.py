"""Sweep plots: files, pooled lines, categorical and list-valued axes, log-axis choice."""

from __future__ import annotations

import pytest

from dpkit.sweep.groups import Group, Stat
from dpkit.sweep.plots import _wants_log, metric_label, param_label, plot_all
from dpkit.sweep.spec import parse_experiment

PNG = b"\x89PNG\r\n\x1a\n"


def _groups(sweep: str, points: list[dict], metric: str = "acc") -> list[Group]:
    out = []
    for i, p in enumerate(points):
        out.append(Group(sweep, p, dict(p), {metric: Stat(0.5 + 0.01 * i, 0.02, 3),
                                             f"baseline_{metric}": Stat(0.9, 0.0, 3)}, runs=3))
    return out


def test_categorical_and_list_valued_x(tmp_path):
    exp = parse_experiment(
        "name: t\ntask: publish\nsweeps:\n"
        "  - {name: s, grid: {model: [tree, svm], cols: [[a, b], [c]]}}\n"
        "plots:\n  - {sweep: s, x: cols, y: acc, lines: model}\n  - {sweep: s, x: model, y: [acc, missing]}\n"
    )
    points = [{"model": m, "cols": c} for m in ("tree", "svm") for c in (["a", "b"], ["c"])]
    images = plot_all(exp, _groups("s", points), tmp_path)
    # the metric no run returned draws nothing
    assert images == {"s": ["s-acc-vs-cols.png", "s-acc-vs-model.png"]}
    for name in images["s"]:
        assert (tmp_path / name).read_bytes()[:8] == PNG


def test_wants_log():
    def g(v):
        return Group("s", {}, {}, {"m": Stat(v, 0.0, 1)})

    assert _wants_log([g(1.0), g(40.0)], "m")  # a ratio over a wide range
    assert not _wants_log([g(0.5), g(0.99)], "m")  # an F-measure: linear
    assert not _wants_log([g(0.0), g(10.0)], "m")  # a zero cannot go on a log axis


@pytest.mark.parametrize(("name", "task", "label"), [
    ("epsilon", "publish", "privacy budget ε"),
    ("levels", "publish", "number of specializations h"),
    ("k", "cluster", "number of clusters k"),
    ("k", "kanon-select", "anonymity level k (smallest class size)"),
    ("my_param", "publish", "my param"),
])
def test_param_labels(name, task, label):
    assert param_label(name, task) == label


def test_metric_labels():
    assert metric_label("accuracy") == "accuracy on the test split"
    assert metric_label("wall_seconds") == "wall time per run (s)"
    assert metric_label("odd_metric") == "odd metric"
