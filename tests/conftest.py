"""One SparkSession for the whole test session; each test gets its own lab folder and metastore.

The metastore is a SQLite file, or a new database on the session's PostgreSQL server for a test marked
`both_backends` (it runs once on each) or when COLSTATS_TEST_METASTORE=postgresql runs the whole suite there."""
from __future__ import annotations

import os

import pytest

from colstats_lab import Lab
from colstats_lab.engine import ENV_PRESTART, build_session

# %load_ext in this process must not start a session of its own next to the suite's one; the
# background start is tested in kernels of its own (test_spark_prestart.py)
os.environ.setdefault(ENV_PRESTART, "0")


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    home = str(tmp_path_factory.mktemp("spark-home"))
    # this JVM runs the whole session: C2 and G1 repay themselves here, unlike in the processes tests start
    short_run = os.environ.pop("PYSPARK_SUBMIT_ARGS") if _SHORT_RUN_JVMS else None
    try:
        session = build_session(home, master="local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                                               "spark.default.parallelism": "2"})
    finally:
        if short_run is not None:
            os.environ["PYSPARK_SUBMIT_ARGS"] = short_run
    yield session
    session.stop()


BACKENDS = ("sqlite", "postgresql")
ENV_BACKEND = "COLSTATS_TEST_METASTORE"


_SHORT_RUN_JVMS = "PYSPARK_SUBMIT_ARGS" not in os.environ  # unless the one running the tests chose otherwise


def pytest_configure(config):
    if _SHORT_RUN_JVMS:  # inherited by every process a test starts: workers, CLI runs, kernels, Voila
        import jvm_startup

        archive = jvm_startup.archive_path()
        os.environ["PYSPARK_SUBMIT_ARGS"] = jvm_startup.short_run_submit_args(archive)
        jvm_startup.make_archive_in_background(archive)
    config.addinivalue_line("markers", "both_backends: runs once on a SQLite metastore and once on PostgreSQL")
    config.addinivalue_line("markers", "sqlite_only(why): a test of SQLite's file itself, in a both_backends module")
    config.addinivalue_line("markers", "postgresql_only(why): a behaviour of a shared server, in a both_backends module")
    config.addinivalue_line("markers", "unit: no JVM, no server, no process of its own (set by the collection)")


def pytest_generate_tests(metafunc):
    definition = metafunc.definition
    if "metastore_backend" in metafunc.fixturenames and definition.get_closest_marker("both_backends") \
            and not definition.get_closest_marker("sqlite_only"):
        only = definition.get_closest_marker("postgresql_only")
        metafunc.parametrize("metastore_backend", ["postgresql"] if only else BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server on 127.0.0.1, one for the test session; each test takes a database of its own."""
    import shutil
    import tempfile

    import pg_server

    # outside pytest's folders: a second pytest session resets their mode to 700, which the server's user
    # (postgres, when the tests run as root) then cannot pass, and the server stops
    folder = tempfile.mkdtemp(prefix="colstats-postgres-")
    server = pg_server.start(os.path.join(folder, "server"))
    yield server
    pg_server.stop(server)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def metastore_backend(request) -> str:
    return getattr(request, "param", os.environ.get(ENV_BACKEND, "sqlite"))


@pytest.fixture
def new_metastore_location(request, metastore_backend, tmp_path):
    """Makes a new, empty metastore's location on the test's backend: a SQLite path, or a PostgreSQL URL."""
    made = iter(range(1_000))

    def make() -> str:
        if metastore_backend == "postgresql":
            return request.getfixturevalue("postgres").new_database()
        return str(tmp_path / f"metastore-{next(made)}" / "metastore.db")
    return make


@pytest.fixture
def new_metastore(new_metastore_location, tmp_path):
    """Opens a new metastore on the test's backend (closed at the test's end)."""
    from colstats_lab.metastore import Metastore

    opened = []

    def make(location: str | None = None) -> Metastore:
        store = Metastore(location or new_metastore_location(), str(tmp_path / "warehouse"))
        opened.append(store)
        return store
    yield make
    for store in opened:
        store.close()


@pytest.fixture
def lab(tmp_path, spark, metastore_backend, new_metastore_location, monkeypatch):
    metastore = None
    if metastore_backend == "postgresql":  # the CLI and processes the test starts on the lab's home find it too
        metastore = new_metastore_location()
        monkeypatch.setenv("COLSTATS_METASTORE", metastore)
    lab = Lab(home=str(tmp_path / "lab"), spark=spark, metastore=metastore)
    yield lab
    lab.close()


# what makes a test more than a unit test: a JVM, a server, a metastore of the suite's, a process of its own
_BEYOND_UNIT_FIXTURES = {"spark", "lab", "postgres", "hms_uri", "s3", "metastore_backend", "new_metastore_location",
                         "new_metastore"}
_PROCESS_MODULES = {"test_packaging.py", "test_engine.py", "test_spark_prestart.py", "test_clean_exit.py",
                    "test_cli.py", "test_dashboard_browser.py", "test_jupyterlab_browser.py", "test_docs.py",
                    "test_readme.py", "test_notebook_export.py", "test_object_store.py", "test_spark_catalog_hive.py"}


def pytest_collection_modifyitems(items):
    """The notebooks' cells (nbval: a kernel per notebook) run in the full lane only, as the tests marked slow.
    A test with none of the fixtures beyond a unit test and not in a module of processes is marked `unit`: `make
    unit` runs those with no Java to be found (JAVA_HOME points nowhere), so one that starts Spark fails there."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
        elif not set(getattr(item, "fixturenames", ())) & _BEYOND_UNIT_FIXTURES \
                and item.path.name not in _PROCESS_MODULES and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.unit)




def s3_mount_root(tmp_path_factory) -> str:
    """Where the `s3` server mounts its buckets: known before it starts, so that the Hive Metastore, started
    on its own, reads the `s3a://` locations of bucket `lake` there (`s3_server.hadoop_settings`)."""
    return str(tmp_path_factory.getbasetemp() / "s3-mounts")


@pytest.fixture(scope="session")
def hms_uri(tmp_path_factory):
    """A real Hive Metastore 2.3 (pyspark's jars, embedded Derby) on 127.0.0.1, one for the test session; its
    `s3a://lake/` is the `s3` server's bucket, through that bucket's mount."""
    import hms_server
    import s3_server

    process, uri = hms_server.start(str(tmp_path_factory.mktemp("hms") / "server"),
                                    s3_server.hadoop_settings(s3_mount_root(tmp_path_factory), ["lake"]))
    yield uri
    hms_server.stop(process)


@pytest.fixture(scope="session")
def s3(tmp_path_factory):
    """A real S3 server (SeaweedFS) on 127.0.0.1, one for the test session, with its bucket `lake` and that
    bucket mounted for Spark (which has no S3A connector here); the standard AWS variables name it, the only
    way the lab is told its endpoint and identity."""
    import fsspec
    import s3_server
    import s3fs

    server = s3_server.start(str(tmp_path_factory.mktemp("s3") / "server"), s3_mount_root(tmp_path_factory))
    saved = {key: os.environ.get(key) for key in server.environment}
    try:  # stopped even when what follows fails (ci10 left a server running when its bucket could not be made)
        os.environ.update(server.environment)
        s3fs.S3FileSystem.clear_instance_cache()  # one made by an earlier test, without these variables, is not reused
        fsspec.filesystem("s3").mkdir("lake")
        server.mount("lake")
        yield server
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        s3fs.S3FileSystem.clear_instance_cache()
        s3_server.stop(server)


@pytest.fixture
def cbo(spark):
    """Spark's cost-based optimizer on for one test (the session is the suite's)."""
    before = spark.conf.get("spark.sql.cbo.enabled", "false")
    spark.conf.set("spark.sql.cbo.enabled", "true")
    yield
    spark.conf.set("spark.sql.cbo.enabled", before)


@pytest.fixture
def spark_db(spark):
    """A database of Spark's own catalog for one test, dropped with its tables after it."""
    import uuid

    db = f"spark_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db}")
    yield db
    spark.sql(f"DROP DATABASE {db} CASCADE")


@pytest.fixture
def fact_and_dim(spark, spark_db, cbo):
    """Spark catalog tables whose join Spark's CBO misestimates: `fact` (20,000 rows, k in 0..999) analyzed for
    all columns, `dim` (1,000 rows, k unique) for its row count only, so dim.k has no NDV. Returns the database,
    both frames (pandas, for the truth) and the join's query; the plans' and the runs' tests read it."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(9)
    fact = pd.DataFrame({"k": rng.integers(0, 1000, 20000), "v": rng.normal(size=20000)})
    dim = pd.DataFrame({"k": np.arange(1000), "name": [f"n{i % 300}" for i in range(1000)]})
    spark.createDataFrame(fact).write.saveAsTable(f"{spark_db}.fact")
    spark.createDataFrame(dim).write.saveAsTable(f"{spark_db}.dim")
    spark.sql(f"ANALYZE TABLE {spark_db}.fact COMPUTE STATISTICS FOR ALL COLUMNS")
    spark.sql(f"ANALYZE TABLE {spark_db}.dim COMPUTE STATISTICS")  # its row count, no column's statistics
    return spark_db, fact, dim, f"SELECT f.v, d.name FROM {spark_db}.fact f JOIN {spark_db}.dim d ON f.k = d.k"
