"""Getting a SparkSession: embedded local[*] by default, a master URL, or a Spark Connect URL."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark import SparkContext
from pyspark.sql import SparkSession

from . import errors
from .errors import ColstatsError

MIN_JAVA = 17
ENV_MASTER = "COLSTATS_SPARK_MASTER"
ENV_REMOTE = "COLSTATS_SPARK_REMOTE"
ENV_PRESTART = "COLSTATS_SPARK_PRESTART"  # "0": %load_ext does not start Spark in the background
# settings fixed when the driver's JVM starts: a session asking for others needs a new JVM
JVM_LAUNCH_PREFIXES = ("spark.driver.", "spark.jars", "spark.files", "spark.submit.")
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"

# Settings for a lab's own session: no UI, few shuffle partitions (the aggregates are small),
# UTC so timestamps mean the same in every process, and no console progress bars.
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    DRIVER_OPTIONS: "-Dderby.system.home=/tmp",
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


@dataclass(frozen=True)
class SessionSettings:
    """Everything that decides which session build_session returns, with the environment resolved."""

    home: str
    master: str | None
    remote: str | None
    conf: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, home: str, master: str | None = None, remote: str | None = None,
           conf: dict[str, str] | None = None) -> SessionSettings:
        remote = remote or os.environ.get(ENV_REMOTE) or None
        master = None if remote else (master or os.environ.get(ENV_MASTER) or "local[*]")
        return cls(os.path.abspath(home), master, remote, tuple(sorted((conf or {}).items())))

    def launches_like(self, other: SessionSettings) -> bool:
        """Whether a session with `other` can run in the JVM started for these settings."""
        def launch(settings):
            return {k: v for k, v in settings.conf if k.startswith(JVM_LAUNCH_PREFIXES)}
        return self.remote == other.remote and launch(self) == launch(other)


@dataclass
class BackgroundStart:
    """A session being built on a thread of its own, and what came of it."""

    settings: SessionSettings
    started: float = field(default_factory=time.perf_counter)
    ready: float | None = None  # perf_counter when the session was up
    session: SparkSession | None = None
    error: Exception | None = None
    thread: threading.Thread | None = None

    def run(self) -> None:
        try:
            self.session = _build(self.settings)
        except Exception as exc:  # kept for the caller that claims the session; it builds again
            self.error = exc
        self.ready = time.perf_counter()


_background: BackgroundStart | None = None
_background_lock = threading.Lock()


def start_in_background(home: str, master: str | None = None, remote: str | None = None,
                        conf: dict[str, str] | None = None) -> BackgroundStart | None:
    """Starts building the session build_session(home, master, remote, conf) would return, on a
    daemon thread, so Spark's cold start overlaps the user's first steps. Nothing is started when a
    Spark context is already running, a start is under way, or COLSTATS_SPARK_PRESTART is "0"."""
    global _background
    if os.environ.get(ENV_PRESTART, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    with _background_lock:
        if _background is not None or SparkContext._active_spark_context is not None:
            return None
        start = BackgroundStart(SessionSettings.of(home, master, remote, conf))
        start.thread = threading.Thread(target=start.run, name="colstats-spark-start", daemon=True)
        _background = start
    start.thread.start()
    return start


def _claim_background(settings: SessionSettings) -> SparkSession | None:
    """The session started in the background when it was started with `settings`. A session started
    with other settings is stopped (with its JVM when the JVM's own settings differ), so the caller
    builds the one it asked for: a later Lab's home or configuration is never silently ignored."""
    global _background
    with _background_lock:
        start, _background = _background, None
    if start is None:
        return None
    if start.thread is not None:
        start.thread.join()
    if start.session is None:
        return None  # the start failed: building again raises the error where the user is
    if start.settings == settings:
        return start.session
    start.session.stop()
    if not start.settings.launches_like(settings):
        _stop_driver_jvm()
    return None


def _stop_driver_jvm() -> None:
    """Shuts down the local driver JVM a classic session started (a Spark Connect session has none:
    nothing to do), so the next classic session launches one with its own driver settings."""
    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    process = getattr(gateway, "proc", None)
    if process is not None:
        process.terminate()
        process.wait(timeout=60)
    SparkContext._gateway = None
    SparkContext._jvm = None


# lines the JVM prints to its stderr at every start that say nothing a user can act on: Spark 4 asks for the
# incubating vector module, and its unsafe memory falls back to on-heap on Java 17
JVM_NOTICES = (b"WARNING: Using incubator modules", b"Warning: Java versions > Java 11 can only operate in restricted")


@contextmanager
def jvm_notices_filtered() -> Iterator[None]:
    """While the block starts a JVM, its stderr (inherited: the JVM writes there for its whole life) is a pipe this
    process reads on a thread, dropping JVM_NOTICES and passing every other line on to the stderr it had."""
    try:
        original = os.dup(2)
        read_end, write_end = os.pipe()
    except OSError:  # no stderr to speak of (a daemon): nothing to filter
        yield
        return

    def forward() -> None:
        with os.fdopen(read_end, "rb") as lines:
            for line in lines:
                if not line.startswith(JVM_NOTICES):
                    os.write(original, line)

    threading.Thread(target=forward, name="colstats-jvm-stderr", daemon=True).start()
    os.dup2(write_end, 2)
    try:
        yield
    finally:
        os.dup2(original, 2)  # this process's own stderr as it was; the JVM keeps the pipe
        os.close(write_end)


def build_session(home: str, master: str | None = None, remote: str | None = None,
                  conf: dict[str, str] | None = None) -> SparkSession:
    """A session for a lab at `home`: remote (Spark Connect) if given or set in the environment,
    else a classic session on `master` (default local[*]). The session start_in_background began
    for the same settings is taken as it is."""
    settings = SessionSettings.of(home, master, remote, conf)
    return _claim_background(settings) or _build(settings)


def _build(settings: SessionSettings) -> SparkSession:
    conf = dict(settings.conf)
    if settings.remote:
        builder = SparkSession.builder.remote(settings.remote)
        for key, value in conf.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    check_java()
    # Python workers must run this interpreter, which has pandas and pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    wanted = {**DEFAULT_CONF, "spark.sql.warehouse.dir": os.path.join(settings.home, "spark-warehouse"), **conf}
    if SparkContext._active_spark_context is not None:
        return _session_beside(SparkSession.builder.getOrCreate(), wanted)
    options = wanted.get(DRIVER_OPTIONS, "")
    config = None if "log4j" in options else _log_config(settings.home)  # a user's own log configuration stays
    if config is not None:  # from the JVM's first line; PYSPARK_SUBMIT_ARGS may replace it, so set again below
        wanted[DRIVER_OPTIONS] = f"{options} -Dlog4j2.configurationFile={config}".strip()
    builder = SparkSession.builder.master(settings.master or "local[*]").appName("colstats_lab")
    for key, value in wanted.items():
        builder = builder.config(key, value)
    with jvm_notices_filtered():
        session = builder.getOrCreate()
    if config is None:
        session.sparkContext.setLogLevel("ERROR")
    else:
        jvm = session.sparkContext._jvm
        assert jvm is not None
        jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(jvm.java.io.File(config).toURI())
        errors.spark_log = os.path.join(settings.home, SPARK_LOG)
    return session


# Spark's own log for a JVM the lab launched: everything from WARN in a file under the lab's home, and on the
# terminal nothing below FATAL, so that a failed task's stack (59 lines an ANALYZE, 279 a worker's round) stays
# in the file and the user reads the lab's one line, which says where the file is.
_LOG_CONFIG = """\
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = {log}
appender.file.filePattern = {log}.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 10MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 2
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = fatal
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
rootLogger.appenderRef.console.ref = console
"""
SPARK_LOG = os.path.join("logs", "spark.log")


def _log_config(home: str) -> str | None:
    """Writes the log configuration of _LOG_CONFIG under `home/logs` and returns its path; None when the home
    cannot hold it (read-only): Spark then logs errors to the terminal."""
    log = os.path.join(home, SPARK_LOG)
    config = os.path.join(os.path.dirname(log), "log4j2.properties")
    try:
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(config, "w", encoding="utf-8") as out:
            out.write(_LOG_CONFIG.format(log=log))
    except OSError:
        return None
    return config


def _session_beside(running: SparkSession, conf: dict[str, str]) -> SparkSession:
    """A session of the lab's own on a Spark context already running in this process (the user's):
    its SQL settings and temporary views are apart from the running session's, which keeps its own
    settings and log level. Settings fixed when that context started (master, driver, UI, warehouse)
    stay the context's. (`getOrCreate` with the lab's settings would have rewritten the user's.)"""
    session = running.newSession()
    for key, value in conf.items():
        if key.startswith("spark.sql.") and session.conf.isModifiable(key):
            session.conf.set(key, value)
    return session
