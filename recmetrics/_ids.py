"""The id policy, in one place: reading, canonicalising, coding, joining and hashing ids.

The same rule holds for CSV, Parquet, DataFrames and every engine: ids are
compared as canonical text. Surrounding whitespace is stripped and whole
numbers are written as integers, so ``7``, ``7.0``, ``"7"``, ``"7.0"`` and
``" 7"`` are one id; any other text is kept as it is (``"001"`` and ``"1"``
stay two ids). When every id column involved holds whole numbers they are
compared as int64 directly (the same result, faster): uint64 ids only when every
value fits, so that 2**64 - 1 never becomes -1. Boolean ids are the text ``True`` and
``False``, as a CSV file spells them (not 1 and 0).

* :func:`distinct_ids`: a text column read from a file, hashed once into a
  Categorical of its distinct ids (first-appearance order);
* :func:`canonical_ids` / :func:`integral_ids`: the policy applied to columns;
* :func:`codes`: joint integer codes of one id column of several frames, the
  per-row work one hash and one gather;
* :func:`locate`: a join of integer keys; :func:`join`: the same with the duplicate check
  of both sides, one sort for both;
* :func:`user_hash` / :func:`keyed_users`: the hash that sends a user to a
  partition and keys the Poisson bootstrap, the same in every process.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._threads import thread_map
from ._validation import all_distinct, check_id_codes, is_real_number

# The id policy, the same for CSV, Parquet and DataFrames: ids are compared as
# canonical text. Surrounding whitespace is stripped, whole numbers are written
# as integers (7, 7.0, "7" and "7.0" are one id), and any other text is kept as it is
# ("001" and "1" stay two ids). When every id column involved holds whole
# numbers, they are compared as int64 directly (the same result, faster).


def _wide_unsigned(values) -> bool:
    """Whether a column is of an unsigned type with values int64 cannot hold (uint64)."""
    kind = getattr(values.dtype, "kind", "")
    return kind == "u" and values.dtype.itemsize >= 8


def _integral(values) -> bool:
    if _wide_unsigned(values):  # uint64: int64 only when every value fits, never wrapped
        return bool(len(values) == 0 or int(values.max()) < 2**63)
    if pd.api.types.is_bool_dtype(values):  # "True" / "False", as a CSV file holds them
        return False
    if pd.api.types.is_integer_dtype(values):
        return True
    if pd.api.types.is_float_dtype(values):
        arr = values.to_numpy(dtype=np.float64, na_value=np.nan)
        return bool(np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                    and np.all(np.abs(arr) < 2**63))
    return False


#: Text ids that spell a whole number with a decimal point ("7.0", "12.00"), as pandas writes a
#: float column to CSV: read as that whole number ("7", "12").
_WHOLE_WITH_POINT = r"^([+-]?\d+)\.0+$"


def _id_text(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if is_real_number(value) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def integral_ids(*columns) -> bool:
    """Whether every id column holds whole numbers only, so ids compare as int64."""
    return all(_integral(c) for c in columns)


def canonical_ids(*columns, integral: bool | None = None):
    """Several id columns (pandas Series) in one comparable form, under the id policy.

    Returns int64 arrays when every column holds whole numbers, else string
    Series of canonical text. ``integral`` imposes the form decided over more
    columns than these (a Dask engine sees one partition at a time): True
    (every column is whole numbers) or False (text).
    """
    if integral if integral is not None else integral_ids(*columns):
        return [c.to_numpy(dtype=np.int64) for c in columns]
    out = []
    for c in columns:
        if isinstance(c.dtype, pd.CategoricalDtype):
            categories = canonical_ids(pd.Series(c.cat.categories))[0]
            out.append(pd.Series(np.asarray(categories, dtype=object)[c.cat.codes.to_numpy()],
                                 index=c.index, dtype="str"))
        elif pd.api.types.is_bool_dtype(c):
            out.append(c.map(_id_text).astype("str"))
        elif pd.api.types.is_integer_dtype(c):
            out.append(c.astype(np.uint64 if _wide_unsigned(c) else np.int64).astype("str"))
        elif _integral(c):
            out.append(c.astype(np.int64).astype("str"))
        else:
            if pd.api.types.is_string_dtype(c) and not pd.api.types.is_object_dtype(c):
                text = c.str.strip().astype("str")  # one string dtype, whatever the input's
            elif pd.api.types.infer_dtype(c, skipna=False) == "string":  # object column of str
                text = c.astype("str").str.strip()
            else:
                text = c.map(_id_text).astype("str")
            out.append(text.str.replace(_WHOLE_WITH_POINT, r"\1", regex=True))
    return out



def codes(column: str, *frames, integral: bool | None = None, ordered: bool = True,
          compact: bool = False) -> tuple[list[np.ndarray], pd.Index]:
    """Joint integer codes of one id column of several named frames, and the distinct ids.

    ``frames`` are (name, DataFrame) pairs. Each column is factorized as it is
    (hashing its native type; a missing id is refused), the id policy is
    applied to its distinct values only, and the canonical values of all
    columns are factorized together: the per-row work is one hash and one
    gather, whatever the id type. ``integral`` as in
    :func:`canonical_ids`.

    Codes run in order of first appearance. With ``ordered=False`` (ids that
    are only matched, never listed: items) and integer columns whose values
    span at most a few times as many values as there are rows, the code is
    the value less the smallest one: no hash at all, and the distinct ids are
    the whole span (a RangeIndex).

    The codes are intp; with ``compact``, int32 when the distinct ids fit (half the
    memory, for a caller that only indexes and counts with them, never multiplies).
    """
    if not ordered and integral is not False:
        values = [frame[column] for _, frame in frames]
        if all(isinstance(v.dtype, np.dtype) and v.dtype.kind in "iu" for v in values):
            values = [v.to_numpy() for v in values]
            lo = min((int(v.min()) for v in values if v.size), default=0)
            hi = max((int(v.max()) for v in values if v.size), default=0)
            if hi < 2**63 and hi - lo < 4 * sum(v.size for v in values) + 65536:
                # widened first: int8 values less their minimum overflow int8
                kind = np.int32 if compact and hi - lo < 2**31 - 1 else np.intp
                return ([(v.astype(np.int64) - lo).astype(kind) for v in values],
                        pd.RangeIndex(lo, hi + 1))
    parts = []
    for name, frame in frames:
        codes_, uniques = _factorized(frame[column])
        check_id_codes(name, column, codes_)
        parts.append((codes_, uniques))
    canonical = canonical_ids(*(pd.Series(uniques) for _, uniques in parts), integral=integral)
    joined = np.concatenate(canonical) if isinstance(canonical[0], np.ndarray) else pd.concat(
        canonical, ignore_index=True)
    joint, uniques = pd.factorize(joined)
    if compact and len(uniques) < 2**31 - 1:
        joint = joint.astype(np.int32)
    offsets = np.cumsum([0] + [len(u) for _, u in parts])
    return ([joint[offset:offset + len(u)][c] for offset, (c, u) in zip(offsets, parts)],
            pd.Index(uniques))


def _factorized(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pandas.factorize`` of a column; a Categorical whose categories all occur, in order
    of first appearance (as :func:`distinct_ids` makes them), gives its own codes unhashed."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes_ = values.array.codes  # a view: Series.cat.codes would copy
        n = len(values.cat.categories)
        if codes_.size and (codes_ >= 0).all() and _first_appearance(codes_, n):
            return codes_, values.cat.categories
    codes_, uniques = pd.factorize(values)
    return codes_, pd.Index(uniques)


def _first_appearance(codes_: np.ndarray, n: int) -> bool:
    """Whether codes 0..n-1 all occur and each first occurs after the code before it."""
    running = np.maximum.accumulate(codes_)
    return int(running[-1]) == n - 1 and int(codes_[0]) == 0 and bool(
        (codes_[1:] <= running[:-1] + 1).all())


def locate(keys: np.ndarray, wanted: np.ndarray, space: int) -> np.ndarray:
    """Position of each key in ``wanted`` (distinct keys), -1 where it is absent.

    Keys lie in [0, space): a direct table of the key space when it is small
    next to the keys (at most ~8 bytes a key), else a sorted merge: each side's
    keys sorted with their positions in the low bits of one uint64 (a sort of
    values, no hash table), the sorted keys found among the sorted wanted ones
    by binary search (consecutive needles, so cache-friendly), and the positions
    sent back to the rows. A hash table of ``wanted`` only when a key and a
    position do not fit in 64 bits together.
    """
    if space <= 2 * (keys.size + wanted.size) + 65536:
        table = np.full(space, -1, dtype=np.int32 if wanted.size < 2**31 - 1 else np.int64)
        table[wanted] = np.arange(wanted.size, dtype=table.dtype)
        return table[keys]
    key_bits = (int(space) - 1).bit_length()
    row_bits = max(keys.size, wanted.size, 2).bit_length()
    if key_bits + row_bits > 64:
        return pd.Index(wanted).get_indexer(keys)
    sorted_wanted, wanted_rows = _sorted_with_rows(wanted, row_bits)
    sorted_keys, key_rows = _sorted_with_rows(keys, row_bits)
    at = np.searchsorted(sorted_wanted, sorted_keys)
    np.minimum(at, max(wanted.size - 1, 0), out=at)
    found = sorted_wanted[at] == sorted_keys if wanted.size else np.zeros(keys.size, bool)
    where = np.full(keys.size, -1, dtype=np.int64)
    where[key_rows[found]] = wanted_rows[at[found]]
    return where


@dataclass(frozen=True)
class Joined:
    """Scored (user, item) codes joined to truth's (:func:`join`): ``where`` as :func:`locate`
    gives it, and whether each side's pairs are distinct (``where`` means nothing when not)."""
    where: np.ndarray
    pred_distinct: bool
    truth_distinct: bool


#: Rows :func:`join` packs and sorted keys it walks at a time (in a core's cache).
JOIN_BLOCK = 1 << 16


def join(users: np.ndarray, items: np.ndarray, truth_users: np.ndarray, truth_items: np.ndarray,
         *, n_users: int, n_items: int) -> Joined:
    """Each scored (user, item) pair's row in truth (-1 where absent), with the duplicate check
    of both sides made on the way: one sort for the three.

    Codes lie in [0, n_users) and [0, n_items); a pair's key is ``user * n_items + item``.
    When the key space is small next to the rows, a bitmap of it checks each side and a
    direct table joins them (:func:`locate`); otherwise both sides' keys are sorted together,
    each with its side and row in the low bits of one uint64 (a sort of values: no hash
    table, no argsort): above the row, ``2 key + side`` (0 scored, 1 truth). In the sorted
    values, a neighbour with the same ``2 key + side`` is a duplicate of that side, and a
    scored key followed by the same key from truth (``2 key`` then ``2 key + 1``) is a
    match. Keys are packed and walked a block of rows at a time, in cache, so the only
    arrays of a row's size are the sorted values and ``where``.
    """
    n, m = users.size, truth_users.size
    space = n_users * n_items
    row_bits = max(n, m, 2).bit_length()
    low = row_bits + 1  # the row, and above it the side: 0 scored, 1 truth
    if space <= 2 * (n + m) + 65536 or (int(space) - 1).bit_length() + low > 64:
        keys = users.astype(np.int64) * n_items + items
        truth_keys = truth_users.astype(np.int64) * n_items + truth_items
        distinct = all_distinct(keys), all_distinct(truth_keys)
        where = locate(keys, truth_keys, space) if all(distinct) else np.zeros(0, np.int64)
        return Joined(where, *distinct)
    packed = np.empty(n + m, dtype=np.uint64)
    for offset, (u, i), side in ((0, (users, items), 0), (n, (truth_users, truth_items), 1)):
        tag = np.uint64(side << row_bits)
        for lo in range(0, u.size, JOIN_BLOCK):
            hi = min(lo + JOIN_BLOCK, u.size)
            part = packed[offset + lo:offset + hi]
            part[:] = u[lo:hi]
            part *= np.uint64(n_items)
            part += i[lo:hi].astype(np.uint64, copy=False)
            part <<= np.uint64(low)
            part |= np.arange(lo, hi, dtype=np.uint64)
            part |= tag
    packed.sort()
    where = np.full(n, -1, dtype=np.int32 if m < 2**31 - 1 else np.int64)
    pred_distinct = truth_distinct = True
    row_mask = np.uint64((1 << row_bits) - 1)
    for start in range(0, n + m - 1, JOIN_BLOCK):
        block = packed[start:start + JOIN_BLOCK + 1]  # one value past the block: its neighbour
        keyed = block >> np.uint64(row_bits)  # 2 key + side
        before, after = keyed[:-1], keyed[1:]
        if not np.not_equal(before, after).all():  # a duplicate (rare): on which side?
            side = before[before == after] & np.uint64(1)
            pred_distinct &= bool(side.all())
            truth_distinct &= not side.any()
        # 2 key then 2 key + 1 (they differ in the side bit only): a match
        at = np.flatnonzero((before ^ after) == np.uint64(1))
        where[(block[at] & row_mask).view(np.int64)] = (block[at + 1] & row_mask).view(np.int64)
    return Joined(where, pred_distinct, truth_distinct)


def _sorted_with_rows(keys: np.ndarray, row_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative integer keys sorted (equal keys by row), and the row of each: one sort of
    uint64 values holding the key above ``row_bits`` bits of row number."""
    packed = keys.astype(np.uint64)
    packed <<= np.uint64(row_bits)
    packed |= np.arange(keys.size, dtype=np.uint64)
    packed.sort()
    rows = (packed & np.uint64((1 << row_bits) - 1)).view(np.int64)
    packed >>= np.uint64(row_bits)
    return packed.view(np.int64), rows


def scored_grades(pred: pd.DataFrame, truth: pd.DataFrame, *, user: str, item: str,
                  label: str) -> np.ndarray:
    """Each scored row's grade in ``truth`` (0 where it is not judged), joined by the id policy.

    The join :func:`recmetrics.evaluate` makes, for code that needs the rows themselves
    (the report's counts and curves): ``3.0`` in one frame meets ``3`` in the other, where a
    plain ``merge`` on the raw columns would not. (user, item) pairs are unique in each frame.
    """
    (users, truth_users), user_ids = codes(user, ("pred", pred), ("truth", truth))
    (items, truth_items), item_ids = codes(item, ("pred", pred), ("truth", truth), ordered=False)
    width = len(item_ids)
    keys = users.astype(np.int64) * width + items
    truth_keys = truth_users.astype(np.int64) * width + truth_items
    where = locate(keys, truth_keys, len(user_ids) * width)
    grades = np.zeros(len(pred))
    found = where >= 0
    grades[found] = truth[label].to_numpy(dtype=np.float64)[where[found]]
    return grades


def n_distinct(values: pd.Series) -> int:
    """``values.nunique()``: for a Categorical (ids as the readers give them) a count of its
    codes (missing ids left out), not a hash of every row."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes_ = values.array.codes
        if codes_.size and codes_.min() < 0:
            codes_ = codes_[codes_ >= 0]
        seen = np.zeros(len(values.cat.categories), dtype=bool)
        seen[codes_] = True
        return int(np.count_nonzero(seen))
    return int(values.nunique())


#: Canonical text of a whole number in int64 (no sign on zero, no leading zeros).
_WHOLE_TEXT = r"0|-?[1-9][0-9]{0,18}"


def user_hash(ids) -> np.ndarray:
    """A uint64 hash of each canonical user id (int64 or text), the same in every process.

    One id, one hash, however it was read: a text id that is the canonical text of a whole
    number in int64 (``"7"``, as a CSV file's ids are read) hashes as that number (``7``, as a
    Parquet file's or a pandas int column's), since the id policy makes them one id; so the
    Poisson weights of a user, and the partition it is sent to, do not depend on the format.
    """
    values = np.asarray(ids)
    if values.dtype.kind in "iub":
        return pd.util.hash_array(values)
    values = np.asarray(ids, dtype=object)
    hashes = pd.util.hash_array(values)
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        text = pa.array(values, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):   # not all text: hashed as they are
        return hashes
    whole = pc.fill_null(pc.match_substring_regex(text, f"^({_WHOLE_TEXT})$"), False)
    at = np.flatnonzero(whole.to_numpy(zero_copy_only=False))
    if at.size:
        chosen = text.take(pa.array(at))
        short = pc.less_equal(pc.utf8_length(chosen), 18).to_numpy(zero_copy_only=False)
        if short.any():     # at most 18 characters: always within int64
            numbers = pc.cast(chosen.filter(pa.array(short)), pa.int64()).to_numpy()
            hashes[at[short]] = pd.util.hash_array(numbers)
        for i in at[~short]:                                    # 19 digits: int64 if it fits
            number = int(values[i])
            if -(2**63) <= number < 2**63:
                hashes[i] = pd.util.hash_array(np.array([number], dtype=np.int64))[0]
    return hashes


def keyed_users(values: pd.Series, *, name: str, column: str, integral: bool
                ) -> tuple[np.ndarray | pd.Series, np.ndarray]:
    """A user column's canonical ids and their hashes, row by row (one hash of the column).

    ``integral`` is the id form decided over the whole input (see :func:`canonical_ids`).
    """
    codes_, uniques = pd.factorize(values)
    check_id_codes(name, column, codes_)
    canonical = canonical_ids(pd.Series(uniques), integral=integral)[0]
    hashes = user_hash(canonical)[codes_]
    if isinstance(canonical, np.ndarray):
        return canonical[codes_], hashes
    return pd.Series(canonical.array.take(codes_), index=values.index), hashes


def arrow_frame(table, ids: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """An Arrow table as pandas without copying what need not be copied.

    The text columns named in ``ids`` are coded in Arrow into Categoricals of
    their distinct ids (:func:`arrow_distinct_ids`): the strings never become
    pandas objects, and each column is coded once, the columns side by side in
    threads (numpy releases the GIL in the passes over the rows).
    """
    names = sorted(ids)
    columns = [table.column(name) for name in names]
    coded = thread_map(lambda j: arrow_distinct_ids(columns[j]), range(len(names)))
    columns.clear()  # the text columns freed with the table below
    hashed = {name: series for name, series in zip(names, coded) if series is not None}
    rest = table.drop_columns(list(hashed))
    del table
    frame = rest.to_pandas(split_blocks=True, self_destruct=True)
    return pd.DataFrame({**{name: frame[name] for name in frame.columns}, **hashed}, copy=False)


def arrow_distinct_ids(column) -> pd.Series | None:
    """A text column as pyarrow read it, as :func:`distinct_ids` gives it, coded in Arrow.

    The same Categorical (distinct ids in order of first appearance) without
    turning the strings into pandas first. Ids of at most :data:`BIT_KEY_BYTES`
    bytes whose differing bits are few (zero-padded numbers, short codes: the
    usual ids) are coded without hashing (:func:`_bit_keys`, then a direct table
    of the keys). Otherwise, when every id has the same length of at most 8
    bytes, each id's bytes are read as one 64-bit integer and the integers are
    hashed: equal lengths make that one to one; else the strings are hashed. A
    dictionary-encoded column (Parquet's dictionary pages, read as they are) has
    its chunks' dictionaries coded once, not its rows. Returns None for a column
    with missing values or of another type, which the pandas path checks and
    reports.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        return None
    if pa.types.is_dictionary(column.type):
        return _dictionary_ids(column)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return None
    keyed = _bit_keys(column)
    if keyed is not None:
        indices, first_rows = _first_appearance_codes(*keyed)
        dictionary = _rows_of(column, first_rows)
    else:
        keys = _fixed_width_keys(column)
        if keys is not None:
            packed, width = keys
            encoded = pc.dictionary_encode(pa.array(packed))
            distinct = encoded.dictionary.to_numpy()
            text = np.ascontiguousarray(distinct.view(np.uint8).reshape(-1, 8)[:, :width])
            offsets = np.arange(distinct.size + 1, dtype=np.int64) * width
            dictionary = pa.Array.from_buffers(pa.large_string(), distinct.size,
                                               [None, pa.py_buffer(offsets), pa.py_buffer(text)])
        else:
            encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(
                column, pa.ChunkedArray) else column)
            dictionary = encoded.dictionary
        indices = encoded.indices.to_numpy()
    categories = pd.Index(dictionary.to_pandas(), dtype="str")
    return pd.Series(pd.Categorical.from_codes(indices, categories=categories, validate=False),
                     copy=False)


def _rows_of(column, rows: np.ndarray):
    """``column.take(rows)`` for ascending ``rows``, chunk by chunk (a take across chunks
    looks each row's chunk up)."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    ends = np.cumsum([len(chunk) for chunk in chunks])
    cuts = np.searchsorted(rows, ends)
    taken, lo, start = [], 0, 0
    for chunk, end, hi in zip(chunks, ends, cuts):
        if hi > lo:
            taken.append(chunk.take(pa.array(rows[lo:hi] - start)))
        lo, start = hi, end
    return pa.chunked_array(taken, type=column.type)


#: Text ids longer than this (in UTF-8 bytes) are hashed, not coded by :func:`_bit_keys`.
BIT_KEY_BYTES = 32

#: ``_BYTE_MASKS[b]``: the low ``b`` bytes of a 64-bit word set (b = 0..8).
_BYTE_MASKS = np.array([(1 << (8 * b)) - 1 for b in range(9)], dtype=np.uint64)


def _bit_keys(column) -> tuple[np.ndarray, int] | None:
    """Each id of a text column (no missing values) as an integer key in [0, space), one to
    one, without hashing; and ``space``. None when the keys would span more than about two
    values a row (``2 n + 65536``) or an id is longer than :data:`BIT_KEY_BYTES` bytes.

    Each id's bytes, zero-padded, are read as up to four little-endian 64-bit words (a view
    at the stride of the ids when they all have one length, else one gather per word). A bit
    that is the same in every id tells nothing apart, so only the bits that differ (OR of all
    the words and not AND) are kept, and packed into one key with the length's differing
    bits when the lengths differ. Padding is filled with the bits common to the ids that
    have that byte, which adds no differing bit: ids of digits (``"7"``, ``"1234"``) keep
    four bits a digit. Ids that differ differ in a kept bit, so equal keys are equal ids.
    Two passes over the ids, a block of :data:`KEY_BLOCK` rows at a time (in cache): the
    differing bits, then the keys.
    """
    import pyarrow as pa

    chunks = [chunk for chunk in (column.chunks if isinstance(column, pa.ChunkedArray)
                                  else [column]) if len(chunk)]
    n = sum(len(chunk) for chunk in chunks)
    if n == 0:
        return None
    parts = []  # each chunk's (offsets from its first byte, bytes)
    longest, shortest = 0, BIT_KEY_BYTES + 1
    for chunk in chunks:
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        _, offset_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=kind)[chunk.offset:chunk.offset + len(chunk)
                                                           + 1]
        lengths = np.diff(offsets)
        longest, shortest = max(longest, int(lengths.max())), min(shortest, int(lengths.min()))
        if longest > BIT_KEY_BYTES:
            return None
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else \
            np.zeros(0, dtype=np.uint8)
        parts.append((offsets - offsets[0], data[int(offsets[0]):int(offsets[-1])]))
    width = longest if longest == shortest else None
    n_words = max(1, -(-longest // 8))
    scratch = np.zeros(KEY_BLOCK * longest + 8 * n_words + 8, dtype=np.uint8)

    def blocks():
        """(rows, [word k of each row], lengths or None) a block at a time; bytes past an
        id's end are 0 in its words."""
        for offsets, data in parts:
            for lo in range(0, offsets.size - 1, KEY_BLOCK):
                hi = min(lo + KEY_BLOCK, offsets.size - 1)
                first, last = int(offsets[lo]), int(offsets[hi])
                scratch[:last - first] = data[first:last]
                scratch[last - first:last - first + 8 * n_words] = 0
                if width is not None:
                    yield hi - lo, [np.ndarray((hi - lo,), dtype="<u8", buffer=scratch,
                                               offset=8 * k, strides=(width,))
                                    & _BYTE_MASKS[min(8, max(0, width - 8 * k))]
                                    for k in range(n_words)], None
                else:
                    starts = offsets[lo:hi] - first
                    lengths = (offsets[lo + 1:hi + 1] - offsets[lo:hi]).astype(np.int64)
                    every_byte = np.ndarray((scratch.size - 7,), dtype="<u8", buffer=scratch,
                                            strides=(1,))
                    yield hi - lo, [every_byte[starts + 8 * k]
                                    & _BYTE_MASKS[np.clip(lengths - 8 * k, 0, 8)]
                                    for k in range(n_words)], lengths

    def present(lengths, k):
        return _BYTE_MASKS[np.clip(lengths - 8 * k, 0, 8)]

    every = np.uint64(2**64 - 1)
    common, anywhere = [every] * n_words, [np.uint64(0)] * n_words
    for _, words, lengths in blocks():
        for k, word in enumerate(words):
            # a byte past an id's end is neither 0 nor 1 here: it is filled below with the
            # bits common to the ids that have it
            kept = word if lengths is None else word | ~present(lengths, k)
            common[k] &= np.bitwise_and.reduce(kept)
            anywhere[k] |= np.bitwise_or.reduce(word)
    fields = [_bit_runs(int(a) & ~int(c)) for a, c in zip(anywhere, common)]
    if width is None:  # the length, where ids differ in length
        fields.append(_bit_runs((1 << (longest ^ shortest).bit_length()) - 1))
    bits = sum(w for runs in fields for _, w in runs)
    if (1 << bits) > 2 * n + 65536:
        return None
    keys = np.empty(n, dtype=np.uint64)
    start = 0
    for m, words, lengths in blocks():
        out = keys[start:start + m]
        out[:] = 0
        if lengths is not None:
            words = [word | (common[k] & ~present(lengths, k)) for k, word in enumerate(words)]
            words.append(lengths.view(np.uint64))
        at = 0
        for word, runs in zip(words, fields):
            for shift, w in runs:
                part = word >> np.uint64(shift)
                part &= np.uint64((1 << w) - 1)
                part <<= np.uint64(at)
                out |= part
                at += w
        start += m
    return keys.view(np.int64), 1 << bits


#: Rows :func:`_bit_keys` reads at a time (their words fit in a core's cache).
KEY_BLOCK = 1 << 15


def _bit_runs(mask: int) -> list[tuple[int, int]]:
    """The runs of consecutive set bits of ``mask``, as (lowest bit, width)."""
    runs = []
    shift = 0
    while mask:
        skip = (mask & -mask).bit_length() - 1
        mask >>= skip
        shift += skip
        width = (~mask & (mask + 1)).bit_length() - 1
        runs.append((shift, width))
        mask >>= width
        shift += width
    return runs


def _first_appearance_codes(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes of integer keys in [0, space) in order of first appearance, and the row where
    each code first appears: the first row of each key by one ``minimum.at`` into a table
    of the key space, which then maps each key to its code (no hash, no sort of the rows)."""
    n = keys.size
    kind: type[np.signedinteger] = np.int32 if n < 2**31 - 1 else np.int64
    table = np.full(space, n, dtype=kind)
    np.minimum.at(table, keys, np.arange(n, dtype=kind))
    first_rows = np.sort(table[table < n])
    table[keys[first_rows]] = np.arange(first_rows.size, dtype=kind)
    return table[keys], first_rows


def _dictionary_ids(column) -> pd.Series | None:
    """:func:`arrow_distinct_ids` of a dictionary-encoded text column: the entries of all
    chunks' dictionaries are coded (a few per distinct id and row group), each row takes
    its entry's code, and the codes are renumbered in order of first appearance."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    chunks = [chunk for chunk in chunks if len(chunk)]
    if not chunks:
        return None
    entries = arrow_distinct_ids(pa.chunked_array([chunk.dictionary for chunk in chunks],
                                                  type=column.type.value_type))
    if entries is None:  # a missing value in a dictionary, or not text: the pandas path
        return None
    entry_codes = np.asarray(entries.array.codes)
    starts = np.cumsum([0] + [len(chunk.dictionary) for chunk in chunks])
    rows = np.concatenate([entry_codes[start:][chunk.indices.to_numpy(zero_copy_only=False)]
                           for start, chunk in zip(starts, chunks)])
    codes_, first = pd.factorize(rows)
    return pd.Series(pd.Categorical.from_codes(codes_, categories=entries.cat.categories[first],
                                               validate=False), copy=False)


def _fixed_width_keys(column) -> tuple[np.ndarray, int] | None:
    """Each string's bytes as one uint64 (zero-padded), when all strings have one length
    of at most 8 bytes; else None."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    width = None
    parts = []
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        _, offset_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=kind)[chunk.offset:chunk.offset + len(chunk)
                                                           + 1]
        lengths = np.diff(offsets)
        first = int(lengths[0])
        if first > 8 or (width is not None and first != width) or (lengths != first).any():
            return None
        width = first
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else \
            np.zeros(0, dtype=np.uint8)
        parts.append(data[offsets[0]:offsets[-1]].reshape(len(chunk), width))
    if width is None:
        return None
    packed = np.zeros((sum(len(p) for p in parts), 8), dtype=np.uint8)
    start = 0
    for part in parts:
        packed[start:start + len(part), :width] = part
        start += len(part)
    return packed.view(np.uint64).ravel(), width


def distinct_ids(values: pd.Series) -> pd.Series:
    """Text ids as a pandas Categorical of the distinct ids, in order of first appearance.

    The column is hashed once, here; the duplicate check, the id policy and
    every later join work on its integer codes. Numeric ids are kept as they are.
    """
    if pd.api.types.is_numeric_dtype(values) or isinstance(values.dtype, pd.CategoricalDtype):
        return values
    codes, uniques = pd.factorize(values)
    return pd.Series(pd.Categorical.from_codes(codes, categories=uniques, validate=False),
                     index=values.index, name=values.name)


def merged_ids(named) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two different ids that the policy above reads as one, or None.

    ``named`` holds (where, values, exact) triples: ``values`` a column of ids, ``where``
    how messages name it, ``exact`` whether its ids are exact text (a TREC file's: trec_eval
    compares ids as strings, so ``"7"`` and ``"7.0"`` are two documents). An exact id is
    itself; any other id is its canonical form. Returned: ((where, id), (where, id)) of the
    first two ids that differ but have one canonical form (``"7"`` and ``"7.0"``, or an exact
    ``"7.0"`` and a number 7), which :func:`codes` would join as one.
    """
    seen: dict[str, tuple[str, str]] = {}
    for where, values, exact in named:
        if isinstance(values.dtype, pd.CategoricalDtype):
            distinct = pd.Series(values.cat.categories)
        else:
            distinct = pd.Series(pd.unique(values.dropna()))
        canonical = np.asarray(canonical_ids(distinct)[0]).astype(str)
        own = distinct.astype(str).to_numpy() if exact else canonical
        for text, same in zip(own, canonical):
            first = seen.setdefault(same, (where, text))
            if first[1] != text:
                return first, (where, text)
    return None


def merged_ids_problem(named, what: str) -> str | None:
    """The message refusing :func:`merged_ids`' two ids of ``named``, or None when there are
    none; ``what`` names the ids (``"item"``, ``"document"``). One message for frames
    (a ``ValueError``) and files (the command line's one line)."""
    found = merged_ids(named)
    if found is None:
        return None
    (where_a, a), (where_b, b) = found
    return (f"{where_b}: {what} id {b!r} and {where_a}: {what} id {a!r} are two ids where the "
            "ids are exact text, as in TREC files (trec_eval compares ids as text), but "
            "recmetrics' id policy reads them as one id (a whole number written 7 or 7.0 is "
            "the number 7), so one would stand for the other; write each id the same way in "
            "every file, or rename one")
