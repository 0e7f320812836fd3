"""Cheaper JVMs for the processes the suite starts (CLI runs, workers, kernels, Voila): each starts Spark for a
few commands, and starting it is most of their CPU. Two JVM settings cut it, both for the suite's processes only,
never the lab's own default:

- class-data sharing: Spark's classes, parsed and verified once into an archive of this machine's JVM and
  PySpark (made in the background when the session starts, kept under tests/artifacts for the next session);
- C1 alone and the serial collector: a run of seconds never repays C2's compiler threads or G1's.

Measured on this 2-core machine, a process that starts a lab, writes a partition and ANALYZEs it: 19-24 CPU-s and
12-15 s plainly, 7-9 CPU-s and 6-8 s with both. A JVM that finds no archive (the first minute of a first session)
starts as it would without one, silently."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading

ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts", "jvm")
# what the lab's default conf sets as the driver's options, which --driver-java-options replaces
LAB_DRIVER_OPTIONS = "-Dderby.system.home=/tmp"
SHORT_RUN_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# an archive another JVM or classpath cannot use is skipped; these keep the JVM from saying so on stdout
QUIET_SHARING = "-Xlog:cds=off -Xlog:cds+dynamic=off"

# what the archive is made from: the classes a typical process of the suite loads
WORKLOAD = textwrap.dedent("""
    import os
    import sys
    import pandas as pd
    from pyspark import SparkContext
    from colstats_lab import Lab
    lab = Lab(home=sys.argv[1], master="local[1]")
    lab.sql("CREATE TABLE t (v INT, w STRING, x DOUBLE) PARTITIONED BY (d STRING)")
    lab.tables["t"].write(pd.DataFrame({"v": [1, 2, None], "w": ["a", None, "c"], "x": [0.5, None, 2.0]}),
                          partition={"d": "x"})
    lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["t"].skew("w")
    lab.tables["t"].to_spark().toPandas()
    gateway = SparkContext._gateway.proc
    gateway.stdin.close()  # the JVM exits at its input's end, and writes the archive as it exits
    gateway.wait(timeout=300)
    os._exit(0)  # nothing left to stop: the JVM is gone
""")


def archive_path() -> str:
    """The archive for this interpreter's PySpark and the JVM on the PATH (or JAVA_HOME)."""
    import pyspark

    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    key = "|".join([sys.prefix, pyspark.__version__, os.path.realpath(java or "java")])
    return os.path.join(ARTIFACTS, f"spark-{hashlib.sha1(key.encode()).hexdigest()[:12]}.jsa")


def submit_args(sharing: str) -> str:
    """PYSPARK_SUBMIT_ARGS for a short-lived process's JVM, with `sharing` its class-data sharing option."""
    options = " ".join([sharing, QUIET_SHARING, SHORT_RUN_OPTIONS, LAB_DRIVER_OPTIONS])
    return f"--driver-java-options '{options}' pyspark-shell"


def short_run_submit_args(archive: str) -> str:
    return submit_args(f"-XX:SharedArchiveFile={archive}")


def make_archive_in_background(archive: str) -> threading.Thread | None:
    """Starts making `archive` unless it exists; it appears whole (written aside, then renamed) or not at all."""
    if os.path.exists(archive):
        return None
    os.makedirs(os.path.dirname(archive), exist_ok=True)
    thread = threading.Thread(target=_make_archive, args=(archive,), daemon=True, name="jvm-archive")
    thread.start()
    return thread


def _make_archive(archive: str) -> None:
    aside = f"{archive}.{os.getpid()}.tmp"
    home = tempfile.mkdtemp(prefix="colstats-jvm-archive-")
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": submit_args(f"-XX:ArchiveClassesAtExit={aside}"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run([sys.executable, "-c", WORKLOAD, home], env=env, capture_output=True, timeout=600)
        if done.returncode == 0 and os.path.exists(aside):
            os.replace(aside, archive)
    except subprocess.TimeoutExpired:
        pass
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if os.path.exists(aside):
            os.remove(aside)
