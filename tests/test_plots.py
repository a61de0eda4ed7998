"""Figure helpers shared by the reports."""

from __future__ import annotations

import numpy as np

from raudit.plots import eps_axis, pyplot


def test_the_eps_axis_reads_plain_numbers_at_the_plotted_epsilons():
    # issue 48: a log axis labelled the utility plot's eps as "2x10^0, 3x10^0"
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot(np.array([0.5, 1.0, 2.0, 10.0]), [0.5, 0.6, 0.7, 0.8], marker="o")
    ax.axhline(0.5)  # a reference line adds no tick
    eps_axis(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert labels == ["0.5", "1", "2", "10"]
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "epsilon"
