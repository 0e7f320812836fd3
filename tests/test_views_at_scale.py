"""The statistics view's level picker, the pruning treemap and the skew heat map on tables with more
partitions than they draw one by one: what is drawn, and that nothing is lost from the totals."""
from __future__ import annotations

import datetime as dt

import pandas as pd

from colstats_lab.metastore import Partition
from colstats_lab.metastore.rows.levels import TABLE_LEVEL, Level
from colstats_lab.pruning import PruningDecision, PruningReport
from colstats_lab.skew.report import SkewReport
from colstats_lab.ui import charts
from colstats_lab.ui.widgets import LEVEL_CHOICES

DAYS = [(dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(LEVEL_CHOICES * 3)]


def test_the_level_picker_lists_a_page_and_finds_the_rest(lab):
    lab.sql("CREATE TABLE long_history (x INT) PARTITIONED BY (ds STRING)")
    lab.metastore.catalog.add_partitions([Partition("default", "long_history", [d]) for d in DAYS])
    view = lab.views.stats("long_history")
    assert list(view.level.options) == ["(table)"] + [f"ds={d}" for d in DAYS[:LEVEL_CHOICES]]
    assert view.picker.search.layout.display is None  # more than a page: the search box shows
    view.picker.search.value = "ds=2025-03"
    march = [f"ds={d}" for d in DAYS if d.startswith("2025-03")]
    assert list(view.level.options) == ["(table)"] + march
    assert f"{len(march)} partitions hold ds=2025-03" in view.picker.found.value
    view.level.value = march[4]
    assert march[4] in view.header.value
    view.picker.search.value = "ds=2024-01-0"  # the level shown stays listed while another page is found
    assert list(view.level.options)[:2] == ["(table)", march[4]] and view.level.value == march[4]
    lab.metastore.catalog.add_partitions([Partition("default", "long_history", ["o'clock/x"])])
    view.picker.search.value = "o'clock/x"  # as typed: the name escapes it
    assert list(view.level.options)[2:] == ["ds=o%27clock%2Fx"]


def test_the_pruning_treemap_sums_what_it_does_not_draw():
    decisions = []
    for i, day in enumerate(DAYS):
        kept = i % 10 == 0
        size = 1_000 + i  # later days are larger: the largest are drawn
        decisions.append(PruningDecision(Level.PARTITION, f"ds={day}", kept, "", 10, size))
        decisions.append(PruningDecision(Level.FILE, f"ds={day}/part-0.parquet", kept, "", 10, size))
    figure = charts.pruning_treemap(PruningReport("default.t", "ds > 'x'", decisions))
    tree = figure.data[0]
    drawn = [i for i in tree.ids if i.startswith("partition:")]
    assert len(drawn) == charts.TREEMAP_PARTITIONS
    assert set(drawn) == {f"partition:ds={d}" for d in DAYS[-charts.TREEMAP_PARTITIONS:]}
    files = [i for i in tree.ids if i.startswith("file:")]
    assert len(files) == charts.TREEMAP_PARTITIONS
    undrawn = [(i, d) for i, d in enumerate(DAYS[:-charts.TREEMAP_PARTITIONS])]
    values = dict(zip(tree.ids, tree.values, strict=True))
    assert values["others:True"] == sum(1_000 + i for i, _ in undrawn if i % 10 == 0)
    assert values["others:False"] == sum(1_000 + i for i, _ in undrawn if i % 10 != 0)
    assert sum(values.values()) == sum(1_000 + i for i in range(len(DAYS)))  # files size their partitions


def test_the_skew_heat_map_shows_the_partitions_where_heavy_hitters_weigh_most():
    rows, totals = [], {}
    for i, day in enumerate(DAYS):
        share = (i % 97) / 100  # value 7's share varies; value 8 holds a tenth everywhere
        rows += [{"partition": f"ds={day}", "value": 7, "count": int(share * 1000), "share": share, "rank": 1},
                 {"partition": f"ds={day}", "value": 8, "count": 100, "share": 0.1, "rank": 2}]
        totals[f"ds={day}"] = 1000
    rows += [{"partition": TABLE_LEVEL, "value": 7, "count": 1, "share": 0.5, "rank": 1},
             {"partition": TABLE_LEVEL, "value": 8, "count": 1, "share": 0.1, "rank": 2}]
    totals[TABLE_LEVEL] = 1000 * len(DAYS)
    report = SkewReport(None, ["x"], "exact", 10, 0.02, 10, pd.DataFrame(rows), totals)
    figure = charts.shares_heatmap(report, "shares")
    heat = figure.data[0]
    assert len(heat.x) == charts.HEATMAP_PARTITIONS
    expected = sorted(range(len(DAYS)), key=lambda i: -(i % 97) / 100)[:charts.HEATMAP_PARTITIONS]
    assert set(heat.x) == {f"ds={DAYS[i]}" for i in expected}
    assert list(heat.x) == sorted(heat.x)  # in partition order
    by_day = {f"ds={d}": (i % 97) / 100 for i, d in enumerate(DAYS)}
    assert [heat.z[0][j] for j in range(len(heat.x))] == [by_day[p] for p in heat.x]
    assert set(heat.z[1]) == {0.1} and list(heat.y) == ["7", "8"]


def test_distinct_value_bars_start_at_one_so_the_smallest_ndv_shows():
    """A log axis left to itself starts near the smallest NDV, and that column's bar had no height."""
    import math

    rows = pd.DataFrame({"column": ["flag", "id", "city"], "null_fraction": [0.0, 0.0, 0.25],
                         "ndv": [4, 30_000_000, None]})
    fig = charts.null_and_ndv_figure(rows, "t")
    low, high = fig.layout.yaxis2.range
    assert low == 0  # 10 ** 0 = 1 distinct value: every bar of 2 or more has height
    assert math.log10(4) / high > 0.05  # 4 distinct values rise a visible part of the axis
    assert high >= math.log10(30_000_000)  # the largest fits
    assert fig.layout.yaxis2.dtick == 1  # ticks at 1, 10, 100, ... (left to itself: 1, 5, 21, 94, 429)
    empty = charts.null_and_ndv_figure(rows.assign(ndv=[None, None, None]), "t")
    assert empty.layout.yaxis2.range[1] == math.log10(10) * 1.05
