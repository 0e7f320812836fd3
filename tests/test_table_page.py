"""The dashboard's table page in Python: its tabs (freshness with the analyze button, pruning's WHERE box,
Drill metadata with its up-to-date state and INFORMATION_SCHEMA, transactions) show what was done to the
table, and only the analyze button and a chosen skew run Spark."""
from __future__ import annotations

import pandas as pd
import pytest
from lab_copies import copy_lab_home

from colstats_lab import Lab
from colstats_lab.frames import freshness_frame, transactions_frame
from colstats_lab.sql import parse
from colstats_lab.sql.lexer import quoted
from colstats_lab.ui.freshness_view import FreshnessView
from colstats_lab.ui.metadata_view import MetadataView
from colstats_lab.ui.pruning_view import PruningPanel
from colstats_lab.ui.transactions_view import TransactionsView
from colstats_lab.workbench.dashboard import TABS, Dashboard, TablePage

ROWS = {"d1": [(1, 5), (2, 5), (3, None)], "d2": [(4, 7), (5, 8)], "d3": [(6, 1)]}


@pytest.fixture(scope="module")
def events_template(tmp_path_factory, spark):
    """d1 and d2 analyzed, then a row appended to d2; d3 never analyzed; one write to d3 aborted."""
    home = tmp_path_factory.mktemp("table_page") / "template"
    lab = Lab(home=str(home), spark=spark)
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE TABLE events (id BIGINT, x INT) PARTITIONED BY (ds STRING)")
    for ds, rows in ROWS.items():
        lab.tables["events"].write(spark.createDataFrame(rows, "id bigint, x int"), partition={"ds": ds})
    lab.sql("ANALYZE TABLE events PARTITION (ds = 'd1') COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.sql("ANALYZE TABLE events PARTITION (ds = 'd2') COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["events"].write(spark.createDataFrame([(7, 9)], "id bigint, x int"), partition={"ds": "d2"})
    with pytest.raises(RuntimeError):
        with lab.transaction() as txn:
            lab.tables["events"].write(spark.createDataFrame([(8, 2)], "id bigint, x int"), partition={"ds": "d3"}, txn=txn)
            raise RuntimeError("the job failed after writing")
    lab.close()
    return home


@pytest.fixture
def events(events_template, tmp_path, spark):
    """A copy of the template's lab for each test (they analyze and write)."""
    copy_lab_home(events_template, tmp_path / "lab")
    lab = Lab(home=str(tmp_path / "lab"), spark=spark)
    lab.set("hive.stats.column.autogather", False)
    yield lab
    lab.close()


def test_freshness_frame_says_accurate_stale_and_never_analyzed_per_cell(events):
    frame = freshness_frame(events.metastore, events.resolve("events")).set_index(["partition", "column"])
    assert frame.loc[("ds=d1", "x"), "accurate"] is True and frame.loc[("ds=d1", "id"), "accurate"] is True
    assert frame.loc[("ds=d2", "x"), "accurate"] is False  # the append after its ANALYZE
    assert frame.loc[("ds=d3", "x"), "accurate"] is None and frame.loc[("ds=d3", "x"), "reason"] == "never analyzed"
    assert len(frame) == 3 * 2


def test_freshness_view_analyzes_exactly_the_stale_partitions_and_redraws(events):
    view = FreshnessView(events, "events")
    heat = view.figure.data[0]
    assert list(heat.y) == ["ds=d1", "ds=d2", "ds=d3"] and list(heat.x) == ["id", "x"]
    assert [list(row) for row in heat.z] == [[2, 2], [1, 1], [0, 0]]  # accurate, not accurate, never analyzed
    assert "2 of 6 statistics accurate, 2 not, 2 never analyzed" in view.header.value
    # d2 (changed) and d3 (never analyzed, changed by an unknown amount); d1 is accurate
    assert view.button.description == "Analyze 2 partitions" and not view.button.disabled
    view.threshold.value = 0.9  # d2 changed by 1 row of 3: below 90 %; d3 stays (unknown)
    assert view.button.description == "Analyze 1 partition"
    view.threshold.value = 0.0
    view.button.click()
    assert view.result.details.analyzed == ["ds=d2", "ds=d3"]
    assert [list(row) for row in view.figure.data[0].z] == [[2, 2], [2, 2], [2, 2]]
    assert view.button.disabled and view.button.description == "Nothing to analyze"
    stats = events.metastore.column_stats.get_partitions_statistics("default", "events", ["ds=d2"], ["x"])["ds=d2"]
    assert stats.obj("x").statsData.longStats.highValue == 9  # the appended row counted


def test_transactions_frame_lists_each_writer_its_state_and_the_statistics_it_left(events):
    frame = transactions_frame(events.metastore, events.resolve("events"))
    assert list(frame["write_id"]) == sorted(frame["write_id"], reverse=True)  # newest first
    by_write = frame.set_index("write_id")
    aborted = by_write.loc[by_write["state"] == "aborted"]
    assert len(aborted) == 1 and not aborted["valid_for_readers"].iloc[0]
    assert aborted["operations"].iloc[0] == "insert" and aborted["partitions"].iloc[0] == 1
    committed = by_write[by_write["state"] == "committed"]
    assert committed["valid_for_readers"].all() and len(committed) == 3 + 2 + 1  # writes, ANALYZEs, append
    # d1's statistics were left by its ANALYZE; d2's statistics writer is the append (not accurate)
    d1 = events.metastore.catalog.get_partition("default", "events", "ds=d1").writeId
    assert by_write.loc[d1, "operations"] == "statistics" and by_write.loc[d1, "stats_writer_of"] == "1 partition(s)"
    view = events.views("transactions", "events")
    assert isinstance(view, TransactionsView)
    valid = events.metastore.txns.get_valid_write_ids("default", "events")
    assert str(valid) in view.header.value and "1 aborted" in view.header.value
    assert view.table_html.value.count("<tr>") == len(frame) + 1


def test_pruning_panel_says_where_the_answer_comes_from_and_names_a_bad_filter(events):
    events.sql("ANALYZE TABLE events PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    panel = PruningPanel(events, "default.events")
    assert "from <b>statistics, no scan</b>" in panel.answer.value  # count(*) of the whole table
    panel.where.value = "ds = 'd2'"
    assert "from <b>statistics, no scan</b>" in panel.answer.value
    kept = {d.identifier for d in panel.view.result.decisions if d.level == "partition" and d.kept}
    assert kept == {"ds=d2"}
    panel.where.value = "x = 5"
    assert "<b>a Spark scan of the kept files</b>" in panel.answer.value and "not a partition key" in panel.answer.value
    panel.where.value = "x = = 5"
    (refused,) = panel.report_area.children
    assert panel.answer.value == "" and "^" in refused.value and "x = = 5" in refused.value


def test_metadata_view_says_whether_the_metadata_is_up_to_date_and_shows_information_schema(events, spark):
    events.set("metastore.enabled", True)
    events.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL")
    view = MetadataView(events, "events")
    assert "up to date: the files are those the last REFRESH METADATA read" in view.header.value
    columns = view.schema_rows["COLUMNS"]
    assert list(columns["COLUMN_NAME"]) == ["id", "x"] and ">x<" in view.schema_html.value
    view.schema_view.value = "PARTITIONS"
    assert ">ds=d3<" in view.schema_html.value
    events.tables["events"].write(spark.createDataFrame([(9, 9)], "id bigint, x int"), partition={"ds": "d1"})
    assert "outdated: 1 file(s) added or rewritten and 0 removed" in MetadataView(events, "events").header.value
    changes = events.tables["events"].inspect.metadata_changes()
    assert list(changes["change"]) == ["added or rewritten"] and "/ds=d1/" in changes["file"].iloc[0]


def test_table_page_builds_each_tab_when_opened_and_refusals_are_one_line(events):
    page = TablePage(events, "default.events")
    assert list(page.titles) == list(TABS)
    assert [bool(tab.children) for tab in page.children] == [True] + [False] * (len(TABS) - 1)
    page.selected_index = TABS.index("Metadata")  # no REFRESH METADATA yet: said in grey, not refused in red
    shown = page.children[TABS.index("Metadata")].children[0].header.value
    assert "no metadata yet: ANALYZE TABLE `default`.`events` REFRESH METADATA gathers it" in shown
    assert "colstats-muted" in shown and "#c62828" not in shown
    changes = events.tables["events"].inspect.metadata_changes()
    assert changes.empty and list(changes.columns) == ["file", "change"] and not changes.attrs["refreshed"]
    page.selected_index = TABS.index("Drift")
    drift = page.children[TABS.index("Drift")].children[0]
    # a partitioned table: each partition's latest kept state, the one another job's file made stale flagged
    assert list(drift.result["partition"]) == ["ds=d1", "ds=d2"] and list(drift.result["accurate"]) == [True, False]
    assert ("each one's latest kept state, 2 of 3 partitions (the others have no kept state) (1 not accurate now"
            in drift.header.value)
    notes = [a.text for a in drift.figure.layout.annotations]
    assert any(n.startswith("no KLL sketch kept") for n in notes)  # the empty median panel says why
    page.selected_index = TABS.index("Skew")
    assert page.column.value.startswith("(pick a column") and page.skew_area.children == ()
    events.sql("CREATE TABLE `plain_t` (v INT)")  # an unpartitioned table beside partitioned ones
    events.tables["plain_t"].write(pd.DataFrame({"v": [1, None]}))
    dashboard = Dashboard(events)
    assert "metastore " + events.metastore.path in dashboard.title.value
    assert "<td>default.plain_t</td><td>managed</td><td class=\"num\"></td>" in dashboard.landing.value
    dashboard.picker.value = "default.events"
    assert isinstance(dashboard.page, TablePage)


def test_backquoted_names_read_back_with_a_doubled_backquote():
    (stmt,) = parse(f"ANALYZE TABLE {quoted('odd db.we`ird t')} COMPUTE STATISTICS")
    assert (stmt.table.db, stmt.table.name) == ("odd db", "we`ird t")
