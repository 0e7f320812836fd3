"""The drift chart (no JVM): a panel with nothing to draw says why inside that panel. Drawn in Chromium at 1,400 px,
the two notes of an unsketched column sat over each other at the top of the figure, since a panel without a trace
draws no axes for an annotation to be placed on."""
from __future__ import annotations

import pandas as pd
import pytest

from colstats_lab.ui.charts import history_figure

STATES = pd.DataFrame({"partition": ["ds=1", "ds=2", "ds=3"], "recorded_at": pd.to_datetime([1, 2, 3], unit="D"),
                       "write_id": [1, 2, 3], "cause": ["write", "analyze", "write"], "null_fraction": [0.0, 0.1, 0.0],
                       "ndv": [3000, 3000, 3002], "median": [None] * 3, "q1": [None] * 3, "q3": [None] * 3,
                       "psi": [None] * 3, "accurate": [True, True, False], "reason": ["", "", "a write since"]})


@pytest.mark.parametrize("along", ["partition", "recorded_at"])
def test_each_empty_panel_says_why_inside_its_own_panel(along):
    fig = history_figure(STATES, "orders.orderid", along=along)
    notes = {a.text: a for a in fig.layout.annotations if a.text.startswith("no ")}
    for row, start in [(3, "no KLL sketch kept"), (4, "no PSI")]:
        (note,) = [a for text, a in notes.items() if text.startswith(start)]
        low, high = fig.layout[f"yaxis{row}"].domain
        assert (note.xref, note.yref) == ("paper", "paper") and low < note.y < high, (row, note.y, low, high)
    assert len({round(a.y, 3) for a in notes.values()}) == 2  # apart, not over each other
