"""recmetrics: evaluation metrics for recommenders and classifiers, explained and checked.

Distributed as ``metricbook`` (the PyPI name ``recmetrics`` is another project).
"""
from pathlib import Path

from ._validation import RecmetricsWarning
from .auc import GroupAUC, group_auc, group_auc_details, roc_auc, roc_curve
from .classification import (ConfusionMatrix, accuracy, confusion_matrix, f1_score, false_positive_rate,
                             fbeta_score, precision, recall, true_positive_rate)
from .ranking import (average_precision, cg, dcg, hit_rate_at_k, mean_average_precision,
                      mean_reciprocal_rank, ndcg, precision_at_k, recall_at_k, reciprocal_rank)
from .regression import mae, mse, rmse
from .probability import (brier_score, calibration_curve, expected_calibration_error, log_loss,
                          normalized_entropy, pr_auc, precision_recall_curve)
from .stats import ChiSquareResult, bootstrap_ci, chi_square_critical_value, chi_square_test
from .frame import compare, evaluate, evaluate_per_user
from .beyond import BEYOND_METRICS, beyond_accuracy, beyond_accuracy_per_user, most_popular
from . import sampling  # noqa: E402  (recmetrics.sampling: sampled metrics and corrections)

__version__ = "0.1.0"

#: Folder of the small data files shipped inside the package (the sample click log).
DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = [
    "RecmetricsWarning", "DATA_DIR",
    "ConfusionMatrix", "confusion_matrix", "accuracy", "precision", "recall", "f1_score",
    "fbeta_score", "true_positive_rate", "false_positive_rate",
    "roc_curve", "roc_auc", "group_auc", "group_auc_details", "GroupAUC",
    "precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision", "reciprocal_rank",
    "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg", "ndcg",
    "mse", "rmse", "mae",
    "log_loss", "brier_score", "normalized_entropy", "precision_recall_curve", "pr_auc",
    "calibration_curve", "expected_calibration_error",
    "ChiSquareResult", "chi_square_test", "chi_square_critical_value", "bootstrap_ci",
    "evaluate", "evaluate_per_user", "compare", "sampling",
    "beyond_accuracy", "beyond_accuracy_per_user", "most_popular", "BEYOND_METRICS",
]
