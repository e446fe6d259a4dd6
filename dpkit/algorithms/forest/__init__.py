"""`dpkit forest`: DiffPRFs, a differentially private random forest, and its model file.

Library use::

    from dpkit.algorithms.forest import DiffPRFs, load_model, predict, predict_proba
    forest = DiffPRFs(epsilon=1.0, n_trees=25, max_depth=5).fit(table, "income",
                                                               accountant=acc, rng=rng)
    labels = predict(forest.model_, test_df)          # or predict("model.json", test_df)
"""

from dpkit.algorithms.forest.dprf import DiffPRFs
from dpkit.algorithms.forest.model import (
    FORMAT_VERSION,
    ForestModel,
    load_model,
    model_from_dict,
    predict,
    predict_frame,
    predict_proba,
    save_model,
)

__all__ = [
    "DiffPRFs",
    "FORMAT_VERSION",
    "ForestModel",
    "load_model",
    "model_from_dict",
    "predict",
    "predict_frame",
    "predict_proba",
    "save_model",
]
