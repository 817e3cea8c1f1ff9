"""recmetrics: evaluation metrics for recommenders and classifiers, explained and checked.

Distributed as ``metricbook`` (the PyPI name ``recmetrics`` is another project).

The public names below are imported from their submodules on first use (PEP 562), so that
``import recmetrics`` and the command line load only what they run: ``rm.roc_auc``,
``from recmetrics import roc_auc`` and ``from recmetrics import *`` work as if every
submodule had been imported here.
"""
import importlib as _importlib
import typing as _typing
from pathlib import Path

__version__ = "0.1.0"

#: Folder of the small data files shipped inside the package (the sample click log).
DATA_DIR = Path(__file__).resolve().parent / "data"

if _typing.TYPE_CHECKING:  # what mypy and IDEs see; at run time __getattr__ below imports these
    from . import plots, sampling
    from ._compare import results_table_from_comparison
    from ._display import ResultDisplay, show, to_csv
    from ._validation import RecmetricsWarning
    from .adapters import from_score_matrix, from_topk
    from .auc import GroupAUC, group_auc, group_auc_details, roc_auc, roc_curve
    from .beyond import BEYOND_METRICS, beyond_accuracy, beyond_accuracy_per_user, most_popular
    from .classification import (ConfusionMatrix, accuracy, balanced_accuracy, confusion_matrix,
                                 f1_score, false_negative_rate, false_positive_rate, fbeta_score,
                                 matthews_corrcoef, precision, recall, specificity,
                                 true_positive_rate)
    from .evaluation import compare, evaluate, evaluate_per_user
    from .probability import (brier_score, calibration_curve, expected_calibration_error, log_loss,
                              normalized_entropy, pr_auc, precision_recall_curve)
    from .ranking import (RBP, average_precision, bpref, cg, dcg, err, hit_rate_at_k,
                          mean_average_precision, mean_over_lists, mean_reciprocal_rank, ndcg,
                          precision_at_k, r_precision, rbp, recall_at_k, reciprocal_rank)
    from .regression import mae, mse, rmse
    from .power import ab_sample_size, minimum_detectable_effect, paired_sample_size
    from .slices import disparity
    from .splits import check_leakage, split_log
    from .stats import (ChiSquareResult, DeLongResult, adjust_p_values, bootstrap_ci,
                        chi_square_critical_value, chi_square_test, delong_test,
                        paired_bootstrap_test)
    from .tables import LOWER_IS_BETTER, ResultsTable, results_table
    from .trec import read_trec_qrels, read_trec_run

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
    "paired_sample_size", "minimum_detectable_effect", "ab_sample_size",
    "ResultsTable", "results_table", "LOWER_IS_BETTER", "results_table_from_comparison",
    "ResultDisplay", "show", "to_csv",
    "evaluate", "evaluate_per_user", "compare", "disparity", "sampling", "plots",
    "beyond_accuracy", "beyond_accuracy_per_user", "most_popular", "BEYOND_METRICS",
    "from_topk", "from_score_matrix", "split_log", "check_leakage",
]

#: The submodule each public name is defined in (the imports under TYPE_CHECKING above).
_HOME = {name: module for module, names in {
    "_validation": ["RecmetricsWarning"],
    "auc": ["GroupAUC", "group_auc", "group_auc_details", "roc_auc", "roc_curve"],
    "classification": ["ConfusionMatrix", "accuracy", "balanced_accuracy", "confusion_matrix",
                       "f1_score", "false_negative_rate", "false_positive_rate", "fbeta_score",
                       "matthews_corrcoef", "precision", "recall", "specificity",
                       "true_positive_rate"],
    "ranking": ["RBP", "average_precision", "bpref", "cg", "dcg", "err", "hit_rate_at_k",
                "mean_average_precision", "mean_over_lists", "mean_reciprocal_rank", "ndcg",
                "precision_at_k", "r_precision", "rbp", "recall_at_k", "reciprocal_rank"],
    "trec": ["read_trec_qrels", "read_trec_run"],
    "regression": ["mae", "mse", "rmse"],
    "probability": ["brier_score", "calibration_curve", "expected_calibration_error", "log_loss",
                    "normalized_entropy", "pr_auc", "precision_recall_curve"],
    "stats": ["ChiSquareResult", "DeLongResult", "adjust_p_values", "bootstrap_ci",
              "chi_square_critical_value", "chi_square_test", "delong_test",
              "paired_bootstrap_test"],
    "power": ["ab_sample_size", "minimum_detectable_effect", "paired_sample_size"],
    "tables": ["LOWER_IS_BETTER", "ResultsTable", "results_table"],
    "evaluation": ["compare", "evaluate", "evaluate_per_user"],
    "slices": ["disparity"],
    "_compare": ["results_table_from_comparison"],
    "_display": ["ResultDisplay", "show", "to_csv"],
    "beyond": ["BEYOND_METRICS", "beyond_accuracy", "beyond_accuracy_per_user", "most_popular"],
    "adapters": ["from_score_matrix", "from_topk"],
    "splits": ["check_leakage", "split_log"],
}.items() for name in names}

#: The submodules that ``import recmetrics`` used to load eagerly: still attributes of the package
#: (``rm.plots``, ``rm.stats``), imported when first asked for.
_SUBMODULES = frozenset({
    "_beyond", "_compare", "_display", "_pipeline", "_ids", "_kernels", "_options", "_validation",
    "adapters", "auc", "beyond", "classification", "evaluation", "plots", "probability", "ranking", "regression",
    "sampling", "slices", "splits", "stats", "tables", "trec",
})


def __getattr__(name: str) -> object:
    """A public name or submodule, imported on first use and kept in the module's namespace."""
    if name in _HOME:
        value = getattr(_importlib.import_module(f".{_HOME[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The names an eager import would show: the public API, its submodules, no lazy machinery."""
    machinery = {"_importlib", "_typing", "_HOME", "_SUBMODULES", "__getattr__", "__dir__"}
    return sorted((set(globals()) | set(__all__) | _SUBMODULES) - machinery)
