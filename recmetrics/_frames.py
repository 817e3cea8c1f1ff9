"""What kind of table an argument is, and the Arrow tables made pandas: engine detection, once.

An input is one of

* a pandas DataFrame, evaluated in this process;
* a Dask or a Spark DataFrame, evaluated by the engine of
  :mod:`recmetrics.distributed` or :mod:`recmetrics.spark`;
* any other object that exports the Arrow C stream (``__arrow_c_stream__``): a
  Polars DataFrame, a DuckDB relation, a pyarrow Table or RecordBatchReader,
  ... It is read once into Arrow and made a pandas DataFrame by the path the
  file readers use (:func:`recmetrics._ids.arrow_frame`): text id columns are
  hashed in Arrow into Categoricals, never turned into Python strings, so the
  numbers are those of the same data given as pandas.

Each kind is told by the module of the object's type, so that asking imports
neither Dask, Spark, Polars nor DuckDB (as narwhals' ``dependencies`` module
does).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

from ._ids import merged_ids_problem

Engine = Literal["spark", "distributed"]

#: ``frame.attrs[EXACT_IDS]`` True: the frame's ids are exact text, never canonicalised (the
#: frames of :func:`recmetrics.read_trec_run` and :func:`recmetrics.read_trec_qrels`: trec_eval
#: compares ids as strings). :func:`pandas_inputs` refuses such ids that the id policy would
#: read as one (``"7"`` and ``"7.0"``), which would otherwise judge each other.
EXACT_IDS = "exact_ids"


def _library(frame) -> str:
    return type(frame).__module__.split(".")[0]


def is_dask(frame) -> bool:
    """A Dask collection."""
    return _library(frame) in ("dask", "dask_expr")


def is_spark(frame) -> bool:
    """A Spark DataFrame."""
    return _library(frame) == "pyspark"


def is_arrow_stream(frame) -> bool:
    """An object that exports the Arrow C stream, other than pandas' own (a DataFrame, a Series:
    taken as they are), Dask's and Spark's."""
    return (hasattr(type(frame), "__arrow_c_stream__")
            and _library(frame) not in ("pandas", "numpy") and not is_dask(frame)
            and not is_spark(frame))


def _frames(frames) -> list:
    found: list = []
    for f in frames:
        found += list(f.values()) if isinstance(f, Mapping) else \
            list(f) if isinstance(f, (list, tuple)) else [f]
    return found


def engine_of(*frames) -> Engine | None:
    """The engine that evaluates these frames (a mapping or list of models counts by its
    frames): "spark", "distributed" (Dask), or None for this process."""
    found = _frames(frames)
    if any(is_spark(f) for f in found):
        return "spark"
    return "distributed" if any(is_dask(f) for f in found) else None


def as_pandas(frame, ids: tuple[str, ...] = ()) -> Any:
    """``frame`` as pandas when it exports the Arrow C stream (its text columns named in
    ``ids`` hashed in Arrow); anything else as it is, for the checks that follow."""
    if not is_arrow_stream(frame):
        return frame
    import pyarrow as pa

    from ._ids import arrow_frame

    try:
        table = pa.table(frame)
    except pa.ArrowInvalid:   # a stream of one column (a Polars Series): a pandas Series
        return _column(pa.chunked_array(frame)).to_pandas()
    table = pa.table([_column(c) for c in table.columns], names=table.column_names)
    return arrow_frame(table, {name for name in ids if name in table.column_names})


def _column(column):
    """Polars' string views as strings, DuckDB's decimals (its literals, NUMERIC columns) as
    float64: the types the pandas path reads."""
    import pyarrow as pa

    if pa.types.is_string_view(column.type):
        return column.cast(pa.large_string())
    if pa.types.is_decimal(column.type):
        return column.cast(pa.float64())
    return column


def pandas_inputs(inputs: Mapping[str, Any], ids: tuple[str, ...]) -> dict[str, Any]:
    """Every argument of ``inputs`` ({name: frame, mapping or list of frames, or None}) with its
    Arrow-stream frames made pandas."""
    out: dict[str, Any] = {}
    for name, value in inputs.items():
        if isinstance(value, Mapping):
            out[name] = {key: as_pandas(frame, ids) for key, frame in value.items()}
        elif isinstance(value, (list, tuple)):
            out[name] = type(value)(as_pandas(frame, ids) for frame in value)
        else:
            out[name] = as_pandas(value, ids)
    _refuse_merged_exact_ids(out, ids)
    return out


def _refuse_merged_exact_ids(inputs: Mapping[str, Any], ids: tuple[str, ...]) -> None:
    """Refuse, when a frame holds exact-text ids (:data:`EXACT_IDS`), two ids of the inputs
    that differ as text but are one id under the id policy: trec_eval tells them apart,
    ``recmetrics.evaluate`` would join them, so the number would be neither's."""
    frames = []
    for name, value in inputs.items():
        items = value.items() if isinstance(value, Mapping) else \
            enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)]
        frames += [(name if key is None else f"{name}[{key!r}]", frame) for key, frame in items
                   if type(frame).__name__ == "DataFrame" and _library(frame) == "pandas"]
    if not any(frame.attrs.get(EXACT_IDS) for _, frame in frames):
        return
    for column in dict.fromkeys(ids):
        problem = merged_ids_problem([(name, frame[column], bool(frame.attrs.get(EXACT_IDS)))
                                      for name, frame in frames if column in frame.columns],
                                     column)
        if problem is not None:
            raise ValueError(problem)


#: The arguments of evaluate, evaluate_per_user and compare that hold score or truth frames.
FRAME_ARGUMENTS = ("pred", "truth", "pred_a", "pred_b")


def on_engine(function: Callable, convert: Callable, engine: str) -> Callable:
    """``function`` (:func:`recmetrics.evaluate`, ``evaluate_per_user`` or ``compare``) with
    its score and truth frames passed through ``convert`` first (pandas made the engine's
    frames), so that the engine runs whatever is passed: the engine forms of
    :mod:`recmetrics.distributed` and :mod:`recmetrics.spark`. The signature and the
    documentation are ``function``'s (``help()`` shows every option)."""
    signature = inspect.signature(function)

    def converted(value):
        if isinstance(value, Mapping):
            return {key: convert(frame) for key, frame in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(convert(frame) for frame in value)
        return convert(value)

    @functools.wraps(function)
    def on(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name in FRAME_ARGUMENTS:
            if name in bound.arguments:
                bound.arguments[name] = converted(bound.arguments[name])
        return function(*bound.args, **bound.kwargs)

    on.__doc__ = (f":func:`recmetrics.{function.__name__}` on {engine}: pandas DataFrames among "
                  f"the scores and the truth are made {engine} DataFrames first, so that the "
                  f"{engine} engine runs. Every option is that function's:\n\n"
                  + (function.__doc__ or ""))
    return on
