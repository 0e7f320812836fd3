"""`%load_ext colstats_lab` starts Spark in the background, in real kernels: the first magic takes the
session started for it, and a Lab asking for another home or driver JVM gets a session of its own."""
from __future__ import annotations

import os

import pytest
from jupyter_client.manager import start_new_kernel

pytestmark = pytest.mark.slow  # the full lane only: real kernels, each starting Spark


@pytest.fixture
def kernel(tmp_path):
    env = {**os.environ, "COLSTATS_HOME": str(tmp_path / "default-lab"), "COLSTATS_SPARK_PRESTART": "1",
           "PLOOMBER_STATS_ENABLED": "false"}
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def run(client, code: str) -> str:
    """Runs `code` in the kernel; returns what it printed. A cell that raises fails the test."""
    printed, errors = [], []

    def collect(msg):
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            errors.append("\n".join(msg["content"]["traceback"]))

    reply = client.execute_interactive(code, timeout=300, output_hook=collect)
    assert reply["content"]["status"] == "ok", "".join(errors)
    return "".join(printed)


WAIT_FOR_START = """
from colstats_lab import engine
start = engine._background
assert start is not None and start.thread.name == "colstats-spark-start"
start.thread.join(240)
print(start.error)
"""

TABLE = """
import pandas as pd

lab.sql("CREATE TABLE t (x INT)")
lab.tables["t"].write(pd.DataFrame({"x": [3, 1, 2, 2, None]}))
"""

COLUMN_STATS = """
stats = dict(lab.sql("DESCRIBE FORMATTED t x").df.values)
print(stats["min"], stats["max"], stats["num_nulls"], stats["distinct_count"])
"""


def test_the_first_magic_takes_the_session_started_at_load_ext(kernel, tmp_path):
    run(kernel, "%load_ext colstats_lab")
    assert run(kernel, WAIT_FOR_START).strip() == "None"
    run(kernel, "from colstats_lab import Lab\nlab = Lab()" + TABLE)  # $COLSTATS_HOME: the settings started
    run(kernel, "%%analyze --no-view\nANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS x")
    assert run(kernel, "print(lab.spark is start.session)").strip() == "True"
    assert run(kernel, COLUMN_STATS).split() == ["1", "3", "1", "3"]  # min, max, NULLs, distinct of 3, 1, 2, 2, NULL


def test_a_lab_with_other_settings_gets_its_own_session_and_jvm(kernel, tmp_path):
    run(kernel, "%load_ext colstats_lab")
    assert run(kernel, WAIT_FOR_START).strip() == "None"
    first_jvm = run(kernel, "print(start.session.sparkContext._jvm.java.lang.ProcessHandle.current().pid())")
    other = tmp_path / "other-lab"
    run(kernel, f"from colstats_lab import Lab\nlab = Lab(home={str(other)!r}, "
                "spark_conf={'spark.driver.memory': '600m'})" + TABLE)
    jvm = "lab.spark.sparkContext._jvm"
    assert run(kernel, "print(lab.spark is start.session, start.session.sparkContext._jsc is None)").split() == \
        ["False", "True"]  # the session started for the default lab was stopped
    assert run(kernel, f"print({jvm}.java.lang.ProcessHandle.current().pid())") != first_jvm
    heap = float(run(kernel, f"print({jvm}.java.lang.Runtime.getRuntime().maxMemory() / 2**20)"))
    assert heap <= 600  # the JVM was started again with the lab's driver memory
    warehouse = run(kernel, "print(lab.spark.conf.get('spark.sql.warehouse.dir'))").strip()
    assert warehouse.endswith(str(other / "spark-warehouse"))
    run(kernel, "%%analyze --no-view\nANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS x")
    assert run(kernel, COLUMN_STATS).split() == ["1", "3", "1", "3"]  # min, max, NULLs, distinct of 3, 1, 2, 2, NULL
