"""Where each dataset's files come from, and what their bytes must hash to.

A :class:`DataFile` names one file by its path inside the data folder (the layout
of ``$RAUDIT_DATA_DIR`` and of the cache) and says how to get it on a machine
that lacks it: the URLs to try, and the archive member to extract when the URL
is a zip.

Checksums: ``sha256`` is the hash of the file exactly as stored in the reference
copies (their ``SHA256SUMS``). Files that are gzipped there also pin
``raw_sha256``, the hash of the *decompressed* bytes, because a download may
carry the same content under a different gzip header (MNIST's canonical ``.gz``
files) or none at all (a zip member that the fetcher gzips itself). A file is
accepted when either hash matches. Files with ``sha256=None`` are *unpinned*:
no copy was at hand to hash, so their readers check the schema instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset, by its path inside the data folder."""

    relpath: str
    sha256: str | None
    urls: tuple[str, ...] = ()
    member: str | None = None  # glob on member basenames when a URL is a zip
    raw_sha256: str | None = None

    @property
    def pinned(self) -> bool:
        return self.sha256 is not None or self.raw_sha256 is not None


@dataclass(frozen=True)
class Source:
    """Provenance of a dataset and the documented size of its cleaned table.

    ``rows``/``columns``/``positives`` describe the full cleaned table (label
    included), as documented by the source or measured on the reference copy;
    ``None`` where no copy was at hand to count. ``fallback`` lists files that
    are used, with a note, when the full ``files`` are absent locally.
    """

    title: str
    homepage: str
    licence: str
    label_rule: str
    files: tuple[DataFile, ...] = ()
    fallback: tuple[DataFile, ...] = ()
    fallback_note: str = ""
    rows: int | None = None
    columns: int | None = None
    positives: int | None = None

    @property
    def urls(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for f in self.files:
            seen.update(dict.fromkeys(f.urls))
        return tuple(seen)


_UCI = "https://archive.ics.uci.edu/static/public"
_MNIST = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")


def _mnist(stem: str, canonical: str, sha256: str, raw_sha256: str) -> DataFile:
    # Stored as e.g. train-images.idx3-ubyte.gz; the mirrors spell it train-images-idx3-ubyte.gz.
    return DataFile(
        f"mnist/{stem}.gz", sha256, tuple(m + canonical for m in _MNIST), raw_sha256=raw_sha256
    )


# One Source per registered dataset; raudit.data.registry pairs each with its reader.
CERVICAL = Source(
    title="Cervical Cancer (Risk Factors), UCI id 383",
    homepage="https://archive.ics.uci.edu/dataset/383/cervical+cancer+risk+factors",
    licence="CC BY 4.0",
    label_rule="Biopsy (as recorded)",
    files=(
        DataFile(
            "cervical_cancer/risk_factors_cervical_cancer.csv",
            "8df193ad5c9ff4288fb4c401eef70dcd2cbda404ce7f82ac74c68cfc960ab063",
            (f"{_UCI}/383/cervical+cancer+risk+factors.zip",),
            member="risk_factors_cervical_cancer.csv",
        ),
    ),
    rows=858, columns=29, positives=55,
)

EPILEPTIC = Source(
    title="Epileptic Seizure Recognition, UCI id 388",
    homepage="https://archive.ics.uci.edu/dataset/388/epileptic+seizure+recognition",
    licence="CC BY 4.0",
    label_rule="seizure = (y == 1)",
    files=(
        DataFile(
            "epileptic_seizure/epileptic_seizure_recognition.csv.gz",
            "6bce493b456473b1479d3daa15c0dde0870f534709be7a1d3d8bf7329cae1bdc",
            (f"{_UCI}/388/epileptic+seizure+recognition.zip",),
            member="*.csv",
            raw_sha256="5ac55c71de5df20d2f47c39300c5b61df18ac5d1c40315e586310b794c32a98b",
        ),
    ),
    rows=11500, columns=179, positives=2300,
)

ISOLET = Source(
    title="ISOLET spoken letters, UCI id 54",
    homepage="https://archive.ics.uci.edu/dataset/54/isolet",
    licence="CC BY 4.0",
    label_rule="vowel = class in {1, 5, 9, 15, 21} (a, e, i, o, u)",
    # The canonical zip holds Unix-compress (.Z) members; raudit.data.lzw decodes them.
    # Their hashes are unpinned: no copy of the full data was at hand.
    files=(
        DataFile(
            "isolet/isolet1+2+3+4.data", None, (f"{_UCI}/54/isolet.zip",),
            member="isolet1+2+3+4.data*",
        ),
        DataFile("isolet/isolet5.data", None, (f"{_UCI}/54/isolet.zip",), member="isolet5.data*"),
    ),
    fallback=(
        DataFile(
            "isolet/isolet5_test_data.csv.gz",
            "fa29b122a779d26b1f67254961c81c48dbd974a041690b81fe37577da2d5d57f",
            raw_sha256="e14eb62addf13e4268e011929e2829e78fd21b7ebb07829ee477fd7daaf2c244",
        ),
    ),
    fallback_note="only the isolet5 test part (1,559 rows) is available; "
    "the full data (7,797 rows) downloads from the canonical zip",
    rows=7797, columns=618, positives=None,
)

CREDIT = Source(
    title="Credit Card Fraud Detection (ULB, Kaggle mlg-ulb/creditcardfraud; OpenML 1597)",
    homepage="https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud",
    licence="ODbL 1.0 / DbCL 1.0",
    label_rule="Class, rounded to 0/1",
    # The TensorFlow tutorials' public copy of the Kaggle file; unpinned (no copy here).
    files=(
        DataFile(
            "credit_card/creditcard.csv", None,
            ("https://storage.googleapis.com/download.tensorflow.org/data/creditcard.csv",),
        ),
    ),
    rows=284807, columns=31, positives=492,
)

MNIST = Source(
    title="MNIST handwritten digits",
    homepage="http://yann.lecun.com/exdb/mnist/",
    licence="CC BY-SA 3.0",
    label_rule="is_zero = (digit == 0)",
    files=(
        _mnist("train-images.idx3-ubyte", "train-images-idx3-ubyte.gz",
               "22e511722935a3826815b100649d3aa21e89506b46798df17a86c1341f0ee73d",
               "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"),
        _mnist("train-labels.idx1-ubyte", "train-labels-idx1-ubyte.gz",
               "7b739b584170937675b411221710d3aee0db10898d395e8a1b82fef7a78913cc",
               "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"),
        _mnist("t10k-images.idx3-ubyte", "t10k-images-idx3-ubyte.gz",
               "2400bf5cae916f5ddd4e7926ee43e01423ec492d890d09a7b37615d17c385cc3",
               "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"),
        _mnist("t10k-labels.idx1-ubyte", "t10k-labels-idx1-ubyte.gz",
               "811947c85a50ce6fffacc0557cf4fb71ab08db078a19970b912ba4d9236a1223",
               "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"),
    ),
    rows=70000, columns=785, positives=6903,
)

# the same files, the digit as the label (ten classes: no "positives")
MNIST10 = replace(MNIST, title="MNIST handwritten digits, ten classes", label_rule="digit (0-9)",
                  positives=None)

BREAST_CANCER = Source(
    title="Breast Cancer Wisconsin (Diagnostic), bundled with scikit-learn",
    homepage="https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic",
    licence="CC BY 4.0",
    label_rule="malignant = (target == 0)",
    rows=569, columns=31, positives=212,
)

DIGITS = Source(
    title="Optical recognition of handwritten digits (8x8), bundled with scikit-learn",
    homepage="https://archive.ics.uci.edu/dataset/80",
    licence="CC BY 4.0",
    label_rule="is_zero = (digit == 0)",
    rows=1797, columns=65, positives=178,
)

WORST_CASE = Source(
    title="The study's worst-case neighbouring datasets (built in code)",
    homepage="",
    licence="none (synthetic)",
    label_rule="C",
    rows=5, columns=3, positives=1,
)
