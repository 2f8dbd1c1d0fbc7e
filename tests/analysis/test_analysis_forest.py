"""The forest plot's cache-model legend does not cover any panel (issue 27 trial: inside the cost
panel, `loc="best"`, it sat on the deepseek and openai intervals of the smoke report)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from readbench.analysis._figures import _forest


def _m(metric, est, low, high, scale="difference"):
    return NS(metric=metric, estimate=est, ci=NS(low=low, high=high), scale=scale)


def _comparison(arm):
    costs = [_m(f"cost_usd_{cm}", 0.97, 0.26, 3.7, "ratio") for cm in ("anthropic-5m", "deepseek", "openai")]
    other = {"turns": _m("turns", 5.9, -24.5, 36.2), "read_calls": _m("read_calls", 7.6, -31.7, 46.8)}
    return NS(arm=f"{arm} @ readbench/sim-mixed", model="readbench/sim-mixed", success=_m("success", 0.0, -0.84, 0.84),
              metrics=tuple(costs), metric=other.get)


def test_the_cache_model_legend_overlaps_no_panel():
    fig = _forest((_comparison("A × off"),))
    fig.canvas.draw()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["anthropic-5m", "deepseek", "openai"]
    box = legend.get_window_extent()
    panels = [ax.get_window_extent() for ax in fig.axes]
    assert len(panels) == 4 and not any(box.overlaps(p) for p in panels)
    assert all(ax.get_legend() is None for ax in fig.axes)
