"""Runs kept: each explain(run=True) in the metastore with its operators, its query's shape and the write IDs the
statistics of each lab table were planned under; bounded oldest first; a cause that looks back on the earlier
runs of its query; a run never waits for another writer. The figures compared with are pandas' over the rows."""
from __future__ import annotations

import html
import sqlite3
import time

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.both_backends


def _shop(lab) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(4)
    sales = pd.DataFrame({"item": rng.integers(0, 50, 4000), "amount": rng.random(4000) * 100})
    items = pd.DataFrame({"item": np.arange(50), "cat": [f"c{i % 5}" for i in range(50)]})
    lab.sql("CREATE TABLE sales (item BIGINT, amount DOUBLE)")
    lab.sql("CREATE TABLE items (item BIGINT, cat STRING)")
    lab.sql("CREATE TABLE other (x BIGINT)")
    lab.tables["sales"].write(sales)
    lab.tables["items"].write(items)
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS")
    lab.sql("ANALYZE TABLE items COMPUTE STATISTICS FOR COLUMNS")
    return sales, items


def test_each_run_is_kept_with_its_operators_its_querys_shape_and_the_write_ids_it_was_planned_with(lab):
    sales, items = _shop(lab)
    query = "SELECT i.cat, count(*) FROM sales s JOIN items i ON s.item = i.item WHERE s.amount > {} GROUP BY i.cat"
    planned_under = str(lab.metastore.txns.get_valid_write_ids("default", "sales"))
    first = lab.explain(query.format(10), run=True)
    lab.set("hive.stats.column.autogather", False)
    lab.tables["sales"].write(sales.head(100))  # a write gathering none: the statistics of sales are stale now
    second = lab.explain(query.format(90), run=True)
    assert first.run_note is None and second.run_note is None and second.run_id > first.run_id

    runs = lab.runs()
    assert runs["run_id"].tolist() == [second.run_id, first.run_id]  # newest first
    assert runs["fingerprint"].nunique() == 1 and runs["query"].tolist() == [query.format(90), query.format(10)]
    assert (runs["operators"] == len(first.operators)).all() and (runs["seconds"] > 0).all()
    assert str(runs["ran_at"].dtype) == "datetime64[ns, UTC]"
    # the tables in name order
    assert runs.iloc[1]["valid_write_ids"] == f"{lab.metastore.txns.get_valid_write_ids('default', 'items')}; {planned_under}"
    assert runs.iloc[1]["statistics"] == "default.items: accurate; default.sales: accurate"
    assert "default.sales: stale" in runs.iloc[0]["statistics"]
    assert str(lab.metastore.txns.get_valid_write_ids("default", "sales")) in runs.iloc[0]["valid_write_ids"]

    # each operator as it ran, against pandas over the rows
    kept = lab.runs(operators=True)
    joined = sales[sales.amount > 10].merge(items, on="item")
    first_ops = kept[kept["run_id"] == first.run_id].set_index("id")
    join = first.operators[first.operators["node"].str.startswith("Join")].iloc[0]
    assert first_ops.loc[join["id"], "actual_rows"] == len(joined)
    assert first_ops["actual_rows"].tolist() == first.operators["actual_rows"].tolist()
    assert first_ops["node"].tolist() == first.operators["node"].tolist()

    # a table's runs: those that read it
    sales_runs = lab.tables["sales"].inspect.runs()
    assert sales_runs["run_id"].tolist() == [second.run_id, first.run_id]
    assert sales_runs.iloc[1]["valid_write_ids"] == planned_under
    assert lab.tables["other"].inspect.runs().empty

    # the table page's Runs tab lists them, the write IDs each was planned under
    from colstats_lab.workbench.dashboard import TABS, TablePage

    page = TablePage(lab, "default.sales")
    page.selected_index = TABS.index("Runs")
    shown = page.children[TABS.index("Runs")].children[0].listing.value
    assert shown.count("<tr") == 1 + 2 and html.escape(query.format(90)) in shown and planned_under in shown

    # a budget in runs: the oldest go first
    lab.set("colstats.runs.keep", 2)
    third = lab.explain("SELECT count(*) FROM other", run=True)
    assert lab.runs()["run_id"].tolist() == [third.run_id, second.run_id]
    assert lab.tables["sales"].inspect.runs()["run_id"].tolist() == [second.run_id]


@pytest.mark.sqlite_only("a SQLite file's write lock, held by another connection")
def test_a_writer_holding_the_lock_does_not_make_a_run_wait(lab):
    _shop(lab)
    holder = sqlite3.connect(lab.metastore.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.perf_counter()
        report = lab.explain("SELECT count(*) FROM sales WHERE amount > 50", run=True)
        assert time.perf_counter() - started < 30  # a write would wait 60 s for the lock
    finally:
        holder.rollback()
        holder.close()
    assert report.run_id is None and report.actual_rows is not None
    assert report.run_note == "not kept: another writer held the metastore's write lock (a query never waits for one)"
    assert lab.runs().empty


@pytest.mark.sqlite_only("the runs' cause reads the same rows on either backend")
def test_a_cause_says_what_the_earlier_runs_of_its_query_produced(lab, fact_and_dim):
    _, fact, dim, query = fact_and_dim
    first = lab.explain(query, run=True)
    join = first.operators[first.operators["node"].str.startswith("Join")].iloc[0]
    assert join["q_error"] >= 10 and "earlier" not in join["cause"] and "run(s)" not in join["cause"]
    second = lab.explain(query, run=True)
    again = second.operators.loc[second.operators["id"] == join["id"]].iloc[0]
    produced = len(fact.merge(dim, on="k")) / join["estimated_rows"]
    assert again["cause"] == (f"{join['cause']}; the last 1 run(s) of this query produced "
                              + (f"{produced:,.1f}x the estimate (median)" if produced >= 1
                                 else f"1/{1 / produced:,.1f} of the estimate (median)"))


@pytest.mark.sqlite_only("arguments are checked before the metastore is read")
def test_a_bad_limit_is_one_line_naming_it(lab):
    from colstats_lab.errors import InvalidArgument

    lab.sql("CREATE TABLE t (x BIGINT)")
    for limit in ("x", -1, 1.5, True):
        with pytest.raises(InvalidArgument) as refused:
            lab.runs(limit=limit)
        assert str(refused.value) == ("limit takes the number of runs to read (0 or more) or None for every one, "
                                      f"not {limit!r}")
    with pytest.raises(InvalidArgument):
        lab.tables["t"].inspect.runs(limit=-1)
    assert lab.runs(limit=0).empty and lab.tables["t"].inspect.runs().empty
