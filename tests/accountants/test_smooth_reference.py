"""raudit's smooth-sensitivity pieces against the worked examples of the paper's reference
release (tensorflow/privacy, research/pate_2018/smooth_sensitivity_test.py: its
``answer`` arrays, numbers only; the code here is raudit's).

The reference returns, for d = 0..k-1, the largest local sensitivity at EXACTLY distance d
(for GNMax: along Algorithm 4-5's walk); :func:`raudit.accountants.smooth.ls_threshold`
returns the largest within distance <= d (the ball of the smooth-sensitivity definition).
The two give the same discounted max, and the running max of the reference's array is
raudit's threshold array; the GNMax arrays are the same walk and compare one to one.
"""

from __future__ import annotations

import numpy as np
import pytest

from raudit.accountants.smooth import ls_gnmax, ls_threshold, smooth_sensitivity

RTOL = 1e-8  # the reference test's own tolerance (np.allclose, rtol=1e-8, atol=0)


def test_gnmax_local_sensitivity_going_right():
    # counts (10, 0, 0), k = 10, sigma 0.5, order 1.5: a unanimous vote walks toward the plateau
    want = np.array([3.13503646e-17, 1.60178280e-08, 5.90681786e-03] + [5.99981308e+00] * 7)
    got = ls_gnmax([10, 0, 0], 0.5, 1.5)
    assert got.shape == (11,)  # d = 0..k; the reference stops at k - 1
    np.testing.assert_allclose(got[:10], want, rtol=1e-7, atol=0)  # printed to 9 digits


def test_gnmax_local_sensitivity_going_left():
    # counts (1000, 500, 300, 200, 0), k = 2000, sigma 250, order 10: q in the flat range
    want = np.array([0.0] * 298 + [2.77693450548e-7, 2.10853979548e-6] + [2.73113623988e-6] * 1700)
    got = ls_gnmax([1000, 500, 300, 200, 0], 250.0, 10.0)
    np.testing.assert_allclose(got[:2000], want, rtol=1e-9, atol=1e-30)


THRESHOLD_CASES = [  # (threshold, reference answer) for counts (20, 10, 0), k = 30, sigma 2, order 10
    (16, [0] * 3 + [1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
                    9.01543247e-02, 1.16054002e-01, 1.42180452e-01, 1.42180452e-01,
                    1.48454129e-04, 1.47826870e-02, 3.94153241e-02, 6.45775697e-02,
                    9.01543266e-02, 1.16054000e-01, 1.42180452e-01, 1.68302106e-01,
                    1.93127860e-01] + [0] * 10),
    (2, [1.60212079e-01, 2.07021132e-01, 2.07021132e-01, 1.93127860e-01, 1.68302106e-01,
         1.42180452e-01, 1.16054002e-01, 9.01543247e-02, 6.45775697e-02, 3.94153241e-02,
         1.47826870e-02, 1.48454129e-04] + [0] * 18),
    (50, [1.35750725752e-19, 1.88990500499e-17, 2.05403154065e-15, 1.74298153642e-13,
          1.15489723995e-11, 5.97584949325e-10, 2.41486826748e-08, 7.62150641922e-07,
          1.87846248741e-05, 0.000360973025976, 0.000360973025976, 2.76377015215e-50,
          1.00904975276e-53, 2.87254164748e-57, 6.37583360761e-61, 1.10331620211e-64,
          1.48844393335e-68, 1.56535552444e-72, 1.28328011060e-76, 8.20047697109e-81]
     + [0] * 10),
]


@pytest.mark.parametrize("threshold,answer", THRESHOLD_CASES, ids=["high", "low", "above-k"])
def test_threshold_local_sensitivity_matches_the_reference(threshold, answer):
    exact_d = np.array(answer, dtype=float)
    got = ls_threshold(20, 30, float(threshold), 2.0, 10.0)
    np.testing.assert_allclose(got[:30], np.maximum.accumulate(exact_d), rtol=1e-7, atol=1e-300)
    for beta in (0.0, 0.01, 0.1, 1.0):  # the released quantity is the same
        assert smooth_sensitivity(got, beta) == pytest.approx(smooth_sensitivity(exact_d, beta),
                                                              rel=1e-7)


# core_test.py of the same release: hand-calculated -log q0 per (sigma, order), sigma-major;
# below q0 (q halved three times) the bound decreases strictly, above it (q0 + 0.1 .. 0.4)
# the RDP is the value at q0 (the data-independent one).
NEG_LOGQ0 = [2.8, 2.6, 427, None, 4.8, 4.0, 4.7, 275, 9.6, 8.8, 6.0, 4, 12, 11.2, 8.6, 6.4]


@pytest.mark.parametrize("i", [i for i, v in enumerate(NEG_LOGQ0) if v is not None])
def test_gnmax_rdp_is_data_dependent_below_the_reference_q0_and_flat_above(i):
    from raudit.accountants.gnmax import rdp_gnmax

    sigma, order = [1.5, 15, 1500, 15000][i // 4], [1.1, 2.5, 32, 250][i % 4]
    lq0 = -NEG_LOGQ0[i]

    def rdp(lq):
        return float(rdp_gnmax(np.array([lq]), sigma, [order])[0, 0])

    below = [rdp(lq0 - np.log(2.0 ** j)) for j in range(4)]
    assert all(a > b for a, b in zip(below, below[1:]))
    for extra in (0.1, 0.2, 0.3, 0.4):
        assert rdp(np.log(np.exp(lq0) + extra)) == rdp(lq0)
