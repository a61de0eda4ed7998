"""Datasets: a registry of the study's tables, user files, download, checksums and cache.

>>> from raudit import data
>>> ds = data.load("cervical")          # a registered name (see data.names())
>>> ds = data.load("mine.csv", label="y", bounds="bounds.json")  # a user file

Every :class:`Dataset` is all-numeric with its label last (binary 0/1; ``mnist10``: the digit), split 80/20
stratified on the label with ``random_state=seed`` (13 by default).
"""

from raudit.data.cache import cache_dir, data_dir
from raudit.data.dataset import ColumnMeta, Dataset, infer_columns
from raudit.data.registry import (clear_cache, import_file, info, load, names, require_binary,
                                  source)
from raudit.data.sources import DataFile, Source
from raudit.data.userfile import categories_file, decode

__all__ = [
    "ColumnMeta", "DataFile", "Dataset", "Source", "cache_dir", "categories_file", "clear_cache",
    "data_dir", "decode", "import_file", "infer_columns", "info", "load", "names", "require_binary",
    "source",
]
