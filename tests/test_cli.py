"""The command line for batch use: ANALYZE of a table or a database, a freshness check and reports, with
the exit codes a CI job reads."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from colstats_lab.cli import main as cli_main


@pytest.fixture
def shop(lab, spark, tmp_path):
    """Database shop: a partitioned managed table, an unpartitioned one and an external one whose only
    file is not Parquet (another job wrote garbage)."""
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE DATABASE shop")
    lab.sql("CREATE TABLE shop.orders (id BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING)")
    orders = lab.tables["shop.orders"]
    for ds, amounts in {"d1": [1.5, None, 7.0], "d2": [2.0, 3.0]}.items():
        orders.write(spark.createDataFrame([(i, a) for i, a in enumerate(amounts)], "id bigint, amount double"),
                     partition={"ds": ds})
    lab.sql("CREATE TABLE shop.`Odd_Näme` (v STRING)")  # quoted, capitals and non-ASCII: Hive's rule holds them
    lab.tables["shop.odd_näme"].write(spark.createDataFrame([("a",), (None,)], "v string"))
    folder = tmp_path / "landing"
    spark.createDataFrame([(1,)], "k int").write.parquet(str(folder))
    lab.register_external("shop.landing", str(folder))
    return lab, folder


def _cli(lab, *args) -> int:
    return cli_main(["--home", lab.home, *args])


def test_analyze_a_database_reports_each_table_and_fails_on_the_one_it_could_not_read(shop, capsys):
    lab, folder = shop
    for name in os.listdir(folder):
        if name.endswith(".parquet"):
            with open(folder / name, "wb") as broken:
                broken.write(b"not parquet at all")
    assert _cli(lab, "analyze", "--all", "shop") == 1
    out = capsys.readouterr().out
    assert "Analyzed 2 of 3 table(s) in shop; not analyzed: shop.landing" in out
    amount = lab.metastore.column_stats.get_partition_column_statistics("shop", "orders", "ds=d1", "amount").obj("amount")
    assert (amount.statsData.value.lowValue, amount.statsData.value.highValue, amount.statsData.value.numNulls) == (1.5, 7.0, 1)
    odd = lab.metastore.column_stats.get_table_column_statistics("shop", "odd_näme", "v").obj("v").statsData.value
    assert odd.numNulls == 1 and odd.maxColLen == 1
    landing = lab.sql("ANALYZE TABLES FROM shop COMPUTE STATISTICS").df.set_index("table").loc["shop.landing"]
    assert not landing["analyzed"] and landing["error"].startswith("cannot analyze shop.landing: ")
    assert "FAILED_READ_FILE" in landing["error"] and "\n" not in landing["error"]  # one line, no Java stack


def test_check_fails_until_every_statistic_is_accurate_and_names_the_stale_ones(shop, spark, capsys):
    lab, _ = shop
    assert _cli(lab, "check", "--db", "shop") == 1  # never analyzed
    assert "shop.orders: 0 of 4 column statistics accurate, 0 not accurate, 4 never analyzed" in capsys.readouterr().out
    assert _cli(lab, "check", "--db", "shop", "--allow-never-analyzed") == 0
    assert _cli(lab, "analyze", "shop.orders", "--partition", "ds") == 0
    capsys.readouterr()
    assert _cli(lab, "check", "shop.orders") == 0
    lab.tables["shop.orders"].write(spark.createDataFrame([(9, 9.0)], "id bigint, amount double"), partition={"ds": "d2"})
    assert _cli(lab, "check", "shop.orders") == 1
    out = capsys.readouterr().out
    assert "FAIL  shop.orders: 2 of 4 column statistics accurate, 2 not accurate" in out
    assert "ds=d2 amount: partition changed by write" in out and "ds=d1" not in out
    assert _cli(lab, "check", "shop.nosuch") == 2
    assert "table shop.nosuch does not exist" in capsys.readouterr().err


def test_bad_arguments_exit_2_with_the_problem_named(shop, capsys):
    lab, _ = shop
    assert _cli(lab, "analyze", "shop.orders", "--partition", "ds=d1") == 2
    assert "expected a value" in capsys.readouterr().err  # the spec is SQL: ds='d1'
    assert _cli(lab, "analyze", "shop.orders", "--columns", "amount,nocol") == 2
    assert "nocol" in capsys.readouterr().err
    assert _cli(lab, "analyze", "--all", "nodb") == 2
    assert "database nodb does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        _cli(lab, "analyze", "shop.orders", "--basic", "--noscan")
    assert exited.value.code == 2


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_check_and_report_run_as_commands_without_starting_spark(shop, tmp_path):
    lab, _ = shop
    lab.sql("ANALYZE TABLE shop.orders COMPUTE STATISTICS FOR ALL COLUMNS")
    out = tmp_path / "orders.json"
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": "--this-would-fail-if-spark-started"}
    run = subprocess.run([sys.executable, "-m", "colstats_lab.cli", "--home", lab.home, "report", "shop.orders",
                          str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    highs = {r["partition"]: r["max"] for r in data["statistics"] if r["column"] == "amount"}
    assert highs == {None: 7.0, "ds=d1": 7.0, "ds=d2": 3.0}
    run = subprocess.run([sys.executable, "-m", "colstats_lab.cli", "--home", lab.home, "check", "shop.orders"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and "ok  shop.orders: 4 of 4" in run.stdout, run.stdout + run.stderr


def test_register_describe_skew_and_join_skew_with_home_before_or_after_the_command(shop, tmp_path, capsys):
    lab, _ = shop
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "clicks" / "region=eu"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"userId": [1, 1, 1, 2, None], "page": ["a", "b", "a", "a", "c"]}), folder / "p.parquet")
    assert cli_main(["register", "shop.clicks", f"file://{tmp_path / 'clicks'}", "--home", lab.home]) == 0
    assert "Registered shop.clicks (userId bigint, page string; partitioned by region)" in capsys.readouterr().out

    assert cli_main(["analyze", "--home", lab.home, "shop.clicks"]) == 0
    capsys.readouterr()
    assert cli_main(["describe", "shop.clicks", "userId", "--home", lab.home]) == 0
    described = capsys.readouterr().out
    assert "userId" in described and " 1\n" in described.split("num_nulls")[1].split("\n", 1)[0] + "\n"

    assert _cli(lab, "skew", "shop.clicks", "userId", "--mode", "exact") == 0
    out = capsys.readouterr().out
    assert out.startswith("Skew of shop.clicks.userid (exact") and "5 rows" in out

    assert _cli(lab, "join-skew", "shop.clicks", "userId", "shop.orders", "id") == 0
    out = capsys.readouterr().out
    assert "Hot keys:" in out and "Largest tasks:" in out

    assert cli_main(["describe", "--home", lab.home, "shop.nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "colstats-lab: table shop.nosuch does not exist"
    assert cli_main(["register", "--home", lab.home, "shop.s3", "s3://lake/ev"]) == 2
    assert "s3" in capsys.readouterr().err


def test_execute_runs_a_notebook_in_a_kernel_and_names_a_failing_cell(tmp_path, capsys):
    import nbformat

    good = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import ipywidgets\nipywidgets.IntSlider(3)"),
                                           nbformat.v4.new_code_cell("print(6 * 7)")])
    nbformat.write(good, str(tmp_path / "good.ipynb"))
    assert cli_main(["execute", str(tmp_path / "good.ipynb"), "--output", str(tmp_path / "ran.ipynb")]) == 0
    ran = nbformat.read(str(tmp_path / "ran.ipynb"), as_version=4)
    assert ran.cells[1].outputs[0]["text"] == "42\n"
    assert "Ran 2 code cell(s)" in capsys.readouterr().out

    bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    nbformat.write(bad, str(tmp_path / "bad.ipynb"))
    assert cli_main(["execute", str(tmp_path / "bad.ipynb")]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert cli_main(["execute", str(tmp_path / "missing.ipynb")]) == 2
