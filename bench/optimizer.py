"""What statistics do to Spark's plans, on a workload derived from TPC-DS (not TPC-DS results): DuckDB's
tpcds extension generates the data and gives the query texts (bench/tpcds.py). The same files are planned four ways:

- none: Spark-catalog tables without statistics (sizes only);
- spark: Spark-catalog tables after Spark's own ANALYZE ... FOR ALL COLUMNS;
- lab: the lab's external tables after the lab's ANALYZE, queried through `lab.sql`, which hands Spark the
  lab's statistics (a catalog table over the same files holding them);
- after another job appends a day of sales to the fact tables: spark-stale (Spark's statistics left as they
  are) against lab-fresh (the lab's refreshed by `analyze_stale`, which re-analyzes the changed tables).

Per query: the join order and join kinds of each arm against Spark's own (equal, or how they differ), the
q-error of every join by its depth (the joins below it and itself), and the runtime (adaptive execution on,
the arms interleaved, median of --runs); and each arm's ANALYZE time of all tables. `--histograms` turns
Spark's histograms on in both (the lab's from its quantile sketches, hive.stats.kll.enable).

    pip install -e '.[bench]'
    .venv/bin/python bench/optimizer.py --sf 1 --runs 3
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys

import duckdb
import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import BENCH_HOME, timed  # noqa: E402
from tpcds import generate, tables_of  # noqa: E402

from colstats_lab import Lab  # noqa: E402
from colstats_lab.plans import keeping_every_operator, plan_report  # noqa: E402

QUERIES = [3, 7, 13, 17, 19, 25, 27, 29, 64, 72, 85]  # each joins three tables or more
FACTS = {"store_sales": "ss_sold_date_sk", "catalog_sales": "cs_sold_date_sk", "web_sales": "ws_sold_date_sk"}


def children_of(operators: pd.DataFrame) -> dict[int, list[int]]:
    """Each operator's children by id, from the report's `parent` column."""
    children: dict[int, list[int]] = {}
    for row in operators.itertuples():
        if not pd.isna(row.parent):
            children.setdefault(int(row.parent), []).append(int(row.id))
    return children


def join_signature(operators: pd.DataFrame) -> tuple:
    """The plan's joins root first, each as its kind and the tables below it: order and kinds at once."""
    children = children_of(operators)
    nodes = dict(zip(operators["id"], operators["node"], strict=True))

    def tables(op: int) -> list[str]:
        if nodes[op].startswith("Scan"):
            return [nodes[op].rsplit(".", 1)[-1]]
        return [t for c in children.get(op, []) for t in tables(c)]
    return tuple((nodes[op].split("(")[-1].rstrip(")"), tuple(sorted(tables(op))))
                 for op in operators["id"] if nodes[op].startswith("Join"))


def order_difference(ours: tuple, theirs: tuple, our_leaves: dict[str, int], their_leaves: dict[str, int]) -> str:
    """How two plans' joins part: the first join of each (children before parents) that puts together tables
    no join of the other does, and the estimates of those tables' scans in each plan, which the optimizer
    ordered by."""
    def first_apart(plan: tuple, other: tuple) -> tuple[str, ...] | None:
        together = {tables for _, tables in other}
        return next((tables for _, tables in reversed(plan) if tables not in together), None)
    mine, its = first_apart(ours, theirs), first_apart(theirs, ours)
    if mine is None or its is None:
        return "the same tables joined in the same groups, below a different order of inputs"
    named = sorted(set(mine) ^ set(its)) or sorted(set(mine))
    def shown(rows: int | None) -> str:
        return "?" if rows is None else f"{rows:,}"
    figures = ", ".join(f"{t} {shown(our_leaves.get(t))} vs {shown(their_leaves.get(t))}" for t in named)
    return f"the lab's joins {' + '.join(mine)} where Spark's join {' + '.join(its)}; rows estimated (lab vs Spark's): " \
        + figures


def leaf_estimates(operators: pd.DataFrame) -> dict[str, int]:
    """Each table's rows as the optimizer estimates them where the plan reads it: the scan's parent (its
    filter, or its projection), by table."""
    nodes = dict(zip(operators["id"], operators["node"], strict=True))
    parents = dict(zip(operators["id"], operators["parent"], strict=True))
    estimates = dict(zip(operators["id"], operators["estimated_rows"], strict=True))
    out = {}
    for op, node in nodes.items():
        above = parents[op]
        if node.startswith("Scan") and not pd.isna(above) and not pd.isna(estimates[int(above)]):
            out.setdefault(node.rsplit(".", 1)[-1], int(estimates[int(above)]))
    return out


def join_q_errors(operators: pd.DataFrame) -> dict[int, list[float]]:
    """Each join's q-error by its depth: the joins at or below it."""
    children = children_of(operators)
    is_join = dict(zip(operators["id"], operators["node"].str.startswith("Join"), strict=True))
    q = dict(zip(operators["id"], operators["q_error"], strict=True))

    def joins(op: int) -> int:
        return int(is_join[op]) + sum(joins(c) for c in children.get(op, []))
    out: dict[int, list[float]] = {}
    for op, joined in is_join.items():
        if joined and not pd.isna(q[op]):
            out.setdefault(joins(op), []).append(float(q[op]))
    return out


def spark_report(spark, query: str):
    with keeping_every_operator(spark):  # as lab.explain runs it
        report, _ = plan_report(spark.sql(query), query, lambda relation: None, {}, {}, run=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--histograms", action="store_true")
    parser.add_argument("--queries", default=",".join(f"q{n}" for n in QUERIES))
    args = parser.parse_args()
    data = os.path.join(BENCH_HOME, f"tpcds-sf{args.sf:g}")
    queries = {name: text for name, text in generate(data, args.sf, QUERIES).items() if name in args.queries.split(",")}
    work = os.path.join(BENCH_HOME, "optimizer")
    shutil.rmtree(work, ignore_errors=True)
    lab = Lab(home=os.path.join(work, "lab"), spark_conf={"spark.sql.shuffle.partitions": "8",
                                                         "spark.driver.memory": "4g"})
    spark = lab.spark
    spark.conf.set("spark.sql.cbo.enabled", "true")
    spark.conf.set("spark.sql.cbo.joinReorder.enabled", "true")
    spark.conf.set("spark.sql.statistics.histogram.enabled", str(args.histograms).lower())
    lab.set("hive.stats.kll.enable", args.histograms)
    tables = tables_of(data)
    for db in ("none", "spark"):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS tpcds_{db}")
        for table in tables:
            spark.sql(f"CREATE TABLE tpcds_{db}.{table} USING parquet LOCATION '{data}/{table}'")
    lab.sql("CREATE DATABASE IF NOT EXISTS tpcds")
    lab.sql("USE tpcds")
    for table in tables:
        lab.register_external(f"tpcds.{table}", f"{data}/{table}")

    analyze = {"spark": timed(lambda: [spark.sql(f"ANALYZE TABLE tpcds_spark.{t} COMPUTE STATISTICS FOR ALL COLUMNS")
                                       .collect() for t in tables]),
               "lab": timed(lambda: [lab.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR COLUMNS") for t in tables])}
    print(f"ANALYZE of all {len(tables)} tables: Spark's own {analyze['spark']:.1f} s, the lab's {analyze['lab']:.1f} s, "
          f"lab / Spark = {analyze['lab'] / analyze['spark']:.2f} (target <= 0.6)")

    def on_spark(db: str, query: str):
        def run():
            spark.catalog.setCurrentDatabase(f"tpcds_{db}")
            spark.sql(query).collect()
        return run

    def on_lab(query: str):
        return lambda: lab.sql(query)

    explained: dict[str, float] = {}  # lab.explain(run=True)'s seconds, by query

    def measure(arms: dict) -> dict[str, dict]:
        """Per query and arm: the plan's joins, q-errors by depth, and the runtime."""
        out: dict[str, dict] = {}
        for name, query in queries.items():
            out[name] = {}
            for arm, (kind, db) in arms.items():
                try:
                    if kind == "lab":
                        report = lab.explain(query, run=True)
                    else:
                        spark.catalog.setCurrentDatabase(f"tpcds_{db}")
                        report = spark_report(spark, query)
                    out[name][arm] = {"joins": join_signature(report.operators),
                                      "q": join_q_errors(report.operators), "leaves": leaf_estimates(report.operators)}
                except Exception as error:  # a query this Spark cannot run: named, not fatal to the others
                    out[name][arm] = {"error": str(error).splitlines()[0][:160]}
            works = {arm: (on_lab(query) if kind == "lab" else on_spark(db, query)) for arm, (kind, db) in arms.items()
                     if "error" not in out[name][arm]}
            if "lab" in works:  # lab.explain(run=True) timed in the same rounds as the query it explains
                works["explain"] = lambda: lab.explain(query, run=True)
            times: dict[str, list[float]] = {arm: [] for arm in works}
            for run in works.values():  # a round untimed: the JVM's JIT and file cache warm for every arm alike
                run()
            for _ in range(args.runs):
                for arm, run in works.items():
                    times[arm].append(timed(run))
            if "explain" in times:
                explained[name] = statistics.median(times.pop("explain"))
            for arm, seconds in times.items():
                out[name][arm]["seconds"] = statistics.median(seconds)
            print(name, {arm: round(r.get("seconds", float("nan")), 2) for arm, r in out[name].items()}, flush=True)
        return out

    fresh = measure({"none": ("spark", "none"), "spark": ("spark", "spark"), "lab": ("lab", None)})
    ratios = [explained[q] / fresh[q]["lab"]["seconds"] for q in explained if "seconds" in fresh[q].get("lab", {})]
    if ratios:
        print(f"lab.explain(run=True) over the query's own run through lab.sql: geometric mean "
              f"{statistics.geometric_mean(ratios):.2f} (target <= 1.1), per query "
              + ", ".join(f"{q} {r:.2f}" for q, r in zip(explained, ratios, strict=True)))

    for fact, date_key in FACTS.items():  # another job appends the last day's sales again, as a new file
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM '{data}/{fact}/part-0.parquet' WHERE {date_key} = (SELECT max({date_key}) "
                    f"FROM '{data}/{fact}/part-0.parquet')) TO '{data}/{fact}/part-appended.parquet' (FORMAT parquet)")
    try:
        for fact in FACTS:
            spark.sql(f"REFRESH TABLE tpcds_spark.{fact}")
        refresh = timed(lambda: [lab.tables[t].analyze_stale(threshold=0.0) for t in FACTS])
        print(f"the lab's refresh of the {len(FACTS)} appended tables: {refresh:.1f} s")
        stale = measure({"spark-stale": ("spark", "spark"), "lab-fresh": ("lab", None)})
    finally:
        for fact in FACTS:
            os.remove(f"{data}/{fact}/part-appended.parquet")
    print_tables(fresh, stale)
    lab.close()


def print_tables(fresh: dict, stale: dict) -> None:
    rows, differences = [], []
    for name in fresh:
        row = {"query": name}
        own = fresh[name]["spark"].get("joins")
        for arm, result in {**fresh[name], **stale.get(name, {})}.items():
            if "error" in result:
                row[arm] = "error: " + result["error"]
                continue
            row[f"{arm} s"] = round(result["seconds"], 2)
            if arm in ("lab", "none") and own is not None:
                row[f"{arm} order"] = "=" if result["joins"] == own else "differs"
                if arm == "lab" and result["joins"] != own:
                    differences.append(f"{name}: " + order_difference(result["joins"], own, result["leaves"],
                                                                      fresh[name]["spark"]["leaves"]))
                row[f"{arm} kinds"] = "=" if sorted(k for k, _ in result["joins"]) == sorted(k for k, _ in own) \
                    else "differ"
            if arm == "lab" and own is not None:  # how far the lab's figures put the scans' filters from Spark's
                theirs = fresh[name]["spark"]["leaves"]
                ratios = [max(v, 1) / max(theirs[t], 1) for t, v in result["leaves"].items() if t in theirs]
                row["lab filters vs spark's"] = f"{max(max(r, 1 / r) for r in ratios):.2f}x" if ratios else ""
        rows.append(row)
    print(pd.DataFrame(rows).to_string(index=False))
    for line in differences:
        print("join order, lab against Spark's own, " + line)
    for arm in ("none", "spark", "lab", "spark-stale", "lab-fresh"):
        by_depth: dict[int, list[float]] = {}
        for results in list(fresh.values()) + list(stale.values()):
            for depth, qs in results.get(arm, {}).get("q", {}).items():
                by_depth.setdefault(depth, []).extend(qs)
        if by_depth:
            print(f"q-error of joins, {arm}: " + "; ".join(
                f"depth {d}: median {statistics.median(v):.2f}, p90 {float(np.percentile(v, 90)):.2f}, "
                f"max {max(v):.1f} ({len(v)})" for d, v in sorted(by_depth.items())))

    def geomean(arm: str, results: dict) -> float:
        seconds = [r[arm]["seconds"] for r in results.values() if "seconds" in r.get(arm, {})]
        return statistics.geometric_mean(seconds) if seconds else float("nan")
    print(f"runtime geometric mean: none {geomean('none', fresh):.2f} s, spark {geomean('spark', fresh):.2f} s, "
          f"lab {geomean('lab', fresh):.2f} s; lab / spark = {geomean('lab', fresh) / geomean('spark', fresh):.2f} "
          "(target <= 1.0)")
    print(f"after an appended day: spark-stale {geomean('spark-stale', stale):.2f} s, lab-fresh "
          f"{geomean('lab-fresh', stale):.2f} s")


if __name__ == "__main__":
    main()
