"""The magics in a real IPython shell: what they return, and what the views they display contain."""
from __future__ import annotations

import collections
import os

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from ipywidgets.widgets.widget import _instances as widget_instances

from colstats_lab import Lab
from colstats_lab.metastore.rows.levels import TABLE_LEVEL
from colstats_lab.ui import format as fmt
from colstats_lab.ui.skew_view import SkewView
from colstats_lab.ui.stats_view import StatsView
from colstats_lab.ui.widgets import View

ROWS = {
    "d1": [(1, 5, "a"), (2, 5, "bb"), (3, 5, None), (4, 7, "a"), (5, None, "ccc")],
    "d2": [(6, 7, "a"), (7, 7, ""), (8, 9, "dd"), (9, 5, None)],
}


@pytest.fixture
def shell(lab, spark):
    lab.set("hive.stats.column.autogather", False)  # statistics come from the ANALYZEs under test
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, note STRING) PARTITIONED BY (ds STRING)")
    for ds, rows in ROWS.items():
        lab.tables["sales"].write(spark.createDataFrame(rows, "id bigint, x int, note string"), partition={"ds": ds})
    ip = InteractiveShell.instance()
    ip.user_ns["lab"] = lab
    ip.run_line_magic("load_ext", "colstats_lab")
    yield ip
    ip.user_ns.pop("_", None)


def _displayed_widgets(captured) -> list:
    found = []
    for output in captured.outputs:
        view = output.data.get("application/vnd.jupyter.widget-view+json")
        if view:
            found.append(widget_instances[view["model_id"]])
    return found


def _frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["id", "x", "note"], dtype=object)


def test_analyze_magic_returns_the_result_and_shows_the_stats_view(shell, lab):
    with capture_output() as captured:
        view = shell.run_cell_magic("analyze", "--lab lab",
                                    "ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x, note")
    assert shell.user_ns["_"] is view and isinstance(view, StatsView)
    assert sorted(view.result.details.partitions) == ["ds=d1", "ds=d2"]
    assert view.details is view.result.details  # the Result's attributes read through the view
    assert "Analyzed default.sales" in captured.stdout
    assert _displayed_widgets(captured) == []  # the cell's value is the view: shown once, by IPython
    everything = _frame(ROWS["d1"] + ROWS["d2"])
    x = view.frame.set_index("column").loc["x"]
    xs = [v for v in everything.x if v is not None]
    assert (x["min"], x["max"], x["nulls"], x["ndv"]) == (min(xs), max(xs), 1, len(set(xs)))
    assert bool(x["accurate"]) is True
    note = view.frame.set_index("column").loc["note"]
    lengths = [len(v) for v in everything.note if v is not None]
    assert note["max_len"] == max(lengths)
    assert note["avg_len"] == pytest.approx(sum(lengths) / len(everything))
    assert "9 rows" in view.header.value
    assert ">x<" in view.table_html.value and "accurate" in view.table_html.value
    id_row = view.frame.set_index("column").loc["id"]
    assert id_row["reason"] == "never analyzed"  # id was not in the column list
    # switching the level to one partition shows that partition's statistics
    view.level.value = "ds=d2"
    x2 = view.frame.set_index("column").loc["x"]
    assert (x2["min"], x2["max"], x2["nulls"]) == (5, 9, 0)
    assert "ds=d2" in view.header.value
    # the partition's own size and files, as on disk, not the table's
    location = lab.metastore.catalog.get_partition("default", "sales", "ds=d2").location
    data = [os.path.join(d, f) for d, _, names in os.walk(location) for f in names if not f.startswith(("_", "."))]
    assert f"{fmt.size(sum(os.path.getsize(f) for f in data))} in {len(data)} files" in view.header.value
    assert "partitions" not in view.header.value


def test_stats_view_badge_turns_when_a_partition_changes(shell, lab, spark):
    shell.run_cell_magic("analyze", "", "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x")
    lab.tables["sales"].write(spark.createDataFrame([(10, 1, "z")], "id bigint, x int, note string"), partition={"ds": "d1"})
    view = lab.views.stats("sales")
    x = view.frame.set_index("column").loc["x"]
    assert bool(x["accurate"]) is False
    assert x["reason"] == ("not accurate in 1 of 2 partitions (ds=d1): "
                           "partition changed by write 4 after the last analyze of x")  # writes 1, 2; ANALYZE 3
    view.level.value = "ds=d1"
    assert view.frame.set_index("column").loc["x"]["reason"] == "partition changed by write 4 after the last analyze of x"


def test_skew_magic_shows_top_values_per_partition(shell):
    view = shell.run_line_magic("skew", "sales.x --top 2 --lab lab")
    assert isinstance(view, SkewView) and shell.user_ns["_"] is view
    top = view.result
    for ds, rows in ROWS.items():
        counts = collections.Counter(r[1] for r in rows if r[1] is not None)  # NULL is never a skewed value
        expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
        got = top.for_partition(f"ds={ds}")
        assert list(zip(got["value"], got["count"], strict=True)) == expected
        assert top.totals[f"ds={ds}"] == len(rows)
        assert top.null_count(f"ds={ds}") == sum(r[1] is None for r in rows)
    assert view.level.value == TABLE_LEVEL
    assert list(view.rows["value"])[:1] == [5] and list(view.rows["count"])[:1] == [4]
    bars = view.figure.data[0]
    # 9 rows: 5 four times, 7 three times, 9 once (others), one NULL in its own bar
    assert list(bars.x) == ["5", "7", "(others)", "(NULL)"] and list(bars.y) == [4, 3, 1, 1]
    view.log_scale.value = True
    assert view.figure.layout.yaxis.type == "log"
    view.level.value = "ds=d2"
    assert list(view.rows["value"]) == [7, 5]


def test_bad_input_is_a_short_message_and_the_shell_goes_on(shell):
    with capture_output() as captured:
        result = shell.run_cell("%%analyze\nANALYZE TABLE sales COMPUTE STATISTIC FOR COLUMNS x")
    assert result.error_in_exec is not None
    text = captured.stdout + captured.stderr
    assert "expected STATISTICS" in text and "^" in text and "Traceback" not in text
    with capture_output() as captured:
        shell.run_cell("%%analyze\nANALYZE TABLE nosuch COMPUTE STATISTICS")
    assert "table default.nosuch does not exist" in captured.stdout + captured.stderr
    with capture_output() as captured:
        shell.run_cell("%skew sales.nocol")
    assert "column nocol does not exist in table default.sales" in captured.stdout + captured.stderr
    assert shell.run_cell("1 + 1").result == 2


def test_jupysql_queries_the_live_metastore(shell, lab):
    shell.run_cell_magic("analyze", "--no-view", "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x")
    with capture_output() as loading:  # jupysql reads [tool.jupysql] of a pyproject.toml with the toml package
        shell.run_line_magic("load_ext", "sql")
    assert "toml" not in loading.stdout + loading.stderr
    shell.run_line_magic("config", "SqlMagic.displaylimit = 0")
    shell.run_line_magic("sql", lab.metastore.url)
    result = shell.run_line_magic("sql", "SELECT PART_NAME, NUM_NULLS FROM PART_COL_STATS WHERE COLUMN_NAME = 'x' "
                                         "ORDER BY PART_NAME")
    assert [tuple(r) for r in result] == [("ds=d1", 1), ("ds=d2", 0)]


def test_views_are_usable_from_python(lab, spark):
    lab.sql("CREATE TABLE t (v INT)")
    lab.tables["t"].write(spark.createDataFrame([(1,), (1,), (2,)], "v int"))
    lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.views.stats("t")
    assert stats.level.layout.display == "none"  # no partitions: no level picker
    assert stats.frame.set_index("column").loc["v"]["ndv"] == 2
    skew = lab.views.skew("t", "v")
    assert list(zip(skew.rows["value"], skew.rows["count"], strict=True)) == [(1, 2), (2, 1)]
    assert isinstance(Lab.current(), Lab)


def test_skew_view_marks_the_recommendation_and_shows_the_scan_saved(shell):
    view = shell.run_line_magic("skew", "sales.x --top 3 --min-share 0.25 --lab lab")
    report = view.result
    bars = view.figure.data[0]
    marked = [label for label, color in zip(bars.x, bars.marker.color, strict=True) if color == "#f58518"]
    assert marked == [str(v) for v in report.recommended if str(v) in bars.x]
    assert list(view.heatmap.data[0].x) == report.partitions
    assert [t.name for t in view.scan_figure.data] == ["without list bucketing", "with list bucketing"]
    assert "ALTER TABLE `default`.`sales` SKEWED BY (`x`) ON (" in view.recommendation_html.value


def test_explain_magic_shows_the_pruning_tree_and_levels(shell, lab):
    from colstats_lab.ui.pruning_view import PruningView
    view = shell.run_line_magic("explain", "--lab lab SELECT * FROM sales WHERE ds = 'd2' AND x > 6")
    assert isinstance(view, PruningView)
    report = view.result
    treemap = view.treemap.data[0]
    colors = dict(zip(treemap.ids, treemap.marker.colors, strict=True))
    assert colors["partition:ds=d1"] == "#bab0ac" and colors["partition:ds=d2"] == "#54a24b"
    files = [d for d in report.decisions if d.level == "file"]
    assert {f"file:{d.identifier}" for d in files} <= set(treemap.ids) and len(files) >= 2
    assert all(colors[f"file:{d.identifier}"] == ("#54a24b" if d.kept else "#bab0ac") for d in files)
    d1_file = next(d for d in files if d.identifier.startswith("ds=d1/"))
    assert not d1_file.kept and "its partition is pruned" in d1_file.reason
    bars = {trace.name: dict(zip(trace.y, trace.x, strict=True)) for trace in view.levels_figure.data}
    assert bars["kept"]["file"] == report.totals("file")["bytes_kept"]
    view.pruned_only.value = True
    assert "<td>pruned</td>" in view.decisions_html.value and "<td>kept</td>" not in view.decisions_html.value


def test_refresh_metadata_in_analyze_cell_and_information_schema_from_jupysql(shell, lab):
    lab.set("metastore.enabled", True)
    with capture_output() as captured:
        view = shell.run_cell_magic("analyze", "", "ANALYZE TABLE sales COLUMNS (x, note) REFRESH METADATA 'FILE' LEVEL")
    assert "Collected / refreshed metadata for table [default.sales]" in captured.stdout
    assert view.level.options == ("TABLE", "SEGMENT", "PARTITION", "FILE") and view.level.value == "TABLE"
    view.level.value = "FILE"
    root = lab.metastore.catalog.get_table("default", "sales").location
    files = sorted(os.path.relpath(os.path.join(folder, name), root) for folder, _, names in os.walk(root)
                   for name in names if not name.startswith(("_", ".")))
    assert sorted(set(view.metadata.query("level == 'FILE'")["identifier"])) == files
    assert all(f">{f}<" in view.table_html.value for f in files) and ">note<" in view.table_html.value
    assert view.details.up_to_date is False  # the statement's Result reads through
    shell.run_line_magic("load_ext", "sql")
    shell.run_line_magic("config", "SqlMagic.displaylimit = 0")
    shell.run_line_magic("sql", lab.metastore.url)
    result = shell.run_line_magic("sql", "SELECT COLUMN_NAME, NUM_NULLS, MIN_VAL, MAX_VAL FROM INFORMATION_SCHEMA_COLUMNS "
                                         "WHERE TABLE_NAME = 'sales' ORDER BY ORDINAL_POSITION")
    rows = [r for ds in ROWS.values() for r in ds]
    assert [tuple(r) for r in result] == [
        ("id", None, None, None),  # not an interesting column
        ("x", sum(r[1] is None for r in rows), str(min(r[1] for r in rows if r[1] is not None)),
         str(max(r[1] for r in rows if r[1] is not None))),
        ("note", sum(r[2] is None for r in rows), min(r[2] for r in rows if r[2] is not None),
         max(r[2] for r in rows if r[2] is not None))]
    result = shell.run_line_magic("sql", "SELECT METADATA_TYPE, METADATA_IDENTIFIER, PARTITION_VALUE "
                                         "FROM INFORMATION_SCHEMA_PARTITIONS ORDER BY 1, 2")
    assert [tuple(r) for r in result] == [("PARTITION", "ds=d1", "d1"), ("PARTITION", "ds=d2", "d2"),
                                          ("SEGMENT", "ds=d1", "d1"), ("SEGMENT", "ds=d2", "d2")]


def test_stats_view_header_of_an_external_table_compares_its_files_with_those_analyzed(tmp_path, lab):
    from metadata_tables import build_table, make_rows, write_file

    root = str(tmp_path / "events")
    build_table(root, partitions=("d1", "d2"), files_per_partition=1, rows_per_file=20)
    lab.register_external("events", root, partition_types={"ds": "string"})
    assert "changed since analyze: never analyzed" in lab.views.stats("events", partition="ds=d1").header.value
    lab.sql("ANALYZE TABLE events PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x")
    view = lab.views.stats("events")
    assert "unknown in" not in view.header.value and "not counted for an external table" in view.header.value
    view.level.value = "ds=d1"
    assert "its files are those last analyzed" in view.header.value
    write_file(str(tmp_path / "events" / "ds=d1" / "part-9.parquet"), make_rows(9, 5))  # another job adds one
    view.refresh()
    assert "files changed since the last analyze (1 added, 0 removed, 0 rewritten)" in view.header.value
    view.level.value = "ds=d2"
    assert "its files are those last analyzed" in view.header.value


def test_a_magic_assigned_shows_nothing_and_one_ending_a_cell_is_its_output(shell):
    with capture_output() as captured:
        assigned = shell.run_cell("r = %skew sales.x --lab lab --top 2")
    assert assigned.result is None
    assert not [w for w in _displayed_widgets(captured) if isinstance(w, View)]  # Spark's progress bar only
    report = shell.user_ns["r"]
    assert isinstance(report, SkewView) and report.recommended == report.result.recommended
    assert list(report.for_partition("ds=d2")["value"]) == [7, 5]  # 7 twice, then 5 and 9 once: 5 first
    ended = shell.run_cell("%skew sales.x --lab lab --top 2")
    assert isinstance(ended.result, SkewView) and shell.user_ns["_"] is ended.result
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        _ = report.no_such_thing


def test_explain_run_magic_draws_a_join_plan_with_estimated_and_produced_rows(shell, lab):
    from colstats_lab.ui.plan_view import PlanView
    query = "SELECT a.ds, count(*) AS n FROM sales a JOIN sales b ON a.x = b.x GROUP BY a.ds"
    view = shell.run_line_magic("explain", f"--run --lab lab {query}")
    assert isinstance(view, PlanView)
    operators = view.result.operators
    joined = lab.sql("SELECT count(*) AS n FROM sales a JOIN sales b ON a.x = b.x").df["n"][0]
    assert operators.loc[operators["node"].str.startswith("Join Inner"), "actual_rows"].iloc[0] == joined
    produced = [t for t in view.figure.data if t.name == "actual rows"][0]
    assert list(produced.x) == [None if pd.isna(v) else max(int(v), 1) for v in operators["actual_rows"]]
    assert view.figure.layout.xaxis.type == "log" and "Join Inner" in view.table.value
    assert view.run_button.layout.display == "none"  # it ran: nothing more to count
    with pytest.raises(UsageError, match="expected --lab NAME or --run"):
        shell.run_line_magic("explain", "--lab")


def test_explain_as_a_cell_magic_and_config_defaults(shell, lab):
    from colstats_lab.ui.pruning_view import PruningView
    view = shell.run_cell_magic("explain", "--lab lab", "SELECT *\nFROM sales\nWHERE ds = 'd1'")
    assert isinstance(view, PruningView)
    kept = {d.identifier for d in view.decisions if d.level == "partition" and d.kept}
    assert kept == {"ds=d1"}
    with pytest.raises(UsageError, match="the query goes in the cell"):
        shell.run_cell_magic("explain", "SELECT 1", "SELECT * FROM sales")
    shell.run_line_magic("config", "ColstatsMagics.top = 1")
    shell.run_line_magic("config", "ColstatsMagics.min_share = 0.5")
    try:
        view = shell.run_line_magic("skew", "sales.x --lab lab")
        assert len(view.rows) == 1 and view.result.top == 1
        assert view.result.recommended == []  # no value holds half of the 9 rows (5 holds 4 of them)
        assert len(shell.run_line_magic("skew", "sales.x --lab lab --top 3").rows) == 3  # the line wins
        shell.run_line_magic("config", "ColstatsMagics.skew_mode = 'sometimes'")  # IPython logs the refusal
        assert shell.magics_manager.registry["ColstatsMagics"].skew_mode is None
    finally:
        shell.run_line_magic("config", "ColstatsMagics.top = 10")
        shell.run_line_magic("config", "ColstatsMagics.min_share = 0.02")


def test_a_dashboard_on_an_empty_metastore_says_how_to_start_and_builds_nothing(tmp_path, spark):
    from colstats_lab.workbench.dashboard import Dashboard

    lab = Lab(home=str(tmp_path / "mine"), spark=spark)
    try:
        status = Dashboard(lab).status.value
        assert "No tables in this metastore yet" in status and "colstats-lab register" in status
        assert lab.metastore.catalog.get_tables("default") == []
    finally:
        lab.close()


def test_figures_are_shown_as_the_column_holds_them():
    assert fmt.number(4999.998812) == "4,999.998812"  # not rounded up past the column's max
    assert fmt.number(-0.0) == "0.0" and fmt.number(float("nan")) == "NaN"
    from colstats_lab.ui.stats_view import _bound

    assert _bound(float("nan"), "") == "NaN"
