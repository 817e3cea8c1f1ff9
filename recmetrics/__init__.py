"""recmetrics: evaluation metrics for recommenders and classifiers, explained and checked.

Distributed as ``metricbook`` (the PyPI name ``recmetrics`` is another project).
"""
from pathlib import Path

from ._validation import RecmetricsWarning
from .auc import GroupAUC, group_auc, group_auc_details, roc_auc, roc_curve
from .classification import (ConfusionMatrix, accuracy, balanced_accuracy, confusion_matrix,
                             f1_score, false_negative_rate, false_positive_rate, fbeta_score,
                             matthews_corrcoef, precision, recall, specificity,
                             true_positive_rate)
from .ranking import (RBP, average_precision, bpref, cg, dcg, err, hit_rate_at_k,
                      mean_average_precision, mean_over_lists, mean_reciprocal_rank, ndcg,
                      precision_at_k, r_precision, rbp, recall_at_k, reciprocal_rank)
from .trec import read_trec_qrels, read_trec_run
from .regression import mae, mse, rmse
from .probability import (brier_score, calibration_curve, expected_calibration_error, log_loss,
                          normalized_entropy, pr_auc, precision_recall_curve)
from .stats import (ChiSquareResult, DeLongResult, adjust_p_values, bootstrap_ci,
                    chi_square_critical_value, chi_square_test, delong_test, paired_bootstrap_test)
from .tables import LOWER_IS_BETTER, ResultsTable, results_table
from .frame import compare, evaluate, evaluate_per_user
from .slices import disparity
from ._compare import results_table_from_comparison
from ._display import ResultDisplay, show
from .beyond import BEYOND_METRICS, beyond_accuracy, beyond_accuracy_per_user, most_popular
from . import sampling  # noqa: E402  (recmetrics.sampling: sampled metrics and corrections)
from . import plots  # noqa: E402  (recmetrics.plots: figures; imports matplotlib only to draw)

__version__ = "0.1.0"

#: Folder of the small data files shipped inside the package (the sample click log).
DATA_DIR = Path(__file__).resolve().parent / "data"

__all__ = [
    "RecmetricsWarning", "DATA_DIR",
    "ConfusionMatrix", "confusion_matrix", "accuracy", "precision", "recall", "f1_score",
    "fbeta_score", "true_positive_rate", "false_positive_rate", "specificity",
    "false_negative_rate", "balanced_accuracy", "matthews_corrcoef",
    "roc_curve", "roc_auc", "group_auc", "group_auc_details", "GroupAUC",
    "precision_at_k", "recall_at_k", "hit_rate_at_k", "average_precision", "reciprocal_rank",
    "mean_average_precision", "mean_reciprocal_rank", "cg", "dcg", "ndcg",
    "r_precision", "bpref", "rbp", "RBP", "err", "mean_over_lists",
    "read_trec_run", "read_trec_qrels",
    "mse", "rmse", "mae",
    "log_loss", "brier_score", "normalized_entropy", "precision_recall_curve", "pr_auc",
    "calibration_curve", "expected_calibration_error",
    "ChiSquareResult", "chi_square_test", "chi_square_critical_value", "bootstrap_ci",
    "DeLongResult", "delong_test", "paired_bootstrap_test", "adjust_p_values",
    "ResultsTable", "results_table", "LOWER_IS_BETTER", "results_table_from_comparison",
    "ResultDisplay", "show",
    "evaluate", "evaluate_per_user", "compare", "disparity", "sampling", "plots",
    "beyond_accuracy", "beyond_accuracy_per_user", "most_popular", "BEYOND_METRICS",
]
