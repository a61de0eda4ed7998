"""Pinned runs: iterations, eps_hat and a checksum of the samples of a few small fits.

Recorded before the accounting refactor (issue 9) from the code as it was; they must
not move. Every PATE accountant variant is pinned through the loop in its
data-dependent regime (lam 0.3-0.5, 9 teachers), where the vote counts matter.
"""

import math

import pytest

from pinned_cases import CASES, run

NAN = math.nan
PINNED = {
    'paper': [(4, 69.11292546497025, 304.17635551733497), (5, 70.4659140017688, 124.98288827973101)],
    'borealis': [(4, 69.11292546497025, -681.0882230821363), (4, 69.11292546497025, -480.3457549043182)],
    'borealis-paper': [(4, 69.11292546497025, -681.0882230821363), (4, 64.91923841289965, -480.3457549043182)],
    'borealis-updated': [(4, 69.11292546497025, -681.0882230821363), (4, 64.91923841289965, -480.3457549043182)],
    'borealis-synthcity-index-bug': [(4, 69.11292546497025, -681.0882230821363), (4, 69.11292546497025, -480.3457549043182)],
    'borealis-fixed': [(4, 69.11292546497025, -681.0882230821363), (4, 64.91923841289962, -480.3457549043182)],
    'borealis-fixed-threshold': [(14, 61.912925464970186, -681.5295622885253), (14, 61.912925464970186, -481.6996437058158)],
    'borealis-updated-nan': [(1, NAN, -681.2568458038302), (2, 45.565680388187126, -480.0853355556281)],
    'smartnoise': [(4, 64.34971450549541, 211.0045975337772), (4, 64.34971450549541, 144.61280477049257)],
    'original': [(4, NAN, 171.02284486754297), (4, NAN, 162.8653143258294)],
    'turing': [(4, NAN, -311.6712202012489), (4, NAN, -315.77238076459753)],
}


@pytest.mark.parametrize("cid,impl,options,epsilon,delta", CASES, ids=[c[0] for c in CASES])
def test_pinned(cid, impl, options, epsilon, delta):
    got = run(impl, options, epsilon, delta)
    for (it, eps, total), (it0, eps0, total0) in zip(got, PINNED[cid]):
        assert it == it0
        assert (math.isnan(eps) and math.isnan(eps0)) or eps == pytest.approx(eps0, rel=1e-12)
        assert total == pytest.approx(total0, rel=1e-9)
