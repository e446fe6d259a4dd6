"""Every output of a run that is not private is marked (issue 24 item 5): a plain integer seed
marks the cluster outputs' headers as --allow-data-bounds does, and the forest model file's
privacy block carries the report's model and guarantee."""

from __future__ import annotations

import json
from pathlib import Path

import dpkit

REPO = Path(__file__).resolve().parents[2]
S1 = REPO / "sample_data" / "clustering" / "s1.csv"
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0x4be1a07c93d25f68e0b7c1d94a3f2e65"


def test_plain_seed_marks_cluster_outputs(tmp_path: Path) -> None:
    out, hist = tmp_path / "c.csv", tmp_path / "h.csv"
    c = dpkit.cluster(S1, columns=["x", "y"], n_clusters=5, epsilon=1.0, bounds="0:1e6,0:1e6", random_state=4, output=out,
                      histogram=hist)
    assert out.read_text().splitlines()[0] == "cluster_not_private,x,y"
    assert hist.read_text().splitlines()[0].split(",")[-1].endswith("_not_private")
    assert c.report["privacy"]["model"] == "none"
    assert c.report["release"]["not_private_outputs"] == [str(out), str(hist)]


def test_private_runs_are_not_marked(tmp_path: Path) -> None:
    for seed in (None, KEY):
        out = tmp_path / "c.csv"
        c = dpkit.cluster(S1, columns=["x", "y"], n_clusters=5, epsilon=1.0, bounds="0:1e6,0:1e6", random_state=seed, output=out)
        assert out.read_text().splitlines()[0] == "cluster,x,y"
        assert "not_private_outputs" not in c.report["release"]


def test_forest_model_file_says_what_the_report_says(tmp_path: Path) -> None:
    for seed, model in ((4, "none"), (KEY, "epsilon-dp")):
        out = tmp_path / "m.json"
        f = dpkit.forest(ADULT, schema=SCHEMA, epsilon=1.0, n_estimators=2, max_depth=1, random_state=seed, output=out)
        privacy = json.loads(out.read_text())["privacy"]
        assert privacy["model"] == model == f.report["privacy"]["model"]
        assert privacy["guarantee"] == f.report["privacy"]["guarantee"]
        assert privacy["neighbours"] == f.report["privacy"]["neighbours"]
