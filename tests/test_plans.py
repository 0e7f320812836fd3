"""`lab.explain` for any query: Spark's optimized plan operator by operator, its estimates beside the rows
each operator produced in one run, and the cause of an estimate that is off. Actual rows are checked against
separate Spark counts of each operator's sub-query and pandas over the files, estimates against what
Spark's own `explain(mode="cost")` prints."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.errors import InvalidArgument, ParseError, QueryError
from colstats_lab.plans import PlanReport
from colstats_lab.pruning import PruningReport


def _write_lab_tables(root: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(5)
    sales = pd.DataFrame({"item": rng.integers(0, 40, 3000), "qty": rng.integers(1, 10, 3000),
                          "ds": np.repeat(["d1", "d2", "d3"], 1000)})
    for ds, part in sales.groupby("ds"):
        os.makedirs(f"{root}/sales/ds={ds}")
        pq.write_table(pa.Table.from_pandas(part.drop(columns="ds"), preserve_index=False),
                       f"{root}/sales/ds={ds}/part-0.parquet")
    items = pd.DataFrame({"item": np.arange(50), "cat": [f"c{i % 4}" for i in range(50)]})
    os.makedirs(f"{root}/items")
    pq.write_table(pa.Table.from_pandas(items, preserve_index=False), f"{root}/items/part-0.parquet")
    return sales, items


def _by_node(report: PlanReport) -> dict[str, pd.Series]:
    """The first operator of each kind, root first."""
    out: dict[str, pd.Series] = {}
    for _, row in report.operators.iterrows():
        out.setdefault(row["node"].split(" ")[0] if not row["node"].startswith("Scan") else row["node"], row)
    return out


def _cost_rows(spark, query: str) -> int | None:
    """The root's rowCount as Spark's own explain(mode="cost") prints it (None: sizes only)."""
    text = spark.sql(query)._jdf.queryExecution().stringWithStats()
    optimized = text.split("== Optimized Logical Plan ==")[1].splitlines()[1]
    found = re.search(r"rowCount=([0-9.E+]+)", optimized)
    return None if found is None else int(float(found.group(1)))


def test_every_operator_of_a_join_produced_what_its_own_sub_query_counts(lab, tmp_path, spark):
    sales, items = _write_lab_tables(str(tmp_path / "data"))
    lab.register_external("sales", str(tmp_path / "data" / "sales"))
    lab.register_external("items", str(tmp_path / "data" / "items"))
    query = ("SELECT i.cat, sum(s.qty) AS q FROM sales s JOIN items i ON s.item = i.item "
             "WHERE s.qty > 5 GROUP BY i.cat")
    planned = lab.explain(query)
    assert type(planned) is PlanReport and planned.operators["actual_rows"].isna().all()  # nothing ran
    report = lab.explain(query, run=True)
    ops = _by_node(report)
    assert list(report.operators["id"]) == list(range(len(report.operators)))
    assert report.operators["parent"].iloc[0] is pd.NA and (report.operators["parent"].iloc[1:] >= 0).all()

    kept = sales[sales.qty > 5]
    joined = kept.merge(items, on="item")
    assert ops["Aggregate"]["actual_rows"] == joined["cat"].nunique() == len(lab.sql(query).df)
    assert ops["Join"]["actual_rows"] == len(joined)
    assert ops["Filter"]["actual_rows"] == len(kept)  # the first filter root first: sales' WHERE
    assert ops["Scan default.sales"]["actual_rows"] == len(sales)
    assert ops["Scan default.items"]["actual_rows"] == len(items)
    spark_counts = spark.sql(f"SELECT count(*) FROM parquet.`{tmp_path}/data/sales` s JOIN "
                             f"parquet.`{tmp_path}/data/items` i ON s.item = i.item WHERE s.qty > 5").first()[0]
    assert spark_counts == ops["Join"]["actual_rows"]
    # tables without accurate statistics reach Spark as files: sizes only, named as such, with why
    assert report.operators["estimated_rows"].iloc[1:].isna().all()
    assert ops["Scan default.items"]["statistics"] == ("sizes only (read as files: the lab's statistics of it are not "
                                                       "all accurate now; the lab's statistics: none)")
    assert "ANALYZE TABLE `default`.`items` COMPUTE STATISTICS FOR COLUMNS: Spark plans it with the lab's statistics " \
           "once they are accurate, with its size only until then" in report.fixes


def test_a_join_key_without_statistics_is_named_and_the_cause_goes_once_analyzed(lab, spark, fact_and_dim):
    spark_db, fact, dim, query = fact_and_dim

    report = lab.explain(query, run=True)
    join = _by_node(report)["Join"]
    assert join["actual_rows"] == len(fact.merge(dim, on="k"))
    assert join["q_error"] == pytest.approx(max(join["estimated_rows"] / join["actual_rows"],
                                                join["actual_rows"] / join["estimated_rows"]))
    assert join["q_error"] >= 10 and join["cause"] == f"join key spark_catalog.{spark_db}.dim.k without column statistics"
    assert f"ANALYZE TABLE `spark_catalog`.`{spark_db}`.`dim` COMPUTE STATISTICS FOR COLUMNS `k`" in report.fixes
    assert report.operators["estimated_rows"].iloc[0] == _cost_rows(spark, query)
    assert "join key" in report.plan_summary() and "q-error" in report.plan_summary()

    spark.sql(f"ANALYZE TABLE {spark_db}.dim COMPUTE STATISTICS FOR ALL COLUMNS")
    after = _by_node(lab.explain(query, run=True))
    assert after["Join"]["q_error"] <= 2 and after["Join"]["cause"] is None
    assert after[f"Scan spark_catalog.{spark_db}.dim"]["statistics"] == "catalog: 1,000 rows, 2 column(s)"


def test_correlated_columns_are_named_where_the_error_begins_and_carried_above(lab, spark, spark_db, cbo):
    rng = np.random.default_rng(13)
    a = rng.integers(0, 100, 10000)
    spark.createDataFrame(pd.DataFrame({"a": a, "b": a})).write.saveAsTable(f"{spark_db}.t")  # b = a
    spark.sql(f"ANALYZE TABLE {spark_db}.t COMPUTE STATISTICS FOR ALL COLUMNS")
    report = lab.explain(f"SELECT a, count(*) FROM {spark_db}.t WHERE a = 5 AND b = 5 GROUP BY a", run=True)
    ops = _by_node(report)
    assert ops["Filter"]["actual_rows"] == int((a == 5).sum())
    assert ops["Filter"]["cause"].startswith("a predicate on correlated columns")
    worst = report.worst()
    assert worst is not None and worst["node"] == "Filter"


def test_a_single_table_query_keeps_its_pruning_report_and_gains_the_operators(lab, tmp_path):
    sales, _ = _write_lab_tables(str(tmp_path / "data"))
    lab.register_external("sales", str(tmp_path / "data" / "sales"))
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS")
    report = lab.explain("SELECT count(*) FROM sales WHERE ds = 'd2' AND qty > 5", run=True)
    assert isinstance(report, PruningReport) and isinstance(report, PlanReport)
    assert report.kept("partition") == ["ds=d2"]
    assert report.actual_rows == int(((sales.ds == "d2") & (sales.qty > 5)).sum())  # from the run's metrics
    assert report.operators["node"].iloc[0] == "Aggregate" and report.operators["actual_rows"].iloc[0] == 1
    assert "pruned by the lab first" in report.operators["statistics"].dropna().iloc[0]

    # another job appends to the table: the lab says its statistics are stale where Spark reads them
    pq.write_table(pa.table({"item": [1, 2], "qty": [9, 9]}), str(tmp_path / "data" / "sales" / "ds=d1" / "more.parquet"))
    stale = lab.explain("SELECT s.item, count(*) FROM sales s JOIN sales t ON s.item = t.item GROUP BY s.item")
    assert "stale in 1 of 3 partitions" in stale.operators["statistics"].dropna().iloc[0]


def test_what_cannot_be_explained_is_named_in_one_line(lab, tmp_path):
    _write_lab_tables(str(tmp_path / "data"))
    lab.register_external("items", str(tmp_path / "data" / "items"))
    with pytest.raises(InvalidArgument, match="explain takes a query .*not a DROP statement"):
        lab.explain("DROP TABLE items")
    with pytest.raises(QueryError, match="nope"):
        lab.explain("SELECT nope FROM items JOIN items j ON items.item = j.item")
    with pytest.raises(ParseError):
        lab.explain("SELECT FROM WHERE")


def test_a_lab_join_is_planned_with_the_join_kinds_of_sparks_own_analyze_of_the_same_files(lab, spark, spark_db,
                                                                                          tmp_path, cbo):
    data = tmp_path / "data"
    rng = np.random.default_rng(17)
    for day in range(3):
        pq.write_table(pa.table({"item": rng.integers(0, 5000, 20000), "qty": rng.integers(1, 10, 20000)}),
                       _made(data / "sales" / f"ds={day}") + "/part-0.parquet")
    items = pd.DataFrame({"item": np.arange(5000), "cat": [f"c{i % 500}" for i in range(5000)],
                          "price": rng.normal(50, 10, 5000)})
    pq.write_table(pa.Table.from_pandas(items, preserve_index=False), _made(data / "items") + "/part-0.parquet")
    lab.register_external("sales", str(data / "sales"))
    lab.register_external("items", str(data / "items"))
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS")
    lab.sql("ANALYZE TABLE items COMPUTE STATISTICS FOR COLUMNS")
    for name in ("sales", "items"):  # Spark's own ANALYZE of the same files, in Spark's catalog
        spark.sql(f"CREATE TABLE {spark_db}.{name} USING parquet LOCATION '{data / name}'")  # partitions inferred
        if name == "sales":
            spark.sql(f"MSCK REPAIR TABLE {spark_db}.{name}")
        spark.sql(f"ANALYZE TABLE {spark_db}.{name} COMPUTE STATISTICS FOR ALL COLUMNS")
    query = ("SELECT i.cat, sum(s.qty) AS q FROM {db}sales s JOIN {db}items i ON s.item = i.item "
             "WHERE i.price > 75 GROUP BY i.cat")
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    # between the filtered items' estimate (about 1,200 rows of 32 bytes) and their size by the file (about 67 KB)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "50000")
    try:
        ours = lab.explain(query.format(db=""))
        theirs = lab.explain(query.format(db=f"{spark_db}."))
        lab.set("colstats.plan.statistics", False)
        as_files = lab.explain(query.format(db=""))
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)

    def joins_and_scans(report):
        nodes = list(report.operators["node"])
        return [n for n in nodes if n.startswith("Join")], [n.rsplit(".", 1)[-1] for n in nodes if n.startswith("Scan")]
    assert joins_and_scans(ours) == joins_and_scans(theirs) == (["Join Inner (BroadcastHashJoin)"], ["sales", "items"])
    assert joins_and_scans(as_files)[0] == ["Join Inner (SortMergeJoin)"]  # with the files' sizes only
    scans = ours.operators[ours.operators["node"].str.startswith("Scan")]
    assert list(scans["statistics"]) == ["the lab's: 60,000 rows, 3 column(s), accurate",
                                         "the lab's: 5,000 rows, 3 column(s), accurate"]
    assert list(scans["estimated_rows"]) == [60000, 5000]
    answer = lab.sql(query.format(db="")).df.sort_values("cat").reset_index(drop=True)
    truth = spark.sql(query.format(db=f"{spark_db}.")).toPandas().sort_values("cat").reset_index(drop=True)
    pd.testing.assert_frame_equal(answer, truth, check_dtype=False)


def _made(folder) -> str:
    os.makedirs(folder, exist_ok=True)
    return str(folder)


def test_the_text_spark_connect_reads_gives_the_operators_the_jvm_gives(spark, spark_db, cbo):
    """Over Spark Connect the plan is read from explain(mode="cost")'s text: the same operators, depths and
    estimates (to the three significant digits Spark prints) as the classic session's plan objects."""
    from colstats_lab.plans.operators import name_join_strategies, optimized_operators
    from colstats_lab.plans.remote import text_operators

    rng = np.random.default_rng(21)
    spark.createDataFrame(pd.DataFrame({"k": rng.integers(0, 1000, 20000), "v": rng.normal(size=20000)})) \
        .write.saveAsTable(f"{spark_db}.fact")
    spark.createDataFrame(pd.DataFrame({"k": np.arange(1000), "name": [f"n{i}" for i in range(1000)]})) \
        .write.saveAsTable(f"{spark_db}.dim")
    for table in ("fact", "dim"):
        spark.sql(f"ANALYZE TABLE {spark_db}.{table} COMPUTE STATISTICS FOR ALL COLUMNS")
    frame = spark.sql(f"SELECT d.name, count(*) FROM {spark_db}.fact f JOIN {spark_db}.dim d ON f.k = d.k "
                      "WHERE f.v > 1 GROUP BY d.name ORDER BY 2 DESC LIMIT 5")
    mode = spark.sparkContext._jvm.org.apache.spark.sql.execution.ExplainMode.fromString("cost")
    from_text = text_operators(frame._jdf.queryExecution().explainString(mode), {})
    from_jvm = optimized_operators(frame, lambda relation: None)
    name_join_strategies(frame, from_jvm)
    assert [(o.node, o.depth, o.parent) for o in from_text] == [(o.node, o.depth, o.parent) for o in from_jvm]
    assert [o.estimated_rows for o in from_text] == [float(f"{o.estimated_rows:.3g}") for o in from_jvm]
    assert from_text[0].node == "GlobalLimit" and from_text[0].limit == 5
    assert [o.node for o in from_text if o.kind == "Join"] == ["Join Inner (BroadcastHashJoin)"]


def test_a_join_on_a_column_of_nulls_counts_what_ran_before_it_came_up_empty(lab, tmp_path, cbo):
    """Adaptive execution replaces the plan above a stage it finds empty, and the metrics of what ran with it:
    the run leaves that rule out, so the scans and filters that ran are counted (found by hand: every key NA)."""
    for name, keys in (("a", pa.array([None] * 300, pa.int64())), ("b", pa.array(range(300), pa.int64()))):
        pq.write_table(pa.table({"Kéy": keys, "v": pa.array([None if i % 2 else float(i) for i in range(300)])}),
                       _made(tmp_path / name) + "/part-0.parquet")
        lab.register_external(name, str(tmp_path / name))
        lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR COLUMNS")
    report = lab.explain("SELECT a.v, b.v FROM a JOIN b ON a.`kéy` = b.`kéy`", run=True)
    produced = dict(zip(report.operators["node"].str.split(" (", regex=False).str[0], report.operators["actual_rows"],
                        strict=True))
    # a's one row group holds NULL keys only: the pushed `isnotnull` skips it unread, so its scan produces none
    assert produced["Scan default.a"] == 0 and produced["Scan default.b"] == 300
    assert produced["Join Inner"] == 0 and report.operators["actual_rows"].notna().all()


@pytest.fixture(scope="module")
def tpcds(tmp_path_factory):
    """Tables derived from TPC-DS at SF 0.01 (bench/tpcds.py: DuckDB's tpcds extension, the bench extra) and
    the texts of three queries of three tables or more, as Spark's SQL and as DuckDB's own."""
    spec = importlib.util.spec_from_file_location("tpcds", os.path.join(os.path.dirname(__file__), os.pardir,
                                                                        "bench", "tpcds.py"))
    assert spec is not None and spec.loader is not None
    tpcds = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tpcds)
    folder = str(tmp_path_factory.mktemp("tpcds") / "sf0.01")
    queries = tpcds.generate(folder, 0.01, [3, 7, 19])
    con = tpcds.connect()
    for table in tpcds.tables_of(folder):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{folder}/{table}/*.parquet')")
    own = dict(con.execute("SELECT 'q' || query_nr, query FROM tpcds_queries()").fetchall())
    return folder, queries, {name: len(con.execute(own[name]).fetchall()) for name in queries}


@pytest.mark.slow
def test_queries_derived_from_tpcds_count_each_operator_as_a_separate_count_of_its_sub_query(lab, spark, spark_db,
                                                                                              cbo, tpcds):
    from colstats_lab.plans import keeping_every_operator, plan_report

    folder, queries, duckdb_rows = tpcds
    tables = ["customer", "customer_address", "customer_demographics", "date_dim", "item", "promotion", "store",
              "store_sales"]
    for table in tables:  # the same files in Spark's catalog with Spark's own ANALYZE, and in the lab with its own
        spark.sql(f"CREATE TABLE {spark_db}.{table} USING parquet LOCATION '{folder}/{table}'")
        spark.sql(f"ANALYZE TABLE {spark_db}.{table} COMPUTE STATISTICS FOR ALL COLUMNS")
        lab.register_external(table, f"{folder}/{table}")
        lab.sql(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR COLUMNS")
    rows_of = {table: sum(pq.ParquetFile(f"{folder}/{table}/{name}").metadata.num_rows
                          for name in os.listdir(f"{folder}/{table}")) for table in tables}
    count_of_plan = spark.sparkContext._jvm.org.apache.spark.sql.classic.Dataset.ofRows
    for name, query in queries.items():
        report = lab.explain(query, run=True)
        ops = report.operators
        assert ops["actual_rows"].iloc[0] == duckdb_rows[name] == len(lab.sql(query).df), name
        scans = ops[ops["node"].str.startswith("Scan")]
        assert list(scans["actual_rows"]) == [rows_of[n.rsplit(".", 1)[-1]] for n in scans["node"]], name
        assert (scans["statistics"].str.startswith("the lab's: ") & scans["statistics"].str.endswith("accurate")).all()
        counted = ops.dropna(subset=["estimated_rows", "actual_rows"])
        expected = np.maximum(np.maximum(counted["estimated_rows"], 1) / np.maximum(counted["actual_rows"], 1),
                              np.maximum(counted["actual_rows"], 1) / np.maximum(counted["estimated_rows"], 1))
        np.testing.assert_allclose(counted["q_error"].astype(float), expected.astype(float))

        # Spark's own plan of the same files: each operator's rows against a separate Spark count of its sub-plan
        spark.catalog.setCurrentDatabase(spark_db)
        try:
            with keeping_every_operator(spark):
                theirs, operators = plan_report(spark.sql(query), query, lambda relation: None, {}, {}, run=True)
            assert theirs.operators["estimated_rows"].iloc[0] == _cost_rows(spark, query), name
        finally:
            spark.catalog.setCurrentDatabase("default")
        checked = 0
        for op in operators:
            if op.actual_rows is not None and op.kind in ("Join", "Filter", "Aggregate", "LogicalRelation"):
                assert count_of_plan(spark._jsparkSession, op.plan).count() == op.actual_rows, (name, op.node)
                checked += 1
        assert checked >= 3 + len([op for op in operators if op.kind == "Join"]), name
        assert operators[0].actual_rows == duckdb_rows[name]


INTERRUPTED_RUN = """
import os, signal, threading, time
from colstats_lab import Lab
lab = Lab(home={home!r}, spark_conf={{"spark.ui.enabled": "false"}})
endless = "SELECT count(*) FROM range(100000) a CROSS JOIN range(100000) b WHERE a.id + b.id < 0"
lab.explain("SELECT 1", run=True)  # Spark up before the clock starts
threading.Timer({after}, lambda: os.kill(os.getpid(), signal.SIGINT)).start()  # a notebook's stop button
started = time.perf_counter()
try:
    lab.explain(endless, run=True)
except KeyboardInterrupt:
    print("interrupted after", round(time.perf_counter() - started, 1))
time.sleep(1)
print("active jobs", lab.spark.sparkContext.statusTracker().getActiveJobsIds())
print("next", lab.explain("SELECT count(*) FROM range(10)", run=True).operators["actual_rows"].iloc[0])
lab.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("after", [0.2, 3.0])  # while its plan is read (the run's job may not have started), running
def test_an_interrupted_run_cancels_its_jobs_and_the_next_explain_runs(tmp_path, after):
    """The query runs in a thread of its own while its plan is read: stopping the cell (SIGINT) stops the
    query too, the wait for it returns at once, and nothing is left running."""
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_RUN.format(home=str(tmp_path / "lab"), after=after))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("interrupted", "active",
                                                                                            "next")))
    assert float(lines["interrupted"].split()[-1]) < 30, done.stdout
    assert lines["active"] == "jobs []", done.stdout
    assert lines["next"] == "1", done.stdout


@pytest.fixture
def sort_merge_joins(spark):
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)


def test_each_kind_of_operator_under_a_global_sort_counts_its_own_output_once(lab, spark, spark_db, sort_merge_joins):
    """A global sort's range exchange runs the stage below it once more to sample its keys, and Spark's metrics
    count that pass too: an aggregate of 5 groups showed 10. Every kind with a metric, against pandas."""
    f = pd.DataFrame({"k": np.arange(100_000) % 50, "v": np.arange(100_000)})
    d = pd.DataFrame({"k": np.arange(50), "name": [f"n{i % 5}" for i in range(50)]})
    spark.createDataFrame(f).repartition(4).write.saveAsTable(f"{spark_db}.f")
    spark.createDataFrame(d).write.saveAsTable(f"{spark_db}.d")
    joined = f.merge(d, on="k")
    small = f[f.v < 1000]
    cases = {
        f"SELECT d.name, sum(f.v) FROM {spark_db}.f f JOIN {spark_db}.d d ON f.k = d.k GROUP BY d.name ORDER BY 2 DESC":
            {"Sort": joined.name.nunique(), "Aggregate": joined.name.nunique(), "Join": len(joined)},
        f"SELECT k, count(DISTINCT v), sum(v) FROM {spark_db}.f GROUP BY k ORDER BY k":
            {"Sort": f.k.nunique(), "Aggregate": f.k.nunique()},
        f"SELECT k, count(*) c FROM {spark_db}.f GROUP BY k ORDER BY c DESC, k LIMIT 3":
            {"GlobalLimit": 3, "Aggregate": f.k.nunique()},
        f"SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) r FROM {spark_db}.f WHERE v < 1000 ORDER BY v":
            {"Sort": len(small), "Window": len(small), "Filter": len(small)},
        f"SELECT k, name, count(*) FROM {spark_db}.d GROUP BY ROLLUP(k, name) ORDER BY 1, 2":
            {"Sort": len(d.drop_duplicates()) + d.k.nunique() + 1, "Aggregate": len(d.drop_duplicates()) + d.k.nunique() + 1,
             "Expand": 3 * len(d)},
        f"SELECT k FROM (SELECT k FROM {spark_db}.f WHERE v < 10 UNION ALL SELECT k FROM {spark_db}.d) ORDER BY k":
            {"Sort": int((f.v < 10).sum()) + len(d), "Union": int((f.v < 10).sum()) + len(d)},
        f"SELECT k, x FROM {spark_db}.d LATERAL VIEW explode(array(1, 2, 3)) t AS x ORDER BY k, x":
            {"Sort": 3 * len(d), "Generate": 3 * len(d)},
    }
    for query, expected in cases.items():
        report = lab.explain(query, run=True)
        ops = _by_node(report)
        assert {kind: ops[kind]["actual_rows"] for kind in expected} == expected, query
        assert report.operators["actual_rows"].iloc[0] == spark.sql(query).count(), query


@pytest.fixture
def fixed_shuffle(spark):
    """Sort-merge joins over 8 shuffle partitions, as planned (no adaptive re-planning): each task's rows are then
    Spark's own hash partitioning of the keys."""
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.shuffle.partitions": "8",
                "spark.sql.adaptive.enabled": "false"}
    before = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    yield
    for key, value in before.items():
        spark.conf.set(key, value)


def test_each_operator_says_its_time_bytes_and_the_rows_of_each_task(lab, spark, spark_db, fixed_shuffle):
    rng = np.random.default_rng(3)
    rows = 60_000
    facts = pd.DataFrame({"k": np.where(rng.random(rows) < 0.4, 7, rng.integers(0, 1_000, rows)),
                          "v": np.arange(rows)})  # one key in 40 % of the rows
    spark.createDataFrame(facts).repartition(3).write.saveAsTable(f"{spark_db}.f")
    spark.createDataFrame(pd.DataFrame({"k": np.arange(1_000), "name": [f"n{i}" for i in range(1_000)]})) \
        .write.saveAsTable(f"{spark_db}.d")
    query = f"SELECT f.v, d.name FROM {spark_db}.f f JOIN {spark_db}.d d ON f.k = d.k"
    report = lab.explain(query, run=True)
    ops = report.operators
    join = _by_node(report)["Join"]
    # Spark's own placement of the joined rows: its hash partitioning of the key over the 8 partitions
    placed = spark.sql(f"SELECT pmod(hash(f.k), 8) AS task, count(*) AS c FROM {spark_db}.f f JOIN {spark_db}.d d "
                       "ON f.k = d.k GROUP BY 1").toPandas().set_index("task")["c"].reindex(range(8), fill_value=0)
    assert join["tasks"] == 8 and join["actual_rows"] == placed.sum() == len(facts)
    assert (join["task_rows_min"], join["task_rows_median"], join["task_rows_max"]) == \
        (placed.min(), placed.median(), placed.max())
    assert join["task_rows_max"] >= 5 * join["task_rows_median"]  # the hot key's task
    scan = ops[ops["node"].str.startswith("Scan") & ops["node"].str.endswith(".f")].iloc[0]
    files = spark.table(f"{spark_db}.f").inputFiles()
    assert scan["bytes"] == sum(os.path.getsize(f.removeprefix("file:")) for f in files)  # the files it read
    assert scan["time_s"] > 0 and scan["tasks"] >= 1
    shown = lab.views("plan", query, report=report).table.value  # the join's spread in red, as the plan view draws it
    spread = f"8 tasks, max {join['task_rows_max']:,} ({join['task_rows_max'] / join['task_rows_median']:.1f}x median)"
    assert spread.replace(" ", "\u00a0").replace(",\u00a0", ", ").replace("\u00a0(", " (") in shown
    assert "#c62828" in shown


def test_a_join_that_ran_skewed_shows_its_hot_key_and_join_skews_prediction_beside_it(lab, spark, fixed_shuffle):
    """One key in 40 % of a lab table's rows: the join's largest task is the one join_skew predicted, within 1 %,
    and the key the kept frequent items name is the one that put the rows there."""
    rng = np.random.default_rng(11)
    rows = 50_000
    facts = pd.DataFrame({"k": np.where(rng.random(rows) < 0.4, 7, rng.integers(0, 2_000, rows)),
                          "v": np.arange(rows)})
    lab.sql("CREATE TABLE facts (k BIGINT, v BIGINT)")
    lab.sql("CREATE TABLE keys (k BIGINT, name STRING)")
    for table in ("facts", "keys"):
        lab.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('colstats.frequent.items.columns'='k')")
    lab.tables["facts"].write(facts)
    lab.tables["keys"].write(pd.DataFrame({"k": np.arange(2_000), "name": [f"n{i}" for i in range(2_000)]}))
    lab.sql("ANALYZE TABLE facts COMPUTE STATISTICS FOR COLUMNS")
    lab.sql("ANALYZE TABLE keys COMPUTE STATISTICS FOR COLUMNS")
    query = "SELECT f.v, d.name FROM facts f JOIN keys d ON f.k = d.k"
    report = lab.explain(query, run=True)
    join = _by_node(report)["Join"]
    skewed = report.skewed()
    assert skewed["id"].tolist() == [join["id"]]  # the scans' tasks are even
    ran = skewed.iloc[0]
    # Spark's own placement of the joined rows, counted by a query of its own
    joined = facts.merge(pd.DataFrame({"k": np.arange(2_000)}), on="k")
    placed = spark.createDataFrame(joined[["k"]]).selectExpr("pmod(hash(k), 8) AS task").groupBy("task").count() \
        .toPandas().set_index("task")["count"].reindex(range(8), fill_value=0)
    assert ran["tasks"] == 8 and ran["task_rows_max"] == placed.max() and ran["task_rows_median"] == placed.median()
    measured = lab.tables["facts"].join_skew("keys", "k", run=True)
    assert ran["task_rows_max"] == measured.tasks["actual_rows"].max()
    assert abs(ran["predicted_task_rows"] - ran["task_rows_max"]) <= 0.01 * ran["task_rows_max"]
    assert ran["hot_keys"] == [7] and ran["predicted_times_median"] >= 5
    assert ran["prediction"].startswith("lab.tables['default.facts'].join_skew('default.keys', 'k', 'k', how='inner')")
    assert ran["prediction"].endswith("from their statistics, accurate now")
    shown = lab.views("plan", query, report=report).skew.value
    assert "Skew as it ran" in shown and f"{ran['task_rows_max']:,}" in shown


def test_a_lab_beside_the_users_own_session_plans_under_its_own_settings(tmp_path, spark, monkeypatch):
    """A notebook that made its own SparkSession first, then a Lab: the lab's session is a second one on the same
    context, not the active one. Its plan was read under the user's settings (CBO off there), so a lab table with
    a double column lost its row count from the estimate; each scan now estimates the rows pandas wrote."""
    from colstats_lab import Lab

    monkeypatch.chdir(tmp_path)
    assert spark.conf.get("spark.sql.cbo.enabled", "false") == "false"  # the user's session, as Spark starts
    items = pd.DataFrame({"item": np.arange(200), "cat": [f"c{i % 5}" for i in range(200)],
                          "price": np.arange(200) % 100 * 1.5})
    sales = pd.DataFrame({"item": np.arange(6000) % 200, "qty": np.arange(6000) % 7})
    for name, frame in (("items", items), ("sales", sales)):
        os.makedirs(name)
        frame.to_parquet(f"{name}/part-0.parquet", index=False)
    lab = Lab(home=str(tmp_path / "lab"))
    try:
        assert lab.spark is not spark
        for name in ("items", "sales"):
            lab.register_external(name, name)
            lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
        lab.set("spark.sql.cbo.enabled", True)
        report = lab.explain("SELECT i.cat, sum(s.qty) FROM sales s JOIN items i ON s.item = i.item "
                             "WHERE i.price > 75 GROUP BY i.cat")
        scans = _by_node(report)
        assert scans["Scan default.items"]["estimated_rows"] == len(items)
        assert scans["Scan default.sales"]["estimated_rows"] == len(sales)
        assert "unused" not in scans["Scan default.items"]["statistics"]
        assert pd.notna(scans["Join"]["estimated_rows"])
    finally:
        lab.close()
