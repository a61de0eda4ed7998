"""`smartnoise`: OpenDP SmartNoise synth's PATEGAN (PyTorch, float64), ported faithfully.

Source read: github.com/opendp/smartnoise-sdk ``synth/snsynth/pytorch/nn/pategan.py``,
``privacy_utils.py``, ``snsynth/transform/*`` and ``snsynth/base.py``, and the study's
harness around it (spec section 6).

Loop (per iteration): eps_hat = min_l (alpha_l - log delta) / l is computed at the
TOP; if it exceeds eps the loop stops, and on the first iteration it raises
"epsilon too small" (:class:`~raudit.generators.pategan.core.nets.EpsilonTooSmall`).
Then 5 rounds in which every teacher takes the first batch of a shuffled loader
over its ``np.array_split`` slice (row order) and a fresh generated batch, one
Adam step; 5 student steps on generated batches labelled
1[votes + Lap(1/lambda) > k/2] with lambda = 1e-3 hard-coded, each charged to the
accountant (the same missing-log code as borealis); one generator step on
BCE(S(G(z)), 1). Training noise z ~ U(0, 1) (``torch.rand``), generation noise
N(0, 1) (``torch.randn``). Networks: :mod:`~raudit.generators.pategan.ports.smartnoise.nets`;
preprocessing: :mod:`~raudit.generators.pategan.ports.smartnoise.encoding`.

Deviations, each a constructor option whose default is the upstream behaviour:

==================  =================  ============================================
option              default            alternative
==================  =================  ============================================
accountant          "missing-log"      any raudit accountant ("paper" restores the log)
check               "top"              "after"
generation_noise    "normal"           "uniform" (train and generate alike: U(0,1))
partition           "contiguous"       "shuffled"
aggregation         "threshold"        "argmax"
bounds              "data"             "metadata", "dp" (snsynth's approx_bounds)
encoding            "study"            "library" (snsynth's own type inference)
==================  =================  ============================================

``bounds="data"`` is how the study runs it (data min/max passed as public bounds,
so all of eps goes to training); ``bounds="dp"`` pays ``preprocessor_eps`` out of
eps, as snsynth does (error if nothing is left: eps - preprocessor_eps < 0.01).
Also: ``teacher_fakes="per-teacher"``, ``teacher_update="joint"``,
``generator_loss="non-saturating"``, ``integers="round"`` (raudit's schema; upstream
returns floats), ``latent_dim=64``, ``binary=False`` (Tanh instead of LeakyReLU in
every generator block).

delta: upstream defaults to 1/(N sqrt N) (the study passes 10^-5). ``delta=None``
(``default_delta``) means exactly that, per model with its own N; with preset
``paper`` it means the paper's 10^-5. Teachers: upstream int(N/1000), which is 0
(and crashes) for N < 1000; the study made it a parameter, and the presets use
max(2, N // 1000) unless ``teachers`` is given.

Not reproduced: the first eps check upstream runs on a float32 zero vector (1e-7
relative, only at an exact tie with eps), and upstream's ``moments_acc`` computes the
bound 2 lam^2 l(l+1) in float32 (``l`` comes from an int64 tensor; relative error up to
8.4e-8 in the moments, measured by ``raudit crosscheck``, which checks the port against
the released code); BCE on logits instead of BCELoss on
sigmoid outputs (equal unless saturated); snsynth's nullable columns (raudit
tables have no missing values).
"""

from __future__ import annotations

from raudit.errors import ConfigError
from raudit.generators.base import group_tables
from raudit.generators.pategan.core.nets import PateNets
from raudit.generators.pategan.ports.base import PortPateGan
from raudit.generators.pategan.ports.smartnoise.encoding import SmartNoiseEncoder, column_plan
from raudit.generators.pategan.ports.smartnoise.nets import BLOCK_ELEMENTS, ResidualGenerator, discriminator
from raudit.generators.pategan.ports.smartnoise.options import SmartNoiseOptions
from raudit.privacy import STUDY_DELTA


class SmartNoisePateGan(PortPateGan):
    name = "smartnoise"
    description = "OpenDP SmartNoise synth PATEGAN (faithful port, bugs on)"
    default_delta = None  # upstream: 1/(N sqrt N), resolved per model in train()

    Options = SmartNoiseOptions

    def __init__(self, options: SmartNoiseOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the library's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        opts = SmartNoiseOptions.build(options, overrides, self.name).as_dict()
        super().__init__(preset=preset, device=device, dtype=dtype, **opts)

    def encoder(self, seed: int) -> SmartNoiseEncoder:
        o = self.options
        return SmartNoiseEncoder(encoding=o["encoding"], bounds=o["bounds"],
                                 preprocessor_eps=o["preprocessor_eps"], integers=o["integers"],
                                 seed=seed)

    def z_dim(self, d: int) -> int:
        return self.options["latent_dim"]

    def nets(self, d: int) -> PateNets:
        return PateNets(generator=ResidualGenerator(self.options["latent_dim"], d, self.options["binary"]),
                        student=discriminator(d), teacher=discriminator(d), block_elements=BLOCK_ELEMENTS)

    def delta_rule(self) -> float | str:
        """Upstream's 1/(N sqrt N); the paper's delta (the study's) under preset ``paper``."""
        return STUDY_DELTA if self.preset == "paper" else "1/(N sqrt N)"

    def fit_many(self, tables, *, epsilon, delta=None, seeds, columns=None, observer=None,
                 progress=None, train_options=None):
        """Tables train together only when they encode to the same layout.

        One-hot widths come from the records (snsynth fits its label encoders on
        them), so neighbouring tables may differ; each layout trains in its own call.
        """
        groups = group_tables(tables, seeds, epsilon=epsilon, delta=delta,
                              allow_nan=self.allow_nan,
                              key=lambda t: column_plan(t, self.options["encoding"]))
        out: list = [None] * len(tables)
        for plan, idx in groups.items():
            part = [tables[i] for i in idx]
            spent = self._preprocessor_spent(plan, epsilon)
            fitted = super().fit_many(
                part, epsilon=epsilon, delta=delta, seeds=[seeds[i] for i in idx],
                columns=columns, observer=observer, progress=progress,
                train_options={"preprocessor_spent": spent, **(train_options or {})})
            for i, f in zip(idx, fitted):
                f.summary_["preprocessor_eps"] = spent
                out[i] = f
        return out

    def _preprocessor_spent(self, plan, epsilon: float) -> float:
        """What snsynth subtracts from eps for the DP bounds (nothing unless bounds='dp')."""
        o = self.options
        if o["bounds"] != "dp" or not any(kind == "continuous" for kind, _ in plan):
            return 0.0
        if o["preprocessor_eps"] <= 0:
            raise ConfigError("bounds='dp' needs preprocessor_eps > 0 (snsynth: 'Transformer needs "
                              "some epsilon to infer bounds'); or use bounds=data/metadata")
        if epsilon - o["preprocessor_eps"] < 1e-2:
            raise ConfigError(f"epsilon {epsilon} minus preprocessor_eps {o['preprocessor_eps']} "
                              "leaves less than 0.01 for training (snsynth: 'Epsilon remaining is "
                              "too small!')")
        return o["preprocessor_eps"]
