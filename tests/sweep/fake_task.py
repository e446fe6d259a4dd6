"""A fake sweep task: deterministic metrics from the parameters and the seed (no dpkit run)."""

from __future__ import annotations

import math
import os
import time
from typing import Any

import numpy as np

CALLS_DIR_ENV = "DPKIT_FAKE_TASK_CALLS"


def run_experiment(params: dict[str, Any], seed: int) -> dict[str, float]:
    """Accuracy rising with ε and h, noise from the seed; records each call in a directory."""
    calls = os.environ.get(CALLS_DIR_ENV)
    if calls:
        # one file per call, so calls from worker processes are counted too
        name = f"{params.get('algorithm', 'a')}-{params.get('epsilon')}-{params.get('levels')}-{seed}-{time.perf_counter_ns()}"
        open(os.path.join(calls, name), "w").close()
    if params.get("fail"):
        raise ValueError("asked to fail")
    rng = np.random.default_rng(seed)
    eps = float(params.get("epsilon", 1.0))
    h = float(params.get("levels", 10))
    bonus = 0.02 if params.get("algorithm") == "maxgddp" else 0.0
    acc = 0.76 + 0.08 * (1 - math.exp(-3 * eps)) + 0.002 * h + bonus + rng.normal(0, 0.005)
    return {
        "accuracy": min(acc, 0.99),
        "baseline_accuracy": 0.852,
        "floor_accuracy": 0.754,
        "epsilon_spent": eps,
    }
