"""The released implementations raudit knows how to run, and those it cannot.

Each entry says what ``raudit upstream setup NAME`` installs (pinned: the top-level
requirements, and constraints that fix every transitive version tested together),
which Python it needs, and which entry script speaks raudit's exec protocol for it.
Entries that cannot be installed carry the reason instead; ``raudit upstream list``
prints both kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from raudit.registry import Registry


@dataclass(frozen=True)
class Upstream:
    name: str
    impl: str  # the raudit port it corresponds to ("" if none)
    summary: str
    python: str = ""  # "3.11": the minor version the pins were resolved for
    requirements: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    entry: str = ""  # a file of raudit/upstream/entries
    installable: bool = False
    notes: str = ""
    env: dict[str, str] = field(default_factory=dict)
    imports: tuple[str, ...] = ()  # checked after pip, before the set-up counts as complete


SMARTNOISE = Upstream(
    name="smartnoise",
    impl="smartnoise",
    summary="OpenDP smartnoise-synth 1.0.8, PATEGAN (PyTorch)",
    python="3.11",
    # opacus 0.14 only asks for torch>=1.3, so the newest torch satisfies it; torch 2.13
    # is raudit's own pin (on PyPI its Linux wheel is the CUDA build; where a local CPU
    # wheel or a CPU index is configured for pip, that one is taken). `packaging` is
    # imported by snsynth but not declared; pyarrow reads the exec protocol's Parquet.
    requirements=("smartnoise-synth==1.0.8", "opacus==0.14.0", "torch==2.13.0", "pandas==2.3.3",
                  "packaging==26.3", "pyarrow==26.0.1"),
    constraints=(
        "absl-py==2.5.1", "antlr4-python3-runtime==4.9.3", "attrs==26.1.0", "chex==0.1.92",
        "Deprecated==1.3.1", "disjoint-set==0.9.0", "Faker==40.54.0", "filelock==4.2.11",
        "fsspec==2026.9.0", "graphviz==0.21", "jax==0.10.2", "jaxlib==0.10.2", "Jinja2==3.1.6",
        "MarkupSafe==3.0.4", "mbi==1.1.0", "ml_dtypes==0.6.0", "mpmath==1.3.0",
        "networkx==3.6.1", "numpy==2.4.6", "opendp==0.14.2", "opt_einsum==3.4.0",
        "optax==0.2.8", "pac-synth==0.0.8", "python-dateutil==4.0.0", "pytz==2026.6",
        "PyYAML==6.0.3", "scipy==1.17.1", "smartnoise-sql==1.0.10", "SQLAlchemy==2.1.9",
        "sympy==1.14.0", "toolz==1.2.0", "typing_extensions==4.16.0", "tzdata==2026.6",
        "wrapt==2.5.2"),
    entry="smartnoise_pategan.py",
    installable=True,
    notes="num_teachers = int(N/1000) is replaced by the 'teachers' option (0 teachers below "
          "1,000 rows otherwise); about 2 GB installed (torch CPU 0.75 GB, jaxlib 0.35 GB, "
          "opendp 0.18 GB, pyarrow 0.17 GB); 4 s of imports per call",
    imports=("snsynth.pytorch.nn.pategan", "opacus", "torch", "pandas", "pyarrow"),
    env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
)

NOT_INSTALLABLE = (
    Upstream("synthcity", "synthcity", "vanderschaar-lab synthcity 0.2.12, plugin 'pategan'",
             notes="on PyPI and resolvable (pip, Python 3.11: 174 packages), but it needs "
                   "torch>=2.1,<2.3 (whose PyPI wheel pulls ~2.5 GB of CUDA 12.1 libraries), "
                   "opacus>=1.3 and numpy<2: it can share an environment neither with "
                   "smartnoise-synth 1.0.8 (opacus<0.15) nor with raudit (torch 2.13, numpy 2); "
                   "no entry script yet, so `setup` refuses it"),
    Upstream("original", "original", "Jordon et al. 2019 (ICLR) PATE-GAN code, TensorFlow 1",
             notes="not a package (a script in a GitHub repository); TensorFlow 1.x wheels "
                   "exist only for Python <= 3.7; the faithful port is raudit's 'original'"),
    Upstream("updated", "updated", "the 2021 release of the PATE-GAN authors' code, TensorFlow 1",
             notes="not a package; TensorFlow 1.x (Python <= 3.7), cannot share an environment "
                   "with torch 2"),
    Upstream("turing", "turing", "Alan Turing Institute QUIPP PATE-GAN",
             notes="not on PyPI (code in a GitHub repository only)"),
    Upstream("borealis", "borealis", "Borealis AI private-data-generation PATE-GAN",
             notes="not on PyPI (code in a GitHub repository only)"),
)

UPSTREAMS: Registry[Upstream] = Registry("upstream implementation")
for _u in (SMARTNOISE, *NOT_INSTALLABLE):
    UPSTREAMS.register(_u.name, _u)


def get(name: str) -> Upstream:
    return UPSTREAMS.get(name)


def all_upstreams() -> list[Upstream]:
    return [UPSTREAMS.get(n) for n in UPSTREAMS.names()]
