"""Set-up checks: a missing or too-old Java is one clear line, not a JVM stack trace."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest


def _check_java(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "colstats_lab.cli", "check-java"], env=env,
                          capture_output=True, text=True, timeout=60)


def test_missing_java_is_reported_in_one_line(tmp_path):
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-such-jdk"), "PATH": "/nonexistent"}
    out = _check_java(env)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "Java 17 or newer is needed" in lines[0] and "openjdk-17-jre-headless" in lines[0]


def test_old_java_is_reported_with_its_version(tmp_path):
    fake_home = tmp_path / "jdk8"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    out = _check_java({**os.environ, "JAVA_HOME": str(fake_home)})
    assert out.returncode == 1
    assert "Java 8 found, but Spark 4 needs Java 17 or newer" in out.stderr


def test_this_machines_java_passes():
    assert _check_java(dict(os.environ)).returncode == 0


def test_a_lab_beside_the_users_own_session_leaves_its_settings_and_views_alone(tmp_path, spark):
    from colstats_lab import Lab

    before = {key: spark.conf.get(key) for key in ("spark.sql.session.timeZone", "spark.sql.shuffle.partitions")}
    views_before = {t.name for t in spark.catalog.listTables()}  # other tests' labs use this session itself
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    lab = Lab(home=str(tmp_path / "lab"))  # no session given: one is made beside the running one
    try:
        lab.sql("CREATE TABLE t (id INT, note STRING)")
        lab.tables["t"].write(spark.createDataFrame([(1, "a"), (5, None), (3, "c")], "id INT, note STRING"))
        lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
        assert lab.sql("SELECT count(*) AS n, max(id) AS top FROM t").df.iloc[0].tolist() == [3, 5]
        assert lab.sql("SELECT note FROM t WHERE id = 3").df["note"].tolist() == ["c"]  # a scan, through a view
        assert spark.conf.get("spark.sql.session.timeZone") == "America/Los_Angeles"
        assert spark.conf.get("spark.sql.shuffle.partitions") == "7"
        assert {t.name for t in spark.catalog.listTables()} == views_before
        assert [t.name for t in lab.spark.catalog.listTables()] == ["colstats__default__t"]
        assert lab.spark is not spark and lab.spark.sparkContext is spark.sparkContext
        assert lab.spark.conf.get("spark.sql.session.timeZone") == "UTC"
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)
        lab.close()


@pytest.mark.slow
def test_a_spark_start_prints_no_jvm_notices(tmp_path):
    script = ("from colstats_lab import Lab\nimport pandas as pd\nlab = Lab(home={!r})\n"
              "lab.sql('CREATE TABLE t (x BIGINT)')\nlab.tables['t'].write(pd.DataFrame({{'x': [1, 2]}}))\n"
              "print(lab.sql('ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS').message)\n").format(str(tmp_path / "lab"))
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}  # Spark's own start, as a user's
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Analyzed default.t" in done.stdout
    assert "incubator modules" not in done.stderr and "restricted mode" not in done.stderr
