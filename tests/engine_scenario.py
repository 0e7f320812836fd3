"""One end-to-end scenario — write, ANALYZE, skew, pruned queries — whose results must not depend on the
engine. `run(lab)` returns plain values; run as a script it builds the lab from its arguments (a Spark
Connect URL or a master URL) and prints them as JSON, so tests can compare engines."""
from __future__ import annotations

import json
import sys

import pandas as pd
from pyspark.sql import functions as F

from colstats_lab import Lab

DAYS = ["2026-11-20", "2026-11-21", "2026-11-22"]


def rows(day_index: int) -> pd.DataFrame:
    ids = range(day_index * 1000, day_index * 1000 + 300)
    return pd.DataFrame({
        "id": list(ids),
        "x": [7 if i % 3 == 0 else (i * 31) % 97 for i in ids],  # 7 is the heavy hitter
        "amount": [None if i % 11 == 0 else i / 8 for i in ids],
        "note": [None if i % 13 == 0 else "n" * (i % 17) for i in ids],
    })


def run(lab: Lab) -> dict:
    lab.set("hive.stats.column.autogather", False)  # ANALYZE, not the writes, computes the stats here
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, amount DOUBLE, note STRING) PARTITIONED BY (ds STRING)")
    for i, day in enumerate(DAYS):
        lab.tables["sales"].write(rows(i), partition={"ds": day})
    analyzed = lab.sql("ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x, amount, note")
    described = {}
    for column in ("x", "amount", "note"):
        frame = lab.sql(f"DESCRIBE FORMATTED sales {column}").df
        info = dict(zip(frame.info_name, frame.info_value, strict=True))
        described[column] = {k: info[k] for k in ("min", "max", "num_nulls", "distinct_count", "avg_col_len",
                                                  "max_col_len", "COLUMN_STATS_ACCURATE")}
    top = lab.tables["sales"].skew("x", top=3)
    from_stats = lab.sql("SELECT count(*), min(x), max(amount) FROM sales WHERE ds >= '2026-11-21'")
    scanned = lab.sql("SELECT ds, count(*) AS n, sum(x) AS sx FROM sales WHERE ds >= '2026-11-21' AND x = 7 "
                      "GROUP BY ds ORDER BY ds")
    return {
        **plan_of_a_join(lab),
        "sales_location": lab.resolve("sales").location.removeprefix("file:"),
        "analyzed": [analyzed.details.num_rows, analyzed.details.partitions, analyzed.details.columns],
        "described": described,
        "top": top.frame[top.frame.partition != "(table)"].astype({"value": "int64"}).to_dict(orient="records"),
        "from_stats": {"answered_from": from_stats.answered_from, "rows": from_stats.df.values.tolist()},
        "scanned": {"answered_from": scanned.answered_from, "rows": scanned.df.values.tolist()},
        "partitions": lab.sql("SHOW PARTITIONS sales").df.iloc[:, 0].tolist(),
    }


def plan_of_a_join(lab: Lab) -> dict:
    """lab.explain(run=True) of a join of the lab's table with one of Spark's catalog, analyzed by Spark: `plan`,
    each operator's node, estimated rows to three significant digits (as Spark prints them over Spark Connect)
    and actual rows; `ran`, what the run measured beyond its rows (the operators timed, the bytes the scan of
    sales read, whether tasks were counted, why not) and whether the run was kept."""
    spark = lab.spark
    spark.sql("DROP TABLE IF EXISTS scenario_dim")
    spark.createDataFrame(pd.DataFrame({"x": list(range(97)), "name": [f"n{i % 10}" for i in range(97)]})) \
        .write.saveAsTable("scenario_dim")
    spark.sql("ANALYZE TABLE scenario_dim COMPUTE STATISTICS FOR ALL COLUMNS")
    spark.conf.set("spark.sql.cbo.enabled", "true")
    try:
        report = lab.explain("SELECT d.name, count(*) AS n FROM sales s JOIN scenario_dim d ON s.x = d.x "
                             "GROUP BY d.name", run=True)
    finally:
        spark.conf.set("spark.sql.cbo.enabled", "false")
        spark.sql("DROP TABLE scenario_dim")
    ops = report.operators
    return {"plan": [[row.node, None if pd.isna(row.estimated_rows) else float(f"{row.estimated_rows:.3g}"),
                      None if pd.isna(row.actual_rows) else int(row.actual_rows)] for row in ops.itertuples()],
            "ran": {"timed": ops.loc[ops["time_s"].notna(), "node"].str.split(" \\(").str[0].tolist(),
                    "sales_bytes": int(ops.loc[ops["node"] == "Scan default.sales", "bytes"].iloc[0]),
                    "tasks_counted": bool(ops["tasks"].notna().any()), "figures_note": report.figures_note,
                    "kept": report.run_id is not None and len(lab.runs()) == 1}}


def progress_of_a_job(lab: Lab) -> dict:
    """What the magics' progress line shows at the end of one two-stage job, and what it leaves registered."""
    from colstats_lab.ui.progress import SparkProgress

    with SparkProgress(lab.spark, notebook=False) as progress:
        lab.spark.range(0, 1000, numPartitions=4).groupBy((F.col("id") % 3).alias("k")).count().collect()
    return {"value": progress.bar.value, "max": progress.bar.max, "label": progress.label.value,
            "handlers_left": len(getattr(lab.spark.client, "_progress_handlers", []))}


if __name__ == "__main__":
    home, how, url = sys.argv[1:4]
    lab = Lab(home=home, **{how: url})
    result = run(lab)
    if how == "remote":
        result["progress"] = progress_of_a_job(lab)
    print(json.dumps(result, default=str))
