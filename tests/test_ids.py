"""The id policy (recmetrics/_ids.py) on id columns of unusual integer types.

Each expected table is the same data evaluated with clean text ids ("u0", "i3", ...): a
mapping written out here, never the code under test run on the messy ids.

Named bugs:

* uint64 user ids >= 2**63 were cast to int64 and wrapped to negative numbers, so a
  text id "9223372036854775813" in another file never met its own rows, and the uint64
  user 2**64 - 1 silently joined the int64 user -1;
* item ids of type int8 from -100 to 100 overflowed when coded (the smallest id was
  subtracted in int8): AUC 0.3556 instead of 0.2615, without a warning.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recmetrics as rm
from recmetrics import _ids, cli

COMPARED = ["metric", "k", "value", "n_users", "n_skipped", "n_without_predictions"]


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def same_table(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got[COMPARED].reset_index(drop=True),
                                  expected[COMPARED].reset_index(drop=True))


def clean(frame: pd.DataFrame, names: dict) -> pd.DataFrame:
    """The frame with every id replaced by its clean text name (exact Python ints as keys)."""
    out = frame.copy()
    for column in ("user", "item"):
        out[column] = [names[column][int(v)] for v in frame[column].tolist()]
    return out


def scored(users, items, seed=0):
    """Every (user, item) pair with a random score and a label, as plain lists."""
    rng = np.random.default_rng(seed)
    rows = [(u, i) for u in users for i in items]
    scores = rng.permutation(len(rows)) / len(rows)
    labels = rng.integers(0, 3, len(rows))
    labels[0], labels[1] = 1, 0
    return rows, scores, labels


BIG = [2**63 + 5, 2**63 + 7, 2**64 - 1]


def uint64_frames():
    rows, scores, labels = scored(BIG, [1, 2, 3, 2**64 - 2])
    pred = pd.DataFrame({"user": np.array([u for u, _ in rows], dtype=np.uint64),
                         "item": np.array([i for _, i in rows], dtype=np.uint64),
                         "score": scores})
    truth = pd.DataFrame({"user": pred.user, "item": pred.item, "label": labels})
    names = {"user": {u: f"u{n}" for n, u in enumerate(BIG)},
             "item": {i: f"i{n}" for n, i in enumerate([1, 2, 3, 2**64 - 2])}}
    return pred, truth, names


def test_uint64_ids_beyond_int64_meet_the_same_ids_written_as_text():
    pred, truth, names = uint64_frames()
    expected = rm.evaluate(clean(pred, names), clean(truth, names), k=[2])
    text_truth = truth.assign(user=truth.user.astype(str), item=truth.item.astype(str))
    assert text_truth.user.iloc[-1] == "18446744073709551615"
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no user left unmatched
        for truth_form in (truth, text_truth):
            same_table(rm.evaluate(pred, truth_form, k=[2]), expected)
        same_table(rm.evaluate(pred.assign(label=truth.label), k=[2]), expected)


def test_uint64_user_two_to_the_64_minus_1_is_not_the_int64_user_minus_1():
    pred, truth, names = uint64_frames()
    signed = truth.copy()
    signed["user"] = [-1 if u == 2**64 - 1 else u for u in truth.user.tolist()]  # object ints
    names["user"][-1] = "minus one"
    # truth holds relevant rows pred never scored: AUC and GAUC say so (issue 37)
    with pytest.warns(rm.RecmetricsWarning, match="never scored by pred"):
        expected = rm.evaluate(clean(pred, names), clean(signed, names), k=[2])
    assert expected.set_index("metric").loc["auc", "n_without_predictions"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RecmetricsWarning)   # the same warnings both ways
        same_table(rm.evaluate(pred, signed, k=[2]), expected)
    # and an int64 column holding -1 against a uint64 column holding 2**64 - 1, item ids small
    small = pd.DataFrame({"user": np.array([2**64 - 1, 5], dtype=np.uint64),
                          "item": [1, 1], "score": [0.3, 0.6]})
    labels = pd.DataFrame({"user": np.array([-1, 5], dtype=np.int64), "item": [1, 1],
                           "label": [1, 0]})
    names = {"user": {2**64 - 1: "big", 5: "five", -1: "minus one"}, "item": {1: "i"}}
    with pytest.warns(rm.RecmetricsWarning, match="'minus one'"):
        expected = rm.evaluate(clean(small, names), clean(labels, names), metrics=["mrr"])
    with pytest.warns(rm.RecmetricsWarning, match="'-1'; pred has users such as "
                                                  "'18446744073709551615', '5'"):
        same_table(rm.evaluate(small, labels, metrics=["mrr"]), expected)


def test_uint64_ids_that_fit_compare_as_integers_with_int64_ids():
    pred = pd.DataFrame({"user": np.array([1, 1, 2, 2], dtype=np.uint64),
                         "item": np.array([7, 8, 7, 8], dtype=np.uint64),
                         "score": [0.9, 0.1, 0.2, 0.8]})
    truth = pd.DataFrame({"user": np.array([1, 1, 2, 2], dtype=np.int64),
                          "item": np.array([7, 8, 7, 8], dtype=np.int8), "label": [1, 0, 1, 0]})
    assert _ids.integral_ids(pred.user, truth.user)
    # by hand: user 1 ranks its relevant item first, user 2 second; positives 0.9 and 0.2
    # against negatives 0.1 and 0.8 win 2 + 1 of 4 pairs
    table = rm.evaluate(pred, truth, metrics=["auc", "mrr"]).set_index("metric")
    assert table.loc["auc", "value"] == 3 / 4
    assert table.loc["mrr", "value"] == (1 + 1 / 2) / 2
    assert not _ids.integral_ids(pd.Series(np.array([2**63], dtype=np.uint64)))
    assert _ids.canonical_ids(pd.Series(np.array([2**64 - 1], dtype=np.uint64)))[0].tolist() \
        == ["18446744073709551615"]


def test_uint64_parquet_ids_on_the_command_line(tmp_path, capsys):
    pred, truth, names = uint64_frames()
    expected = rm.evaluate(clean(pred, names), clean(truth, names), k=[2])
    pred.to_parquet(tmp_path / "pred.parquet")
    truth.to_parquet(tmp_path / "truth.parquet")
    truth.astype({"user": str, "item": str}).to_csv(tmp_path / "truth.csv", index=False)
    for truth_file in ("truth.parquet", "truth.csv"):
        code, out, err = run(["evaluate", tmp_path / "pred.parquet", "--truth",
                              tmp_path / truth_file, "--k", "2", "--format", "json"], capsys)
        assert (code, err) == (0, ""), err
        got = pd.DataFrame(json.loads(out)["metrics"])
        np.testing.assert_array_equal(got.value.to_numpy(), expected.value.to_numpy())
        assert got.n_users.tolist() == expected.n_users.tolist()


SMALL_TYPES = ["int8", "int16", "uint8", "uint16"]


def small_int_ids(dtype: str):
    info = np.iinfo(dtype)
    lo, hi = (-100, 100) if info.min < 0 else (0, 255)
    items = list(range(lo, hi + 1, 9)) + [hi]
    users = [lo, 0, 3, hi] if info.min < 0 else [0, 3, 128, hi]
    return users, sorted(set(items))


@pytest.mark.parametrize("dtype", SMALL_TYPES)
def test_small_integer_ids_are_coded_without_overflow(dtype):
    users, items = small_int_ids(dtype)
    rows, scores, labels = scored(users, items, seed=1)
    pred = pd.DataFrame({"user": np.array([u for u, _ in rows], dtype=dtype),
                         "item": np.array([i for _, i in rows], dtype=dtype), "score": scores})
    truth = pd.DataFrame({"user": pred.user, "item": pred.item, "label": labels})
    names = {"user": {u: f"u{u}" for u in users}, "item": {i: f"i{i}" for i in items}}
    expected = rm.evaluate(clean(pred, names), clean(truth, names), k=[5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same_table(rm.evaluate(pred, truth, k=[5]), expected)
        same_table(rm.evaluate(pred.assign(label=labels), k=[5]), expected)
        # against the same ids held as int64 in the truth frame
        same_table(rm.evaluate(pred, truth.astype({"user": np.int64, "item": np.int64}), k=[5]),
                   expected)
    (codes_,), distinct = _ids.codes("item", ("pred", pred), ordered=False)
    assert (np.asarray(distinct)[codes_] == pred.item.to_numpy().astype(np.int64)).all()


def test_int8_items_from_minus_100_to_100_give_the_literal_auc(tmp_path, capsys):
    # one user; items -100..100; the relevant items are the multiples of 7; score = item / 1000
    # reversed for the positives, so the AUC is a literal count of pairs
    items = np.arange(-100, 101)
    labels = (items % 7 == 0).astype(int)
    scores = np.where(labels == 1, -items, items) / 1000
    pos, neg = scores[labels == 1], scores[labels == 0]
    literal = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (pos.size * neg.size)
    pred = pd.DataFrame({"user": np.zeros(items.size, dtype=np.int8),
                         "item": items.astype(np.int8), "score": scores, "label": labels})
    truth = pred[["user", "item", "label"]].sample(frac=1, random_state=0)
    pred = pred.drop(columns="label")
    got = rm.evaluate(pred, truth, metrics=["auc"]).value.iloc[0]
    assert got == pytest.approx(literal, abs=1e-12)
    pred.to_parquet(tmp_path / "p.parquet")
    truth.to_parquet(tmp_path / "t.parquet")
    code, out, err = run(["evaluate", tmp_path / "p.parquet", "--truth", tmp_path / "t.parquet",
                          "--metrics", "auc", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out)["metrics"][0]["value"] == pytest.approx(literal, abs=1e-12)


def test_scored_grades_join_by_the_id_policy():
    # the report's per-row grades: 3.0 meets 3, " 7" meets 7, unjudged rows get 0
    pred = pd.DataFrame({"user": ["a", "a", "b", "b"], "item": [3.0, 7.0, 3.0, 9.0],
                         "score": [0.1, 0.2, 0.3, 0.4]})
    truth = pd.DataFrame({"user": ["a", "b", "a"], "item": ["3", "3", " 7"],
                          "label": [1, 2, 0]})
    grades = _ids.scored_grades(pred, truth, user="user", item="item", label="label")
    assert grades.tolist() == [1.0, 0.0, 2.0, 0.0]
    assert pred.merge(truth.astype({"item": float}), how="left").label.fillna(0).tolist() \
        == grades.tolist()


def test_boolean_ids_are_the_text_true_and_false():
    """Found by the property test: a bool column was coded as 0/1 while the same ids read from
    a CSV file are 'True'/'False', so they never met."""
    pred = pd.DataFrame({"user": [True, True, False, False], "item": [True, False, True, False],
                         "score": [0.9, 0.1, 0.2, 0.8]})
    truth = pd.DataFrame({"user": ["True", "True", "False", "False"],
                          "item": ["True", "False", "True", "False"], "label": [1, 0, 1, 0]})
    # by hand (as in the uint64 test above): AUC 3 of 4 pairs, MRR (1 + 1/2) / 2
    table = rm.evaluate(pred, truth, metrics=["auc", "mrr"]).set_index("metric")
    assert table.loc["auc", "value"] == 3 / 4 and table.loc["mrr", "value"] == 3 / 4
    assert not _ids.integral_ids(pred.user)
    assert _ids.canonical_ids(pred.user.astype("boolean"))[0].tolist() == ["True", "True",
                                                                           "False", "False"]


# --------------------------------------------------------------------------- text ids in Arrow

def literal_distinct(values: list[str]) -> tuple[list[int], list[str]]:
    """Codes in order of first appearance, by a dict: the literal rule."""
    seen: dict[str, int] = {}
    return [seen.setdefault(v, len(seen)) for v in values], list(seen)


text_ids = st.lists(st.one_of(st.sampled_from(["u01", "u02", "u10", "x", "", " 7", "7.0", "é1",
                                               "a\x00", "a\x01", "abcdefgh", "abcdefgi",
                                               "abcdefghi"]),
                              st.text(max_size=9)), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(values=text_ids, cut=st.integers(0, 40), large=st.booleans(), sliced=st.booleans())
def test_arrow_distinct_ids_are_the_codes_of_first_appearance(values, cut, large, sliced):
    """Chunked or not, string or large_string, sliced or not, fixed-width (packed into one
    uint64) or not: the codes and categories are those of the literal rule."""
    import pyarrow as pa

    kind = pa.large_string() if large else pa.string()
    cut = min(cut, len(values))
    column = pa.chunked_array([pa.array(values[:cut], kind), pa.array(values[cut:], kind)])
    if sliced:  # a chunk that starts inside its buffers
        column = pa.chunked_array([pa.array(["pad"] + values, kind).slice(1)])
    got = _ids.arrow_distinct_ids(column)
    codes, categories = literal_distinct(values)
    assert got.cat.codes.tolist() == codes
    assert got.cat.categories.tolist() == categories
    assert got.dtype == _ids.distinct_ids(pd.Series(values, dtype="str")).dtype


@settings(max_examples=150, deadline=None)
@given(values=st.one_of(
           st.lists(st.one_of(st.integers(0, 10**6).map(str),     # digits of any length
                              st.integers(0, 999).map(lambda i: f"u{i:05d}"),  # zero-padded
                              st.sampled_from(["", "1", "10", "1\x00", "1\x00\x00", "\x00"])),
                    min_size=1, max_size=50),
           st.lists(st.sampled_from(["", "a", "a\x00", "\x00", "ab", "é", "€x", "x" * 8,
                                     "x" * 9, "y" * 16, "y" * 17, "z" * 32, "z" * 31 + "y"]),
                    min_size=1, max_size=50)),
       cut=st.integers(0, 50), large=st.booleans())
def test_bit_keys_are_one_to_one(values, cut, large):
    """issue 36: text ids coded by the bits in which they differ (no hash): equal keys for
    equal ids only, whatever the lengths (padding bytes and NUL bytes told apart by the
    length) and chunks; the Categorical is the literal rule's."""
    import pyarrow as pa

    kind = pa.large_string() if large else pa.string()
    cut = min(cut, len(values))
    column = pa.chunked_array([pa.array(values[:cut], kind), pa.array(values[cut:], kind)])
    keyed = _ids._bit_keys(column)
    if keyed is not None:       # None: ids differing in too many bits ('131', '€x'), hashed
        keys, space = keyed
        assert keys.min() >= 0 and keys.max() < space <= 2 * len(values) + 65536
        by_id = dict(zip(values, keys.tolist()))
        assert [by_id[v] for v in values] == keys.tolist()          # one key per id ...
        assert len(set(by_id.values())) == len(by_id)               # ... and one id per key
    got = _ids.arrow_distinct_ids(column)
    codes, categories = literal_distinct(values)
    assert got.cat.codes.tolist() == codes and got.cat.categories.tolist() == categories


def test_bit_keys_keep_four_bits_a_digit_and_give_way_to_a_hash():
    """Zero-padded ids keep the bits that differ: 1000 ids of 3 digits take 12 bits, where
    their 6 bytes would take 48; ids too long or too varied for a table are hashed (None)."""
    import pyarrow as pa

    padded = pa.chunked_array([pa.array([f"u{i:05d}" for i in range(1000)])])
    assert _ids._bit_keys(padded)[1] == 2**12
    plain = pa.chunked_array([pa.array([str(i) for i in range(1, 1000)])])
    assert _ids._bit_keys(plain)[1] == 2**14                 # 3 digits and 2 bits of length
    assert _ids._bit_keys(pa.chunked_array([pa.array(["x" * 33])])) is None
    rng = np.random.default_rng(0)
    hexes = [bytes(rng.integers(0, 256, 8, dtype=np.uint8)).hex() for _ in range(1000)]
    assert _ids._bit_keys(pa.chunked_array([pa.array(hexes)])) is None
    got = _ids.arrow_distinct_ids(pa.chunked_array([pa.array(hexes)]))    # hashed instead
    assert got.cat.categories.tolist() == list(dict.fromkeys(hexes))


def test_arrow_distinct_ids_leave_missing_ids_and_numbers_to_pandas():
    import pyarrow as pa

    assert _ids.arrow_distinct_ids(pa.chunked_array([pa.array(["u1", None])])) is None
    assert _ids.arrow_distinct_ids(pa.chunked_array([pa.array([1, 2])])) is None


def test_fixed_width_ids_are_packed_only_when_every_id_has_one_length_up_to_8_bytes():
    import pyarrow as pa

    packed, width = _ids._fixed_width_keys(pa.chunked_array([pa.array(["ab", "cd"]),
                                                               pa.array(["ab"])]))
    assert width == 2 and packed[0] == packed[2] != packed[1]
    assert _ids._fixed_width_keys(pa.chunked_array([pa.array(["ab"]), pa.array(["abc"])])) is None
    assert _ids._fixed_width_keys(pa.chunked_array([pa.array(["abcdefghi"])])) is None


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=30),
       categories=st.permutations(["a", "b", "c", "d", "e"]))
def test_codes_of_a_categorical_do_not_depend_on_its_categories(values, categories):
    """Any categories (unused ones, any order) give the codes of the same text ids: a
    Categorical's own codes are used only when they already are first-appearance codes."""
    frame = pd.DataFrame({"user": pd.Categorical(values, categories=categories)})
    (got,), ids = _ids.codes("user", ("pred", frame))
    codes, distinct = literal_distinct(values)
    assert got.tolist() == codes and list(ids) == distinct


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.lists(st.sampled_from(["u01", "u02", "x", "", "abcdefghi", "é"]),
                                max_size=12), min_size=1, max_size=4),
       spare=st.lists(st.sampled_from(["unused", "u01", "zz"]), max_size=3))
def test_dictionary_encoded_ids_are_the_codes_of_first_appearance(chunks, spare):
    """Chunks with their own dictionaries (as Parquet row groups have), dictionaries holding
    entries no row uses: the rows' ids coded by the literal rule."""
    import pyarrow as pa

    arrays = []
    for values in chunks:
        dictionary = list(dict.fromkeys(spare + values))  # unused entries first
        indices = pa.array([dictionary.index(v) for v in values], pa.int32())
        arrays.append(pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, pa.string())))
    column = pa.chunked_array(arrays, type=pa.dictionary(pa.int32(), pa.string()))
    values = [v for chunk in chunks for v in chunk]
    got = _ids.arrow_distinct_ids(column)
    if not values:
        assert got is None
        return
    codes, categories = literal_distinct(values)
    assert got.cat.codes.tolist() == codes
    assert got.cat.categories.tolist() == categories


@pytest.mark.parametrize("limit", [None, 64])
def test_parquet_text_ids_read_as_pandas_reads_them(limit, tmp_path):
    """Row groups whose dictionaries fit (read as dictionaries) and whose dictionary outgrew
    the writer's limit (plain pages after it, read as strings): the ids pandas reads."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from recmetrics import io as rio

    rng = np.random.default_rng(7)
    n = 5000
    table = pa.table({"user": [f"u{u:05d}" for u in rng.integers(0, 2000, n)],
                      "item": [f"i{i}" for i in rng.integers(0, 30, n)],
                      "score": rng.random(n)})
    keep = ~pd.DataFrame({"u": table["user"], "i": table["item"]}).duplicated().to_numpy()
    table = table.filter(pa.array(keep))
    path = tmp_path / "p.parquet"
    options = {} if limit is None else {"dictionary_pagesize_limit": limit,  # fall back soon
                                        "data_page_size": 128, "write_batch_size": 64}
    pq.write_table(table, path, row_group_size=1000, **options)
    dictionary = rio._dictionary_encoded(path, ["user", "item"])
    assert dictionary == (["user", "item"] if limit is None else [])
    frame = rio.read_scores(path, columns={"user": "user", "item": "item", "score": "score"},
                            numbers=("score",))
    expected = pd.read_parquet(path)
    for column in ("user", "item"):
        assert frame[column].astype(str).tolist() == expected[column].tolist()
        assert frame[column].cat.categories.tolist() == list(dict.fromkeys(expected[column]))


@pytest.mark.parametrize("space", [50, 10**10, 2**62])    # table, sorted merge, hash table
def test_locate_equals_pandas_get_indexer_on_every_path(space):
    # issue 36: keys are joined by a sorted merge of integer codes, not a pandas hash table
    from recmetrics._ids import locate

    rng = np.random.default_rng(space % 1000)
    for n_wanted, n_keys in ((0, 5), (1, 1), (7, 30), (40, 2000)):
        wanted = rng.choice(min(space, 10**9), size=min(n_wanted, space), replace=False)
        wanted = wanted * (space // min(space, 10**9))           # spread over the space
        keys = np.concatenate([rng.choice(wanted, n_keys // 2) if wanted.size else
                               np.zeros(0, dtype=np.int64),
                               rng.integers(0, space, n_keys - n_keys // 2)])
        rng.shuffle(keys)
        got = locate(keys, wanted, space)
        assert np.array_equal(got, pd.Index(wanted).get_indexer(keys))


def _join_slow(pred, truth):
    """join written out: a dict of truth's pairs, duplicates counted one pair at a time."""
    position = {}
    for row, pair in enumerate(truth):
        position.setdefault(pair, row)
    where = [position.get(pair, -1) for pair in pred]
    return where, len(set(pred)) == len(pred), len(position) == len(truth)


pairs = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(pairs, pairs, st.sampled_from([7, 10**5, 2**40]))
def test_join_equals_a_dict_and_finds_duplicates_on_either_side(pred, truth, n_items):
    # issue 36: scores and truth are joined and checked for duplicate pairs in one sort (a
    # table when users x items is small, a sort of packed keys, a hash table past 64 bits)
    stretch = n_items // 7                                      # items spread over the codes
    codes_ = [(np.array([u for u, _ in side], dtype=np.intp),
               np.array([i for _, i in side], dtype=np.intp) * stretch) for side in (pred, truth)]
    joined = _ids.join(*codes_[0], *codes_[1], n_users=7, n_items=n_items)
    where, pred_distinct, truth_distinct = _join_slow(pred, truth)
    assert (joined.pred_distinct, joined.truth_distinct) == (pred_distinct, truth_distinct)
    if pred_distinct and truth_distinct:
        assert joined.where.tolist() == where


def test_join_walks_the_sorted_keys_in_blocks(monkeypatch):
    # a match or a duplicate that straddles two blocks is still seen
    monkeypatch.setattr(_ids, "JOIN_BLOCK", 3)
    rng = np.random.default_rng(5)
    users, items = rng.integers(0, 50, 40), rng.choice(10**6, 40, replace=False)
    keep = rng.random(40) < 0.5
    joined = _ids.join(users, items, users[keep][::-1], items[keep][::-1], n_users=50,
                       n_items=10**6)
    truth = list(zip(users[keep][::-1].tolist(), items[keep][::-1].tolist()))
    assert joined.where.tolist() == _join_slow(list(zip(users.tolist(), items.tolist())),
                                               truth)[0]
    for at in range(40):
        twice = _ids.join(np.r_[users, users[at]], np.r_[items, items[at]], users, items,
                          n_users=50, n_items=10**6)
        assert (twice.pred_distinct, twice.truth_distinct) == (False, True)


@pytest.mark.parametrize("values", [
    pd.Series(pd.Categorical(["b", "a", None, "b"], categories=["a", "b", "unused"])),
    pd.Series(pd.Categorical([], categories=["a"])),
    pd.Series(["b", "a", None, "b", " a"]),
    pd.Series([3, 1, 3, np.nan])])
def test_n_distinct_is_nunique(values):
    # the command line counts a file's users from the codes of its Categorical (issue 36)
    assert _ids.n_distinct(values) == values.nunique()


def test_one_id_one_hash_whatever_type_it_was_read_as():
    """Bug fixed: "7" (a CSV file's id) and 7 (Parquet's, pandas') are one id under the id
    policy, but hashed apart, so their Poisson weights (and engine partitions) differed."""
    from recmetrics._ids import user_hash

    numbers = np.array([0, 7, -3, 2**63 - 1, -(2**63), 123456789012345678], dtype=np.int64)
    text = np.array([str(n) for n in numbers], dtype=object)
    assert (user_hash(numbers) == user_hash(text)).all()
    # text that is not a whole number's canonical text stays text: "007", "-0", "7.0" are
    # other ids than 7 and 0 (canonical ids never hold them; here they keep their own hash)
    others = np.array(["007", "-0", "7.0", "u7", "99999999999999999999"], dtype=object)
    assert not set(user_hash(others)) & set(user_hash(numbers))
    assert list(user_hash(others)) == list(pd.util.hash_array(others))
