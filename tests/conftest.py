"""One SparkSession for the whole test session; each test gets its own lab folder and metastore file."""
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
    session = build_session(home, master="local[2]", conf={"spark.sql.shuffle.partitions": "2",
                                                           "spark.default.parallelism": "2"})
    yield session
    session.stop()


@pytest.fixture
def lab(tmp_path, spark):
    lab = Lab(home=str(tmp_path / "lab"), spark=spark)
    yield lab
    lab.close()


def pytest_collection_modifyitems(items):
    """The notebooks' cells (nbval: a kernel per notebook) run in the full lane only, as the tests marked slow."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)


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
