"""Deterministic generators: keys, values and Insert Benchmark rows as pyarrow data.

Everything is a pure function of its arguments: the same seed gives the same
bytes on any machine and for any thread count, and ``offset``/``start`` let a
stream be generated in pieces. Arrays are handed over from Rust without
copying (Arrow C data interface), and the GIL is released while generating.

>>> import ibench
>>> ibench.gen.keys("uniform", 3, space=100, seed=7).to_pylist() == ibench.gen.keys("uniform", 3, space=100, seed=7).to_pylist()
True
"""

from ibench._native import keys, rows, values

KEY_KINDS = ("sequential", "uniform", "unique", "zipfian", "latest")
"""The key distributions ``keys`` accepts."""

ROW_COLUMNS = ("transactionid", "dateandtime", "cashregisterid", "customerid", "productid", "price", "data")
"""The Insert Benchmark table's columns, in order."""

__all__ = ["KEY_KINDS", "ROW_COLUMNS", "keys", "rows", "values"]
