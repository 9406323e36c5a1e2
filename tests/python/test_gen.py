"""Specification of ``ibench.gen``: keys, values and Insert Benchmark rows.

Each test states one behaviour of the generators as a sentence:

* what they return (Arrow types and schemas, handed over from Rust without copying),
* that they are deterministic (seed, thread count, generation in pieces),
* that their data has the promised distribution and domains,
* that bad arguments raise ``ibench.ConfigError`` naming the argument,
* that they release the GIL while generating,
* that the ``ibench gen`` command writes the same data as the Python API,
* and that the type stubs match the native module.
"""

from __future__ import annotations

import base64
import collections
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
import zlib
from datetime import datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Callable, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import ibench
from ibench import gen

Generated = Union[pa.Array, pa.RecordBatch]

SPACE = 1_000_000
"""The key space of the tests' non-sequential keys."""

PARALLEL_COUNT = 300_000
"""More than one parallel chunk (65536 elements), so threads really split the work."""

EPOCH = datetime(2025, 1, 1)
"""``dateandtime`` of row 0."""

ROW_TYPES = {
    "transactionid": pa.int64(),
    "dateandtime": pa.timestamp("us"),
    "cashregisterid": pa.int32(),
    "customerid": pa.int32(),
    "productid": pa.int32(),
    "price": pa.int32(),
    "data": pa.string(),
}

ROW_DOMAINS = {"cashregisterid": 1000, "customerid": 100_000, "productid": 10_000, "price": 500}
"""Each integer column of a row is in ``[0, domain)``."""

PRINTABLE_ASCII = frozenset(range(0x20, 0x7F))


# --- helpers ---------------------------------------------------------------


def space_for(kind: str) -> int | None:
    """The space argument the tests use for `kind` (sequential needs none)."""
    return None if kind == "sequential" else SPACE


def keys_of(kind: str, **fixed: object) -> Callable[..., pa.Array]:
    """A generator ``(count, first=0, **kw)`` of `kind` keys starting at draw `first`."""

    def generate(count: int, first: int = 0, **kw: object) -> pa.Array:
        return gen.keys(kind, count, space=space_for(kind), offset=first, **fixed, **kw)

    return generate


def values_of(**fixed: object) -> Callable[..., pa.Array]:
    """A generator ``(count, first=0, **kw)`` of values starting at value `first`."""

    def generate(count: int, first: int = 0, **kw: object) -> pa.Array:
        return gen.values(count, offset=first, **fixed, **kw)

    return generate


def rows_from(count: int, first: int = 0, **kw: object) -> pa.RecordBatch:
    """Rows with keys ``first, first + 1, ...``."""
    return gen.rows(count, start=first, **kw)


GENERATORS = {
    **{f"{kind}-keys": keys_of(kind) for kind in gen.KEY_KINDS},
    "encoded-keys": keys_of("uniform", key_size=12),
    "binary-values": values_of(length=(0, 40)),
    "text-values": values_of(length=(0, 40), text=True),
    "rows": rows_from,
}
"""Every kind of output, each as a ``(count, first=0, **kw)`` function."""

RANDOM_GENERATORS = {name: g for name, g in GENERATORS.items() if name != "sequential-keys"}
"""The generators that draw at random (sequential keys draw nothing)."""

each_generator = pytest.mark.parametrize("generate", GENERATORS.values(), ids=GENERATORS.keys())
each_random_generator = pytest.mark.parametrize("generate", RANDOM_GENERATORS.values(), ids=RANDOM_GENERATORS.keys())


def combined(parts: list[Generated]) -> pa.ChunkedArray | pa.Table:
    """Arrays or batches as one value whose equality ignores chunk boundaries."""
    if isinstance(parts[0], pa.RecordBatch):
        return pa.Table.from_batches(parts)
    return pa.chunked_array(parts)


def assert_same(actual: Generated | pa.Table, expected: Generated | pa.Table) -> None:
    assert actual.equals(expected), "the generated data differ"


def is_repeated_prefix(value: bytes, ratio: float) -> bool:
    """True when `value` is its first ⌈len·ratio⌉ bytes repeated to fill its length.

    The ratio is taken as written in decimal (⌈100 × 0.07⌉ is 7, not the 8 of float arithmetic).
    """
    m = math.ceil(len(value) * Fraction(str(ratio)))
    return m == 0 or value == (value[:m] * (len(value) // m + 1))[: len(value)]


def run_ibench(*args: str) -> subprocess.CompletedProcess[str]:
    """Runs the ``ibench`` console script."""
    return subprocess.run(["ibench", *args], capture_output=True, text=True, timeout=300)


def arg_named(name: str, text: str) -> bool:
    """True when `text` names the argument, in Python (``key_size``) or CLI (``key-size``) spelling."""
    return name in text or name.replace("_", "-") in text


# --- the package -----------------------------------------------------------


def test_the_package_reports_its_version_and_build_profile():
    assert isinstance(ibench.__version__, str) and ibench.__version__
    assert ibench.build_profile in ("release", "debug")


def test_config_error_is_an_ibench_error():
    assert issubclass(ibench.ConfigError, ibench.Error)
    assert issubclass(ibench.Error, Exception)


# --- types and schemas -----------------------------------------------------


@pytest.mark.parametrize("kind", gen.KEY_KINDS)
def test_keys_are_a_uint64_array(kind):
    keys = gen.keys(kind, 1000, space=space_for(kind))
    assert isinstance(keys, pa.UInt64Array)
    assert keys.type == pa.uint64()
    assert len(keys) == 1000
    assert keys.null_count == 0


@pytest.mark.parametrize("key_size", [8, 9, 16, 100])
def test_keys_with_a_key_size_are_fixed_size_binary_of_that_width(key_size):
    keys = gen.keys("uniform", 1000, space=SPACE, key_size=key_size)
    assert isinstance(keys, pa.FixedSizeBinaryArray)
    assert keys.type == pa.binary(key_size)
    assert len(keys) == 1000
    assert keys.null_count == 0


@pytest.mark.parametrize("key_size", [8, 16])
def test_encoded_keys_are_the_numeric_keys_big_endian_and_zero_padded(key_size):
    space = 2**64 - 1  # keys that use all eight bytes
    numeric = gen.keys("uniform", 1000, space=space, seed=3).to_pylist()
    encoded = gen.keys("uniform", 1000, space=space, seed=3, key_size=key_size).to_pylist()
    assert encoded == [k.to_bytes(key_size, "big") for k in numeric]


def test_encoded_keys_sort_in_numeric_order():
    numeric = gen.keys("uniform", 10_000, space=2**64 - 1, seed=5).to_pylist()
    encoded = gen.keys("uniform", 10_000, space=2**64 - 1, seed=5, key_size=10).to_pylist()
    by_bytes = sorted(range(len(encoded)), key=encoded.__getitem__)
    assert [numeric[i] for i in by_bytes] == sorted(numeric)


def test_values_are_a_binary_array_by_default():
    values = gen.values(100)
    assert isinstance(values, pa.BinaryArray)
    assert values.type == pa.binary()
    assert values.null_count == 0


def test_text_values_are_a_string_array():
    values = gen.values(100, text=True)
    assert isinstance(values, pa.StringArray)
    assert values.type == pa.string()
    assert values.null_count == 0


def test_rows_are_a_record_batch_with_the_insert_benchmark_schema():
    batch = gen.rows(100)
    assert isinstance(batch, pa.RecordBatch)
    assert batch.schema.names == list(gen.ROW_COLUMNS) == list(ROW_TYPES)
    for field in batch.schema:
        assert field.type == ROW_TYPES[field.name], field.name
        assert not field.nullable, field.name
    assert batch.num_rows == 100


@each_generator
def test_a_count_of_zero_gives_empty_output(generate):
    assert len(generate(0)) == 0


# --- zero-copy hand-over ---------------------------------------------------


@pytest.mark.parametrize(
    "generate",
    [
        lambda: gen.keys("uniform", 10**6, space=SPACE),
        lambda: gen.keys("uniform", 10**6, space=SPACE, key_size=16),
        lambda: gen.values(10**5, length=100),
        lambda: gen.values(10**5, length=100, text=True),
        lambda: gen.rows(10**5),
    ],
    ids=["keys", "encoded-keys", "binary-values", "text-values", "rows"],
)
def test_generated_data_is_handed_over_without_copying_into_pyarrows_pool(generate):
    before = pa.total_allocated_bytes()
    data = generate()
    grown = pa.total_allocated_bytes() - before
    assert data.nbytes > 4_000_000
    assert grown < data.nbytes // 100, f"pyarrow's pool grew by {grown} bytes for {data.nbytes}"


# --- determinism -----------------------------------------------------------


@each_generator
def test_the_same_seed_gives_identical_output(generate):
    assert_same(generate(10_000, seed=42), generate(10_000, seed=42))


@each_random_generator
def test_different_seeds_give_different_output(generate):
    assert not generate(10_000, seed=1).equals(generate(10_000, seed=2))


@each_random_generator
def test_different_tables_give_different_output(generate):
    assert not generate(10_000, table=0).equals(generate(10_000, table=1))


@each_generator
def test_the_output_does_not_depend_on_the_thread_count(generate):
    one, two, eight = (generate(PARALLEL_COUNT, seed=9, threads=n) for n in (1, 2, 8))
    assert_same(two, one)
    assert_same(eight, one)


@each_generator
def test_generating_in_pieces_equals_generating_at_once(generate):
    # Boundaries off and on the stream blocks (256) and parallel chunks (65536).
    bounds = [0, 1, 255, 257, 65_536, 65_537, 200_001, PARALLEL_COUNT]
    pieces = [generate(end - begin, first=begin, seed=7) for begin, end in zip(bounds, bounds[1:])]
    assert_same(combined(pieces), combined([generate(PARALLEL_COUNT, seed=7)]))


@each_generator
def test_a_piece_from_an_offset_equals_that_slice_of_the_whole(generate):
    whole = generate(5000, seed=11)
    assert_same(generate(1234, first=3000, seed=11), whole.slice(3000, 1234))


# --- distributions and domains ---------------------------------------------


def test_sequential_keys_count_up_from_the_offset():
    assert gen.keys("sequential", 5, offset=2**40).to_pylist() == [2**40 + i for i in range(5)]


def test_unique_keys_of_count_equal_to_space_are_a_permutation_of_the_space():
    keys = gen.keys("unique", 100_000, space=100_000, seed=4).to_numpy()
    assert np.array_equal(np.sort(keys), np.arange(100_000))
    assert not np.array_equal(keys, np.arange(100_000)), "a permutation, not the identity"


def test_unique_keys_are_distinct_in_a_large_space():
    keys = gen.keys("unique", 200_000, space=2**64 - 1, seed=4).to_numpy()
    assert len(np.unique(keys)) == len(keys)


def test_uniform_keys_lie_in_zero_to_space():
    keys = gen.keys("uniform", 100_000, space=1000, seed=6).to_numpy()
    assert keys.min() >= 0 and keys.max() < 1000


def test_uniform_keys_cover_a_small_space_evenly():
    counts = np.bincount(gen.keys("uniform", 100_000, space=10, seed=6).to_numpy(), minlength=10)
    assert len(counts) == 10
    assert counts.min() > 9000 and counts.max() < 11_000


def test_uniform_keys_are_drawn_with_replacement():
    keys = gen.keys("uniform", 10_000, space=10_000, seed=6).to_numpy()
    assert len(np.unique(keys)) < len(keys)


def test_zipfian_keys_lie_in_range_and_a_few_are_hot():
    keys = gen.keys("zipfian", 100_000, space=SPACE, seed=8).to_numpy()
    assert keys.max() < SPACE
    hottest = collections.Counter(keys.tolist()).most_common(1)[0][1]
    assert hottest > 1000, "the hottest key takes a large share of the draws"


def test_latest_keys_have_space_minus_one_as_the_most_frequent_key():
    keys = gen.keys("latest", 100_000, space=SPACE, seed=8).to_numpy()
    assert keys.max() < SPACE
    assert collections.Counter(keys.tolist()).most_common(1)[0][0] == SPACE - 1


@pytest.mark.parametrize("length", [0, 1, 7, 100, 1000])
def test_values_of_a_fixed_length_all_have_that_length(length):
    lengths = pc.binary_length(gen.values(1000, length=length)).to_numpy()
    assert (lengths == length).all()


def test_values_of_a_length_range_have_lengths_in_that_range_both_ends_included():
    lengths = pc.binary_length(gen.values(10_000, length=(3, 9))).to_numpy()
    assert set(lengths.tolist()) == set(range(3, 10))


@pytest.mark.parametrize("ratio", [0.07, 0.25, 0.5, 1.0])
@pytest.mark.parametrize("text", [False, True], ids=["binary", "text"])
def test_each_value_is_a_random_prefix_of_ceil_length_times_ratio_repeated(ratio, text):
    values = gen.values(500, length=(1, 300), ratio=ratio, text=text).to_pylist()
    as_bytes = [v.encode() if text else v for v in values]
    assert all(is_repeated_prefix(v, ratio) for v in as_bytes)


def test_text_values_are_printable_ascii():
    data = b"".join(v.encode() for v in gen.values(1000, length=(0, 200), text=True).to_pylist())
    assert set(data) <= PRINTABLE_ASCII


def test_transactionid_counts_up_from_start():
    assert gen.rows(5, start=1000).column("transactionid").to_pylist() == [1000, 1001, 1002, 1003, 1004]


def test_dateandtime_advances_one_second_every_rows_per_second_keys():
    batch = gen.rows(1000, start=12_345, rows_per_second=100)
    expected = [EPOCH + timedelta(seconds=k // 100) for k in range(12_345, 13_345)]
    assert batch.column("dateandtime").to_pylist() == expected


def test_dateandtime_is_non_decreasing():
    stamps = gen.rows(PARALLEL_COUNT, start=999).column("dateandtime").cast(pa.int64()).to_numpy()
    assert (np.diff(stamps) >= 0).all()


@pytest.mark.parametrize("column", ROW_DOMAINS)
def test_row_integer_columns_lie_in_their_domains(column):
    values = gen.rows(100_000, seed=12).column(column).to_numpy()
    assert values.min() >= 0 and values.max() < ROW_DOMAINS[column]
    assert values.max() >= ROW_DOMAINS[column] * 0.9, "the whole domain is used"


def test_row_data_has_a_length_in_the_data_length_range():
    data = gen.rows(10_000, data_length=(4, 8)).column("data")
    assert set(pc.utf8_length(data).to_pylist()) == set(range(4, 9))


def test_row_data_has_ten_to_twenty_characters_by_default():
    data = gen.rows(10_000).column("data")
    assert set(pc.utf8_length(data).to_pylist()) == set(range(10, 21))


def test_row_data_is_printable_ascii_repeated_to_the_ratio():
    data = [d.encode() for d in gen.rows(10_000, ratio=0.3).column("data").to_pylist()]
    assert set(b"".join(data)) <= PRINTABLE_ASCII
    assert all(is_repeated_prefix(d, 0.3) for d in data)


# --- errors ----------------------------------------------------------------


def _case(name: str, call: Callable[[], object], case_id: str) -> object:
    """A bad call and the argument its error must name."""
    return pytest.param(name, call, id=case_id)


BAD_ARGUMENTS = [
    _case("kind", lambda: gen.keys("bogus", 10, space=10), "kind-unknown"),
    _case("count", lambda: gen.keys("uniform", -1, space=10), "keys-count-negative"),
    _case("count", lambda: gen.values(-1), "values-count-negative"),
    _case("count", lambda: gen.rows(-1), "rows-count-negative"),
    _case("count", lambda: gen.keys("unique", 11, space=10), "unique-count-above-space"),
    _case("count", lambda: gen.keys("sequential", 11, space=10), "sequential-count-above-space"),
    _case("count", lambda: gen.keys("sequential", 2, offset=2**64 - 1), "keys-past-the-largest-index"),
    _case("count", lambda: gen.values(2, offset=2**64 - 1), "values-past-the-largest-index"),
    _case("count", lambda: gen.rows(2, start=2**63 - 1), "rows-past-the-largest-bigint"),
    _case("count", lambda: gen.keys("uniform", 2**64, space=10), "count-above-2-to-the-64"),
    *(
        _case("space", lambda kind=kind: gen.keys(kind, 10), f"{kind}-space-missing")
        for kind in ("uniform", "unique", "zipfian", "latest")
    ),
    _case("space", lambda: gen.keys("uniform", 10, space=0), "space-zero"),
    _case("space", lambda: gen.keys("uniform", 10, space=-1), "space-negative"),
    _case("key_size", lambda: gen.keys("uniform", 10, space=10, key_size=7), "key-size-too-small"),
    _case("key_size", lambda: gen.keys("uniform", 10, space=10, key_size=-1), "key-size-negative"),
    _case("theta", lambda: gen.keys("zipfian", 10, space=10, theta=0), "zipfian-theta-zero"),
    _case("theta", lambda: gen.keys("latest", 10, space=10, theta=-1), "latest-theta-negative"),
    _case("theta", lambda: gen.keys("zipfian", 10, space=10, theta=math.inf), "theta-infinite"),
    _case("theta", lambda: gen.keys("zipfian", 10, space=10, theta=math.nan), "theta-nan"),
    _case("seed", lambda: gen.keys("uniform", 10, space=10, seed=-1), "keys-seed-negative"),
    _case("seed", lambda: gen.values(10, seed=-1), "values-seed-negative"),
    _case("seed", lambda: gen.rows(10, seed=-1), "rows-seed-negative"),
    _case("offset", lambda: gen.keys("uniform", 10, space=10, offset=-1), "keys-offset-negative"),
    _case("offset", lambda: gen.values(10, offset=-1), "values-offset-negative"),
    _case("start", lambda: gen.rows(10, start=-1), "rows-start-negative"),
    _case("table", lambda: gen.keys("uniform", 10, space=10, table=-1), "keys-table-negative"),
    _case("table", lambda: gen.values(10, table=-1), "values-table-negative"),
    _case("table", lambda: gen.rows(10, table=-1), "rows-table-negative"),
    _case("length", lambda: gen.values(10, length=(5, 2)), "length-min-above-max"),
    _case("length", lambda: gen.values(10, length=-1), "length-negative"),
    _case("length", lambda: gen.values(10, length=2**31), "length-too-large"),
    _case("data_length", lambda: gen.rows(10, data_length=(5, 2)), "data-length-min-above-max"),
    _case("ratio", lambda: gen.values(10, ratio=0), "values-ratio-zero"),
    _case("ratio", lambda: gen.values(10, ratio=1.5), "values-ratio-above-one"),
    _case("ratio", lambda: gen.values(10, ratio=math.nan), "values-ratio-nan"),
    _case("ratio", lambda: gen.rows(10, ratio=0), "rows-ratio-zero"),
    _case("rows_per_second", lambda: gen.rows(10, rows_per_second=0), "rows-per-second-zero"),
    _case("rows_per_second", lambda: gen.rows(10, rows_per_second=-1), "rows-per-second-negative"),
    _case("threads", lambda: gen.keys("uniform", 10, space=10, threads=0), "keys-threads-zero"),
    _case("threads", lambda: gen.values(10, threads=0), "values-threads-zero"),
    _case("threads", lambda: gen.rows(10, threads=0), "rows-threads-zero"),
    _case("threads", lambda: gen.keys("uniform", 10, space=10, threads=-1), "keys-threads-negative"),
    _case("threads", lambda: gen.values(10, threads=-1), "values-threads-negative"),
    _case("threads", lambda: gen.rows(10, threads=-1), "rows-threads-negative"),
]


@pytest.mark.parametrize(("name", "call"), BAD_ARGUMENTS)
def test_a_bad_argument_raises_config_error_naming_the_argument(name, call):
    with pytest.raises(ibench.ConfigError) as raised:
        call()
    assert isinstance(raised.value, ibench.Error)
    assert str(raised.value).startswith(f"invalid {name}: ")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gen.values(10, ratio=0), "invalid ratio: must be in (0, 1], got 0"),
        (lambda: gen.values(10, length=(5, 2)), "invalid length: min 5 is greater than max 2"),
        (lambda: gen.keys("uniform", 10, space=10, threads=0), "invalid threads: must be in [1, 1024], got 0"),
    ],
    ids=["ratio", "length", "threads"],
)
def test_an_error_message_says_what_is_wrong(call, message):
    with pytest.raises(ibench.ConfigError, match=f"^{re.escape(message)}$"):
        call()


def test_a_bad_kind_lists_the_known_kinds():
    with pytest.raises(ibench.ConfigError) as raised:
        gen.keys("gaussian", 10, space=10)
    assert all(kind in str(raised.value) for kind in gen.KEY_KINDS)


# --- the GIL ---------------------------------------------------------------


def test_generation_releases_the_gil_so_other_python_threads_keep_running():
    """Counts main-thread loop iterations inside the middle half of a long generation.

    Holding the GIL, the generating thread would let the main thread run at
    most one switch interval (5 ms) around the native call, never in its middle.
    """
    span: dict[str, float] = {}

    def generate() -> None:
        span["begin"] = time.perf_counter()
        gen.keys("unique", 3 * 10**7, space=10**9, threads=1)  # one thread leaves a core for the main loop
        span["end"] = time.perf_counter()

    ticks: collections.Counter[int] = collections.Counter()  # iterations per millisecond
    worker = threading.Thread(target=generate)
    worker.start()
    while worker.is_alive():
        ticks[int(time.perf_counter() * 1000)] += 1
    worker.join()

    begin, end = span["begin"] * 1000, span["end"] * 1000
    assert end - begin > 100, "the generation is long enough to tell"
    quarter = (end - begin) / 4
    middle = sum(n for ms, n in ticks.items() if begin + quarter <= ms < end - quarter)
    assert middle > 1000, f"the main thread ran only {middle} iterations during the generation"


# --- the command line ------------------------------------------------------


CLI_CASES = {
    "uniform-keys-over-two-batches": (
        ["keys", "--kind", "uniform", "-n", "1100000", "--space", "1000000", "--seed", "3", "--offset", "5"],
        lambda: gen.keys("uniform", 1_100_000, space=SPACE, seed=3, offset=5),
    ),
    "sequential-keys": (
        ["keys", "-k", "sequential", "-n", "1000", "--offset", "77"],
        lambda: gen.keys("sequential", 1000, offset=77),
    ),
    "unique-keys": (
        ["keys", "-k", "unique", "-n", "1000", "--space", "1000", "--seed", "2"],
        lambda: gen.keys("unique", 1000, space=1000, seed=2),
    ),
    "zipfian-encoded-keys": (
        ["keys", "-k", "zipfian", "-n", "5000", "--space", "1000000", "--theta", "0.8", "--key-size", "16"],
        lambda: gen.keys("zipfian", 5000, space=SPACE, theta=0.8, key_size=16),
    ),
    "latest-keys": (
        ["keys", "-k", "latest", "-n", "5000", "--space", "1000000", "--seed", "4"],
        lambda: gen.keys("latest", 5000, space=SPACE, seed=4),
    ),
    "binary-values": (
        ["values", "-n", "5000", "--length", "10..50", "--ratio", "0.3", "--seed", "5", "--offset", "9"],
        lambda: gen.values(5000, length=(10, 50), ratio=0.3, seed=5, offset=9),
    ),
    "text-values": (
        ["values", "-n", "5000", "--length", "64", "--text"],
        lambda: gen.values(5000, length=64, text=True),
    ),
    "rows": (
        ["rows", "-n", "20000", "--table", "2", "--start", "100", "--seed", "6",
         "--data-length", "5..30", "--ratio", "0.7", "--rows-per-second", "10"],
        lambda: gen.rows(20_000, table=2, start=100, seed=6, data_length=(5, 30), ratio=0.7, rows_per_second=10),
    ),
}


@pytest.mark.parametrize(("args", "api"), CLI_CASES.values(), ids=CLI_CASES.keys())
def test_the_cli_writes_the_same_data_as_the_api(tmp_path, args, api):
    out = tmp_path / "out.parquet"
    done = run_ibench("gen", *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    written = pq.read_table(out)
    expected = api()
    if isinstance(expected, pa.RecordBatch):
        assert_same(written, pa.Table.from_batches([expected]))
    else:
        assert written.column_names == ["key" if args[0] == "keys" else "value"]
        assert_same(written.column(0), pa.chunked_array([expected]))


CLI_BAD_ARGUMENTS = {
    "kind": ["keys", "--kind", "bogus", "-n", "10"],
    "space": ["keys", "--kind", "uniform", "-n", "10"],
    "key_size": ["keys", "--kind", "uniform", "-n", "10", "--space", "10", "--key-size", "4"],
    "theta": ["keys", "--kind", "zipfian", "-n", "10", "--space", "10", "--theta", "0"],
    "count": ["keys", "--kind", "unique", "-n", "11", "--space", "10"],
    "ratio": ["values", "-n", "10", "--ratio", "0"],
    "length": ["values", "-n", "10", "--length", "5..2"],
    "data_length": ["rows", "-n", "10", "--data-length", "5..2"],
    "rows_per_second": ["rows", "-n", "10", "--rows-per-second", "0"],
}


@pytest.mark.parametrize(("name", "args"), CLI_BAD_ARGUMENTS.items(), ids=CLI_BAD_ARGUMENTS.keys())
def test_the_cli_rejects_a_bad_argument_by_name_and_writes_no_file(tmp_path, name, args):
    out = tmp_path / "out.parquet"
    done = run_ibench("gen", *args, "-o", str(out))
    assert done.returncode != 0
    assert arg_named(name, done.stderr), done.stderr
    assert not out.exists()


# --- the reference client's data ------------------------------------------


def reference_data(n: int, length: tuple[int, int], pct: int, seed: int = 1) -> bytes:
    """The data column as iibench.py builds it (../shared/research/iibench.md §2):
    a base64 buffer of 4 MiB from os.urandom; per row a length uniform in
    [min, max], then 'a' × (len − r) and r characters of the buffer from a
    random offset, r = int(len × 0.75 × pct / 100)."""
    rng = random.Random(seed)
    buf = base64.b64encode(os.urandom(4 << 20)).decode()
    out = []
    for _ in range(n):
        size = rng.randrange(length[0], length[1] + 1)
        r = int(size * 0.75 * pct / 100)
        at = rng.randrange(0, len(buf) - r)
        out.append("a" * (size - r) + buf[at : at + r])
    return "".join(out).encode()


def compressed_ratio(raw: bytes) -> float:
    return len(zlib.compress(raw, 6)) / len(raw)


@pytest.mark.parametrize(("length", "pct"), [((10, 20), 50), ((100, 200), 50), ((10, 20), 100), ((100, 200), 20)])
def test_reference_data_compresses_like_the_reference_clients(length, pct):
    n = 200_000 if length[1] <= 20 else 30_000
    ours = "".join(gen.rows(n, data_length=length, data_random_pct=pct).column("data").to_pylist()).encode()
    theirs = reference_data(n, length, pct)
    assert compressed_ratio(ours) == pytest.approx(compressed_ratio(theirs), abs=0.03)
    assert len(ours) == pytest.approx(len(theirs), rel=0.01), "the same length distribution"


def test_reference_data_is_a_pads_then_base64_characters():
    data = gen.rows(1000, data_length=(10, 20), data_random_pct=50).column("data").to_pylist()
    for value in data:
        r = int(len(value) * 0.75 * 50 / 100)
        assert value[: len(value) - r] == "a" * (len(value) - r)
        assert re.fullmatch(r"[A-Za-z0-9+/]*", value[len(value) - r :]), value
    assert gen.rows(1000, data_random_pct=50).equals(gen.rows(1000, data_random_pct=50)), "deterministic"


def test_ibench_data_is_not_the_references():
    # The difference the compat mode removes: half of ibench's characters are random.
    ours = "".join(gen.rows(200_000).column("data").to_pylist()).encode()
    assert compressed_ratio(ours) - compressed_ratio(reference_data(200_000, (10, 20), 50)) > 0.05


def test_a_data_random_pct_above_100_is_refused_by_name():
    with pytest.raises(ibench.ConfigError, match="data_random_pct"):
        gen.rows(10, data_random_pct=101)


# --- the type stubs --------------------------------------------------------


def test_the_stub_file_matches_the_native_module():
    # The project's mypy settings (pyproject.toml) say pyarrow ships no types.
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "ibench._native", "--mypy-config-file", str(root / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
