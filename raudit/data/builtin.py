"""Datasets that need no file: scikit-learn's bundled tables and the study's worst case."""

from __future__ import annotations

import pandas as pd

from raudit.data.tables import Cleaned

WORST_CASE_TARGET = (1, 1, 1)


def breast_cancer() -> Cleaned:
    """Breast Cancer Wisconsin (569 x 30 continuous), label malignant = (sklearn target == 0).

    scikit-learn codes malignant as 0 and benign as 1; the auditing task's positive
    class is the diagnosis, so the label is flipped (212 positives).
    """
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    df = bunch.data.copy()
    df["malignant"] = (bunch.target == 0).astype("int64")
    return Cleaned(df)


def digits() -> Cleaned:
    """scikit-learn's 8x8 digits (1,797 x 64, public range [0, 16]), label is_zero = (digit == 0).

    The same binary task as ``mnist`` (178 positives, about 10%).
    """
    from sklearn.datasets import load_digits

    bunch = load_digits(as_frame=True)
    df = bunch.data.astype("int64")
    df["is_zero"] = (bunch.target == 0).astype("int64")
    public = {c: ("integer", 0.0, 16.0) for c in df.columns[:-1]}
    return Cleaned(df, public)


def worst_case() -> Cleaned:
    """The study's worst-case pair of neighbouring datasets, as D_in.

    D_out is four rows (0, 0, 0) over integer columns A, B, C (C the label); D_in
    adds the target row (1, 1, 1) as the last row, index 4 (``notes["target_row"]``).
    The game holds no data out, so the dataset is not split: test is a copy of
    train. D_out is ``train.drop(index=notes["target_row"])``.
    """
    df = pd.DataFrame([(0, 0, 0)] * 4 + [WORST_CASE_TARGET], columns=["A", "B", "C"], dtype="int64")
    public = {c: ("binary", 0.0, 1.0) for c in ("A", "B")}
    return Cleaned(df, public, {"target_row": 4, "d_out": "train.drop(index=4)"})
