"""One handle per table: `lab.tables[name]` gives what release 0.1's `Lab` methods gave, completes on Tab in a
real IPython shell, and the old spellings forward with one DeprecationWarning naming the new one."""
from __future__ import annotations

import warnings

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from colstats_lab import InvalidArgument, Lab, NoSuchObjectException, deprecated
from colstats_lab.deprecated import LabDeprecationWarning
from colstats_lab.handles import TableHandle

ROWS = pd.DataFrame({"id": range(12), "x": [1, 1, 1, 2, None, 3, 1, 2, 2, None, 7, 1],
                     "note": ["a", None, "b", "a", None, "c", "a", None, "a", "b", None, None],
                     "ds": ["a"] * 6 + ["b"] * 6})


@pytest.fixture(scope="module")
def shop(spark, tmp_path_factory):
    """A lab with a partitioned table analyzed twice (history), a rule, Drill's metadata and an unpartitioned one."""
    lab = Lab(home=str(tmp_path_factory.mktemp("handles") / "lab"), spark=spark)
    lab.set("hive.stats.kll.enable", True)
    lab.set("metastore.enabled", True)  # Drill's REFRESH METADATA
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, note STRING) PARTITIONED BY (ds STRING)")
    lab.sql("CREATE DATABASE other")
    lab.sql("CREATE TABLE other.plain (v INT)")
    sales = lab.tables["sales"]
    sales.write(ROWS)
    sales.expect("x", nulls_below=0.5)
    sales.write(ROWS[ROWS.ds == "b"].assign(x=99))
    sales.analyze()
    lab.sql("ANALYZE TABLE sales REFRESH METADATA")
    yield lab
    lab.close()


def _old(lab: Lab, method: str, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabDeprecationWarning)
        return getattr(lab, method)(*args, **kwargs)


# (release 0.1's method and arguments, the same through the handle or a namespace)
PAIRS = [
    (("stats_frame", "sales"), lambda lab: lab.tables["sales"].inspect.stats()),
    (("freshness", "sales"), lambda lab: lab.tables["sales"].inspect.freshness()),
    (("freshness_basis", "sales"), lambda lab: lab.tables["sales"].freshness_basis()),
    (("staleness", "sales"), lambda lab: lab.tables["sales"].inspect.staleness()),
    (("history", "sales", "x"), lambda lab: lab.tables["sales"].inspect.history("x")),
    (("history", "sales", "note", "ds=b"), lambda lab: lab.tables["sales"].inspect.history("note", "ds=b")),
    (("across_partitions", "sales", "x"), lambda lab: lab.tables["sales"].inspect.across_partitions("x")),
    (("compare", "sales", 1), lambda lab: lab.tables["sales"].inspect.compare(1)),
    (("quartiles", "sales", "x"), lambda lab: lab.tables["sales"].inspect.quartiles("x")),
    (("expectations", "sales"), lambda lab: lab.tables["sales"].inspect.expectations()),
    (("transactions", "sales"), lambda lab: lab.tables["sales"].inspect.transactions()),
    (("metadata", "sales", "partition"), lambda lab: lab.tables["sales"].inspect.metadata("partition")),
    (("metadata_changes", "sales"), lambda lab: lab.tables["sales"].inspect.metadata_changes()),
    (("information_schema", "sales", "COLUMNS"), lambda lab: lab.tables["sales"].inspect.information_schema("COLUMNS")),
    (("find_partitions", "sales", "b"), lambda lab: (list(lab.tables["sales"].inspect.partitions("b")["partition"]),
                                                     lab.tables["sales"].inspect.partitions("b").attrs["total"])),
    (("partition", "sales", {"ds": "a"}), lambda lab: lab.tables["sales"].partition_record({"ds": "a"})),
    (("snapshot", "sales"), lambda lab: lab.tables["sales"].valid_write_ids()),
    (("stats_level", "sales", "ds=a"), lambda lab: lab.tables["sales"].stats_level("ds=a")),
    (("distribution", "sales", "x"), lambda lab: lab.tables["sales"].distribution("x")),
    (("snapshot_parts", "sales"), lambda lab: lab.tables["sales"].files()),
    (("report", "sales"), lambda lab: lab.tables["sales"].report_data()),
    (("table", "sales"), lambda lab: lab.tables["sales"].to_spark()),
    (("skew", "sales", "note"), lambda lab: lab.tables["sales"].skew("note")),
    (("group_skew", "sales", "x"), lambda lab: lab.tables["sales"].group_skew("x")),
    (("join_skew", "sales", "x", "sales", "x"), lambda lab: lab.tables["sales"].join_skew("sales", "x")),
    (("tables_frame",), lambda lab: lab.tables.overview()),
    (("autoanalyze_rounds",), lambda lab: lab.autoanalyze.rounds()),
    (("autoanalyze_queue",), lambda lab: lab.autoanalyze.queue()),
]


def _comparable(value):
    """A value as a user compares two of them: a frame's cells, a Spark DataFrame's sorted rows, a report's
    text and table, a sketch's quantiles, the rest as they print."""
    if isinstance(value, pd.DataFrame):
        return value.astype(str).to_dict("records")
    if hasattr(value, "toPandas"):
        return sorted(map(str, value.toPandas().astype(str).to_dict("records")))
    if hasattr(value, "quantiles"):
        return value.quantiles(4)
    if hasattr(value, "frame") and isinstance(value.frame, pd.DataFrame):
        return _comparable(value.frame), str(value)
    if hasattr(value, "to_pandas") and hasattr(value, "recommendation"):
        return str(value), _comparable(value.to_pandas())
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], list):
        return repr(value[0]), [str(part) for part in value[1]]
    if isinstance(value, dict) and "generated_at" in value:  # a report's data: the second it was made differs
        return {k: v for k, v in value.items() if k != "generated_at"}
    return repr(value) if not isinstance(value, (list, dict, str)) else value


@pytest.mark.parametrize("old, new", PAIRS, ids=[pair[0][0] + ("" if i < 1 or PAIRS[i - 1][0][0] != pair[0][0] else "2")
                                                 for i, pair in enumerate(PAIRS)])
def test_each_handle_figure_equals_the_old_methods(shop, old, new):
    then = _old(shop, *old)
    now = new(shop)
    assert now is not None or then is None
    assert _comparable(now) == _comparable(then)


def test_a_handles_analyze_runs_the_statement_lab_sql_runs(shop):
    """Each partition's NULLs, min and max after `handle.analyze` are pandas' over the rows Spark reads, and
    equal to what the same ANALYZE statement stores."""
    sales = shop.tables["sales"]
    result = sales.analyze(["x", "note"], partition={"ds": None})
    assert "statistics of 2 columns (x, note) for 2 partitions" in result.message
    rows = sales.to_spark().toPandas()
    stats = sales.inspect.stats().set_index(["partition", "column"])
    for ds, part in rows.groupby("ds"):
        x = stats.loc[(f"ds={ds}", "x")]
        assert int(x["nulls"]) == int(part["x"].isna().sum())
        assert (int(x["min"]), int(x["max"])) == (int(part["x"].min()), int(part["x"].max()))
        assert int(stats.loc[(f"ds={ds}", "note")]["nulls"]) == int(part["note"].isna().sum())
    assert bool(stats["accurate"].all())
    by_handle = sales.inspect.stats().drop(columns="last_analyzed").astype(str)
    by_statement = shop.sql("ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x, note")
    assert by_statement.message.split(" in ")[0] == result.message.split(" in ")[0]
    assert sales.inspect.stats().drop(columns="last_analyzed").astype(str).equals(by_handle)
    assert "files and sizes for 1 partition" in sales.analyze(partition="ds=a", noscan=True).message


def test_a_handle_refuses_bad_input_by_name(shop):
    with pytest.raises(NoSuchObjectException, match=r"table default\.slaes does not exist; did you mean sales\?"):
        shop.tables["slaes"]
    with pytest.raises(NoSuchObjectException, match="column nope"):
        shop.tables["sales"].analyze(["nope"])
    with pytest.raises(NoSuchObjectException, match="dz is not a partition key"):
        shop.tables["sales"].analyze(partition={"dz": "1"})
    with pytest.raises(InvalidArgument, match="columns are a column's name or a list of names, not 3"):
        shop.tables["sales"].analyze(3)
    with pytest.raises(InvalidArgument, match="noscan"):
        shop.tables["sales"].analyze(["x"], noscan=True)
    with pytest.raises(InvalidArgument, match="no view named 'stat'; there are"):
        shop.tables["sales"].view("stat")
    with pytest.raises(InvalidArgument, match="is not partitioned"):
        shop.tables["other.plain"].inspect.across_partitions("v")
    assert "slaes" not in shop.tables and "sales" in shop.tables and "other.plain" in shop.tables
    assert shop.tables.get("slaes") is None and shop.tables.get("sales") == shop.tables["sales"]


def test_the_mapping_lists_every_database_and_holds_names_only(shop):
    assert list(shop.tables) == ["sales", "other.plain"] and len(shop.tables) == 2
    assert repr(shop.tables).endswith(": sales, other.plain>")
    assert shop.tables.sales == shop.tables["default.sales"] == shop.tables["SALES"]
    assert isinstance(shop.tables["other.plain"], TableHandle) and shop.tables["other.plain"].name == "other.plain"
    handle = shop.tables["other.plain"]
    shop.sql("DROP TABLE other.plain")
    with pytest.raises(NoSuchObjectException, match="other.plain"):
        handle.inspect.stats()
    shop.sql("CREATE TABLE other.plain (w STRING, v INT)")  # a table of that name again: the handle reads it
    assert [c.name for c in handle.metastore_table().cols] == ["w", "v"]


def test_tab_completes_table_names_in_a_real_ipython_shell(shop):
    """Table names complete as keys under IPython's defaults; as attributes, and a handle's figures, the lab's
    namespaces and views, where completion reads `dir()` (`%config IPCompleter.use_jedi = False`)."""
    ip = InteractiveShell.instance()
    ip.user_ns.update(lab=shop, sales=shop.tables["sales"])
    use_jedi = ip.Completer.use_jedi
    try:
        _, keys = ip.complete('lab.tables["sa')
        _, other_db = ip.complete('lab.tables["oth')
        ip.Completer.use_jedi = False
        _, attributes = ip.complete("lab.tables.sa")
        _, inspected = ip.complete("sales.inspect.fre")
        _, namespaces = ip.complete("lab.autoanalyze.r")
        _, views = ip.complete("lab.views.st")
    finally:
        ip.Completer.use_jedi = use_jedi
        ip.user_ns.pop("lab", None)
        ip.user_ns.pop("sales", None)
    assert keys == ['lab.tables["sales'] and other_db == ['lab.tables["other.plain'], (keys, other_db)
    assert [match.rsplit(".", 1)[-1] for match in attributes] == ["sales"], attributes
    assert {"frequent_values", "freshness", "freshness_basis"} == {match.rsplit(".", 1)[-1] for match in inspected}, inspected
    assert {"run", "rounds"} == {match.rsplit(".", 1)[-1] for match in namespaces}, namespaces
    assert [match.rsplit(".", 1)[-1] for match in views] == ["stats"], views


def test_each_old_spelling_warns_once_with_the_new_one(shop, monkeypatch):
    monkeypatch.setattr(deprecated, "_warned", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        shop.stats_frame("sales")
        shop.stats_frame("sales")
        assert shop.metastore_path == shop.metastore.path
        shop.view_stats("sales")
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert messages == [
        "lab.stats_frame is deprecated and goes in the next release: use lab.tables[name].inspect.stats()",
        "lab.metastore_path is deprecated and goes in the next release: use lab.metastore.path",
        "lab.view_stats is deprecated and goes in the next release: use lab.views.stats(table, partition=...)"]
    assert all(w.filename == __file__ for w in caught if issubclass(w.category, DeprecationWarning))


def test_lab_keeps_the_lab_wide_verbs_only():
    public = sorted(name for name in dir(Lab) if not name.startswith("_")
                    and name not in vars(deprecated.DeprecatedLabMethods))
    # an instance's dir(), what a notebook completes, shows none of the forwarders, which still work
    lab = Lab.__new__(Lab)
    shown = sorted(name for name in dir(lab) if not name.startswith("_"))
    assert not set(shown) & deprecated.DEPRECATED_NAMES and len(deprecated.DEPRECATED_NAMES) >= 40
    assert set(public) <= set(shown) and callable(Lab.view_stats)
    assert public == ["analyze_frame", "attach", "clean", "close", "current", "explain", "get", "import_spark_stats",
                      "parse", "register_external", "reset", "resolve", "run", "runs", "set", "settings", "spark",
                      "spark_started", "sql", "start_spark_early", "stats_answer", "transaction", "txn_scope"]


# the arguments each `inspect` method needs on the shop's `sales` (a partitioned, managed Parquet table)
INSPECT_ARGUMENTS = {"history": ("x",), "across_partitions": ("x",), "compare": (1,), "frequent_values": ("note",),
                     "quartiles": ("x",), "information_schema": ("COLUMNS",)}


def test_every_inspect_method_returns_a_dataframe_and_the_objects_are_the_handles(shop, monkeypatch):
    """`inspect` is figures as DataFrames only: each of its methods returns one (`delta()`, of Delta's log, refuses
    another table by name); the objects a table is read through are the handle's, and their 0.2 spellings on `inspect`
    still answer the same, with one warning naming the new one."""
    monkeypatch.setattr(deprecated, "_warned", set())
    sales = shop.tables["sales"]
    shown = [name for name in dir(sales.inspect) if not name.startswith("_")]
    assert not {"snapshot", "partition", "files", "planned_read", "stats_level", "distribution",
                "freshness_basis"} & set(shown)
    for name in shown:
        if name == "delta":
            with pytest.raises(InvalidArgument, match="default.sales is not a Delta table"):
                getattr(sales.inspect, name)()
            continue
        value = getattr(sales.inspect, name)(*INSPECT_ARGUMENTS.get(name, ()))
        assert isinstance(value, pd.DataFrame), name
    found = sales.inspect.partitions("b")
    assert list(found["partition"]) == ["ds=b"] and found.attrs["total"] == 1
    assert len(sales.inspect.partitions(limit=1)) == 1 and sales.inspect.partitions(limit=1).attrs["total"] == 2
    for old, new, args in [("snapshot", "valid_write_ids", ()), ("partition", "partition_record", ("ds=a",)),
                           ("freshness_basis", "freshness_basis", ())]:
        with pytest.warns(LabDeprecationWarning, match=rf"inspect\.{old}\(\) is deprecated .* lab\.tables\[name\]\.{new}"):
            then = getattr(sales.inspect, old)(*args)
        assert str(then) == str(getattr(sales, new)(*args))
