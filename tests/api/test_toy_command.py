"""docs/contributing.md's recipe, followed: a toy private command — the noisy count of each class
of the target — added as the guide says (an algorithm free of I/O that draws through
dpkit.privacy, and a library call that is a Pipeline around it), runs with a schema and without
one, books what it spends, keeps a keyed run's bytes and writes the learned schema beside its
output. If this test needs more than the guide shows, the guide is wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpkit.api.spec import REQUIRED, Param, spec

REPO = Path(__file__).resolve().parents[2]
ADULT = str(REPO / "sample_data" / "adult" / "train.csv")
SCHEMA = str(REPO / "taxonomies" / "adult.yaml")
KEY = "0x6a09e667f3bcc908b2fb1366ea957d3f"


class NoisyClassCounts:
    """The algorithm: one discrete-Laplace histogram of the target's classes (sensitivity 1 under
    add/remove-one). No I/O: it reads the frame's aggregates and draws through dpkit.privacy."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon

    def fit(self, frame: Any, target: str, *, accountant: Any, rng: np.random.Generator) -> NoisyClassCounts:
        from dpkit.engine.keys import Col
        from dpkit.privacy.mechanisms import discrete_laplace

        classes = frame.schema.column(target).leaves
        exact = frame.counts([Col(target)], [len(classes)])  # private: only noised
        noisy = discrete_laplace(exact, epsilon=self.epsilon, rng=rng, accountant=accountant,
                                 step="class counts")
        self.counts_ = dict(zip(classes, np.maximum(noisy, 0).tolist(), strict=True))
        return self


#: the parameters, declared once: the common ones as every command has them, the command's own here
SPEC = spec("class-counts", "data target epsilon schema delta random_state output ledger",
            target=Param("str\nThe class column whose classes are counted.", default=REQUIRED),
            output=Param("path, optional\nAlso write the report (JSON), inside the run."))


@SPEC.document
def class_counts(data: Any, *, target: str, epsilon: float, schema: Any = None, delta: float | None = None,
                 random_state: Any = None, output: str | None = None, ledger: Any = None) -> dict[str, Any]:
    """The library call: the pipeline around the algorithm; returns the report.

    Parameters
    ----------
    {parameters}
    """
    call = dict(locals())  # a keyed run's identity
    from dpkit.api.pipeline import Pipeline
    from dpkit.report import write_report

    pipe = Pipeline("class-counts", call)  # reads data, schema, epsilon, delta, ledger, ... by name
    pipe.start("noisy-class-counts", target=target, columns=lambda schema, target: [target], output=output)
    with pipe:
        model = NoisyClassCounts(pipe.epsilon).fit(pipe.frame, target, accountant=pipe.accountant, rng=pipe.rng)
        report = pipe.report({"target": target, "schema": pipe.schema_name}, {"counts": model.counts_})
        if output is not None:
            write_report(report, output)
    return report


def test_with_a_schema_it_spends_its_epsilon_on_the_counts() -> None:
    report = class_counts(ADULT, target="income", epsilon=0.5, schema=SCHEMA, random_state=KEY)
    assert [s["step"] for s in report["spends"]] == ["class counts"]
    assert report["privacy"]["epsilon_spent"] == pytest.approx(0.5)
    counts = report["release"]["counts"]
    assert set(counts) == {"<=50K", ">50K"} and counts["<=50K"] > counts[">50K"] > 0


def test_a_keyed_run_gives_the_same_counts() -> None:
    one, two = (class_counts(ADULT, target="income", epsilon=0.5, schema=SCHEMA, random_state=KEY)["release"]
                for _ in range(2))
    assert one == two


def test_without_a_schema_the_domain_is_learned_first_and_written_beside(tmp_path: Path) -> None:
    out = str(tmp_path / "counts.json")
    report = class_counts(ADULT, target="income", epsilon=1.0, delta=1e-6, random_state=KEY, output=out)
    steps = [s["step"] for s in report["spends"]]
    assert steps[-1] == "class counts" and any(s.startswith("domain") for s in steps[:-1])
    assert report["privacy"]["epsilon_spent"] <= 1.0 + 1e-12
    assert report["parameters"]["schema"] == str(tmp_path / "counts.schema.yaml")
    assert os.path.exists(tmp_path / "counts.schema.yaml")
    assert json.loads(Path(out).read_text())["release"] == report["release"]
    assert set(report["release"]["counts"]) == {"<=50K", ">50K"}


def test_without_a_schema_delta_is_required() -> None:
    import dpkit

    with pytest.raises(dpkit.DpkitUsageError, match="delta"):
        class_counts(ADULT, target="income", epsilon=1.0)


def test_the_declaration_is_the_signature_and_the_docs() -> None:
    import inspect

    params = inspect.signature(class_counts).parameters
    assert list(params) == list(SPEC.params)
    assert all((p.default is inspect.Parameter.empty) == (SPEC.params[n].default is REQUIRED) for n, p in params.items())
    doc = inspect.getdoc(class_counts)
    assert "target : str\n    The class column whose classes are counted." in doc
    assert "ledger : Ledger or path, optional" in doc  # the common text
