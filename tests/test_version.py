"""Each round's release has its own version (issue 24, item 9): the code, the changelog and the
outputs agree."""

import json
import re
from pathlib import Path

import dpkit

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_the_changelogs_newest_and_not_the_old_placeholder():
    newest = re.search(r"^## (\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert newest is not None and dpkit.__version__ == newest.group(1)
    assert dpkit.__version__ != "0.1.0"


def test_reports_and_model_files_carry_the_version(tmp_path):
    adult = ROOT / "sample_data" / "adult"
    release = dpkit.publish(str(adult / "train.csv"), schema=str(ROOT / "taxonomies" / "adult.yaml"),
                            epsilon=1.0, random_state=7)
    assert release.report["dpkit_version"] == dpkit.__version__
    model = dpkit.forest(str(adult / "train.csv"), schema=str(ROOT / "taxonomies" / "adult.yaml"),
                         target="income", epsilon=1.0, n_estimators=2, max_depth=2, random_state=7)
    model.write(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["dpkit_version"] == dpkit.__version__
