"""Getting a SparkSession: embedded local[*] by default, a master URL, or a Spark Connect URL."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from pyspark.sql import SparkSession

from .errors import ColstatsError

MIN_JAVA = 17
ENV_MASTER = "COLSTATS_SPARK_MASTER"
ENV_REMOTE = "COLSTATS_SPARK_REMOTE"

# Settings for a lab's own session: no UI, few shuffle partitions (the aggregates are small),
# UTC so timestamps mean the same in every process, and no console progress bars.
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.extraJavaOptions": "-Dderby.system.home=/tmp",
    # INT96 timestamps carry no min/max in Parquet footers; micros do, so footers can serve them
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


class EngineError(ColstatsError):
    """Spark cannot start here; the message says what to install or set."""


def java_version() -> int | None:
    """The major version of the `java` Spark would start (JAVA_HOME first), or None when there is none."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def check_java() -> None:
    version = java_version()
    if version is None:
        raise EngineError(f"Java {MIN_JAVA} or newer is needed to run Spark and none was found: "
                          f"install it (Debian: apt-get install openjdk-{MIN_JAVA}-jre-headless) or set JAVA_HOME.")
    if version < MIN_JAVA:
        raise EngineError(f"Java {version} found, but Spark 4 needs Java {MIN_JAVA} or newer: "
                          f"install openjdk-{MIN_JAVA}-jre-headless or point JAVA_HOME at a newer JDK.")


def build_session(home: str, master: str | None = None, remote: str | None = None,
                  conf: dict[str, str] | None = None) -> SparkSession:
    """A session for a lab at `home`: remote (Spark Connect) if given or set in the environment,
    else a classic session on `master` (default local[*])."""
    remote = remote or os.environ.get(ENV_REMOTE)
    if remote:
        builder = SparkSession.builder.remote(remote)
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    check_java()
    # Python workers must run this interpreter, which has pandas and pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master or os.environ.get(ENV_MASTER) or "local[*]").appName("colstats_lab")
    settings = {**DEFAULT_CONF, "spark.sql.warehouse.dir": os.path.join(home, "spark-warehouse"), **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
