"""The metastore under faults: a full disk, a read-only home, a writer holding the lock, a process killed inside
its commit, the PostgreSQL server stopped mid-ANALYZE, another job appending while the lab answers. Each
scenario checks the state after it against the rows (pandas, pyarrow) and the error a user reads: one line,
naming what failed and why. The file-system scenarios mount a small tmpfs (CI runs as root)."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab import Lab
from colstats_lab.cli import main as cli_main
from colstats_lab.errors import MetastoreUnavailable
from colstats_lab.metastore.db import MetastoreWaitWarning

pytestmark = pytest.mark.slow  # the full lane: file systems mounted, processes killed, servers stopped


@contextmanager
def mounted(folder, size: str = "3m"):
    """A tmpfs of `size` at `folder`, unmounted at the end; the test is skipped where mounting is not allowed."""
    os.makedirs(folder, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if done.returncode:
        pytest.skip(f"mounting a tmpfs needs root: {done.stderr.decode().strip()}")
    try:
        yield str(folder)
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _partition_frame(day: int) -> pd.DataFrame:
    return pd.DataFrame({"s": [f"{day}-{j}" * 40 for j in range(1500)], "n": np.arange(1500) + day})


def test_a_full_disk_is_one_line_naming_the_file_and_the_statistics_before_stay(spark, tmp_path, capfd):
    with mounted(tmp_path / "small") as small:
        home = os.path.join(small, "home")
        lab = Lab(home=home, spark=spark, warehouse=str(tmp_path / "warehouse"))  # the data beside, not on it
        lab.sql("CREATE TABLE t (s STRING, n BIGINT) PARTITIONED BY (d STRING)")
        lab.set("hive.stats.column.autogather", False)
        free = os.statvfs(small)
        with open(os.path.join(small, "ballast"), "wb") as ballast:  # another file of the home's disk: a few left
            ballast.write(b"\0" * (free.f_bavail * free.f_frsize - 200 * 1024))
        written: dict[str, pd.DataFrame] = {}
        with pytest.raises(MetastoreUnavailable) as full:
            for day in range(10_000):
                frame = _partition_frame(day)
                lab.tables["t"].write(frame, partition={"d": str(day)})
                written[f"d={day}"] = frame
                lab.tables["t"].analyze(partition={"d": str(day)})
        said = str(full.value)
        assert said.startswith(f"cannot write the metastore at {home}/metastore.db: no space left on its file system")
        assert "\n" not in said and "the statistics stored before stay as they were" in said
        # what was stored before the disk filled is there and true to the rows
        stats = lab.tables["t"].inspect.stats()
        analyzed = stats[stats.partition.notna() & stats.accurate.map(lambda a: a is True)]
        assert len(written) > 5 and set(analyzed.partition) >= set(list(written)[:-2])
        for part in sorted(set(analyzed.partition))[:5]:
            row = analyzed[(analyzed.partition == part) & (analyzed.column == "n")].iloc[0]
            assert (row["rows"], row["min"], row["max"]) == (1500, written[part].n.min(), written[part].n.max())
        capfd.readouterr()
        assert cli_main(["--home", home, "--metastore", os.path.join(home, "metastore.db"), "analyze", "t",
                         "--partition", f"d='{list(written)[-1][2:]}'"]) == 2
        lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("colstats-lab:")]
        assert len(lines) == 1 and "no space left on its file system" in lines[0]
        lab.close()


def test_a_read_only_home_reads_everything_and_refuses_a_write_in_one_line(spark, tmp_path):
    rows = {k: np.arange(k * 10, k * 10 + 10) for k in range(3)}
    data = tmp_path / "data"
    for k, values in rows.items():
        (data / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"v": values}), data / f"k={k}" / "p.parquet")
    with mounted(tmp_path / "ro", "20m") as folder:
        home = os.path.join(folder, "home")
        lab = Lab(home=home, spark=spark, warehouse=str(tmp_path / "warehouse"))
        lab.register_external("t", str(data))
        lab.tables["t"].analyze()
        lab.sql("CREATE TABLE m (x INT) PARTITIONED BY (d STRING)")
        lab.tables["m"].write(pd.DataFrame({"x": [1, 2, 3], "d": ["a", "a", "b"]}))
        lab.close()
        assert subprocess.run(["mount", "-o", "remount,ro", folder]).returncode == 0
        reader = Lab(home=home, spark=spark, warehouse=str(tmp_path / "warehouse"))
        assert reader.metastore.db.read_only
        answer = reader.sql("SELECT count(*), min(v), max(v) FROM t")
        assert answer.answered_from == "stats" and list(answer.df.iloc[0]) == [30, 0, 29]
        assert reader.sql("SELECT count(*), max(x) FROM m").df.iloc[0].tolist() == [3, 3]
        stats = reader.tables["t"].inspect.stats().set_index(["partition", "column"])
        assert stats.loc[("k=2", "v"), "min"] == 20 and bool(stats["accurate"].all())
        assert dict(reader.sql("DESCRIBE FORMATTED t v").df.values)["num_nulls"] == "0"
        assert reader.tables["m"].inspect.freshness()["accurate"].all()
        from colstats_lab.workbench.dashboard import Dashboard

        dashboard = Dashboard(reader)
        assert "default.t" in dashboard.landing.value and "default.m" in dashboard.landing.value
        dashboard.picker.value = "default.t"  # the table's page opens and reads its statistics
        assert type(dashboard.page_area.children[0]).__name__ == "TablePage"
        dashboard.page.open_tab(0)
        assert dashboard.page.children[0].children
        for write in (lambda: reader.tables["t"].analyze(),
                      lambda: reader.tables["m"].write(pd.DataFrame({"x": [4], "d": ["a"]}))):
            with pytest.raises(MetastoreUnavailable) as refused:
                write()
            assert str(refused.value) == (f"the metastore at {home}/metastore.db is read-only here ({home} is on a "
                                          "read-only file system): its statistics can be read, not changed")
        reader.close()


def _hold_sqlite_lock(path: str) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_writer_holding_the_lock_makes_no_reader_wait_and_a_writer_says_for_whom(lab, spark):
    lab.sql("CREATE TABLE t (x INT)")
    lab.tables["t"].write(pd.DataFrame({"x": [1, 2, 3]}))
    with lab.transaction() as txn:  # an open transaction of the lab's: named as a holder
        opened = txn.txn_id
        holder = _hold_sqlite_lock(lab.metastore.path)
        try:
            started = time.perf_counter()
            other = Lab(home=lab.home, spark=spark)  # a dashboard, a check, a notebook that reads
            answer = other.sql("SELECT count(*), max(x) FROM t")
            frame = other.tables["t"].inspect.stats()
            assert time.perf_counter() - started < 10  # it waited 60 s for the write lock before
            assert answer.df.iloc[0].tolist() == [3, 3] and bool(frame["accurate"].all())
            other.set("colstats.metastore.wait", 1)
            with warnings.catch_warnings(record=True) as said, pytest.raises(MetastoreUnavailable) as busy:
                warnings.simplefilter("always")
                other.tables["t"].write(pd.DataFrame({"x": [4]}))
            waits = [str(w.message) for w in said if issubclass(w.category, MetastoreWaitWarning)]
            assert len(waits) == 1 and waits[0].startswith(f"waiting up to 1 s for the metastore at "
                                                           f"{lab.metastore.path}: another writer holds its write lock")
            assert f"transaction {opened} of " in waits[0]
            assert str(busy.value).startswith(f"the metastore at {lab.metastore.path} is busy: another writer held "
                                              f"its write lock for 1 s")
        finally:
            holder.rollback()
            holder.close()
    other.tables["t"].write(pd.DataFrame({"x": [4]}))
    assert other.sql("SELECT count(*), max(x) FROM t").df.iloc[0].tolist() == [4, 4]
    other.close()


def test_a_postgresql_writer_holding_the_lock_makes_no_reader_wait(postgres, spark, tmp_path):
    import psycopg

    from colstats_lab.metastore.db.postgres import WRITE_LOCK

    url = postgres.new_database()
    lab = Lab(home=str(tmp_path / "a"), spark=spark, metastore=url)
    lab.sql("CREATE TABLE t (x INT)")
    lab.tables["t"].write(pd.DataFrame({"x": [1, 2, 3]}))
    with psycopg.connect(url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        started = time.perf_counter()
        other = Lab(home=str(tmp_path / "b"), spark=spark, metastore=url)
        assert other.sql("SELECT count(*), max(x) FROM t").df.iloc[0].tolist() == [3, 3]
        assert time.perf_counter() - started < 10
        other.set("colstats.metastore.wait", 1)
        with warnings.catch_warnings(record=True) as said, pytest.raises(MetastoreUnavailable) as busy:
            warnings.simplefilter("always")
            other.sql("CREATE TABLE u (y INT)")
        assert any(issubclass(w.category, MetastoreWaitWarning) and "waiting up to 1 s" in str(w.message) for w in said)
        assert "is busy: another writer held it for 1 s" in str(busy.value)
    other.sql("CREATE TABLE u (y INT)")
    other.close()
    lab.close()


def test_the_write_ahead_log_is_checkpointed_and_cut_on_close(lab):
    lab.sql("CREATE TABLE t (s STRING) PARTITIONED BY (d STRING)")
    for day in range(20):
        lab.tables["t"].write(_partition_frame(day)[["s"]], partition={"d": str(day)})
    wal = lab.metastore.path + "-wal"
    assert os.path.getsize(wal) <= 2 * 1024 * 1024  # checkpointed past 1 MiB as it goes
    lab.close()
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0


def test_sql_readers_see_as_of_when_each_flag_was_proven(lab, tmp_path):
    root = tmp_path / "ext"
    for k in range(2):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"v": [k, k + 1]}), root / f"k={k}" / "p.parquet")
    lab.register_external("t", str(root))
    lab.tables["t"].analyze()
    pq.write_table(pa.table({"v": [9]}), root / "k=1" / "late.parquet")  # another job: the stored flag stays
    rows = {r[0]: r for r in lab.metastore.db.execute(
        "SELECT PART_NAME, COLUMN_STATS_ACCURATE, PROVEN_AT, HOLDS_WHILE FROM STATS_FLAGS "
        "WHERE TABLE_NAME = 't' AND PART_NAME IS NOT NULL").fetchall()}
    assert set(rows) == {"k=0", "k=1"} and '"v":"true"' in rows["k=1"][1]
    analyzed = lab.metastore.column_stats.get_partition_column_statistics("default", "t", "k=1", "v").statsDesc.lastAnalyzed
    assert rows["k=1"][2] == analyzed
    assert rows["k=1"][3].startswith("its files are those ANALYZE read at PROVEN_AT: another job may have changed")
    assert not lab.tables["t"].inspect.freshness().set_index("partition").loc["k=1", "accurate"]  # the lab lists them


def test_a_file_changed_while_spark_reads_it_is_named_as_the_lab_lists_it(lab, spark, tmp_path):
    from colstats_lab.errors import StorageError, spark_errors
    from colstats_lab.tables import read_snapshot
    from colstats_lab.tables.snapshot import changes_named

    root = tmp_path / "ext"
    (root / "k=0").mkdir(parents=True)
    pq.write_table(pa.table({"v": list(range(100))}), root / "k=0" / "part-0.parquet")
    lab.register_external("t", str(root))
    table, parts = lab.tables["t"].files()  # listed: the read below was planned on these
    (root / "k=0" / "part-0.parquet").write_bytes(b"rewritten by another job while the lab's read ran")
    with pytest.raises(StorageError) as changed:
        with changes_named(parts), spark_errors("cannot read t"):
            read_snapshot(spark, table, parts).count()
    assert str(changed.value) == f"{root}/k=0/part-0.parquet changed while it was read: run the command again"


_KILLED_IN_COMMIT = """
import os, signal, sys
import pandas as pd
from colstats_lab import Lab
from colstats_lab.metastore.db.sqlite import SqliteDatabase

lab = Lab(home=sys.argv[1], master="local[1]")
original = SqliteDatabase._end

def killed(self, commit):  # the commit of the ANALYZE's transaction: killed before it lands
    if commit and self._conn.in_transaction and os.environ.get("ARMED"):
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, commit)

SqliteDatabase._end = killed
lab.set("hive.stats.column.autogather", False)  # the write leaves the statistics stale: ANALYZE would fix them
lab.tables["t"].write(pd.DataFrame({"x": [100, 200]}), partition={"d": "a"})
os.environ["ARMED"] = "1"
lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
"""


def test_a_process_killed_inside_its_commit_leaves_the_statistics_before(lab, tmp_path):
    lab.sql("CREATE TABLE t (x INT) PARTITIONED BY (d STRING)")
    lab.tables["t"].write(pd.DataFrame({"x": [1, 2, 3]}), partition={"d": "a"})
    before = lab.tables["t"].inspect.stats()
    lab.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _KILLED_IN_COMMIT, lab.home], env=env, capture_output=True,
                          timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    after = Lab(home=lab.home, spark=lab._spark)
    stats = after.tables["t"].inspect.stats().set_index(["partition", "column"])
    # the write before the kill landed (its own commit); the ANALYZE's did not: no half of it
    row = stats.loc[("d=a", "x")]
    assert row["rows"] == 5 and not row["accurate"] and (row["min"], row["max"]) == (1, 3)
    assert before.set_index(["partition", "column"]).loc[("d=a", "x"), "max"] == 3
    after.tables["t"].analyze()
    x = after.tables["t"].inspect.stats().set_index(["partition", "column"]).loc[("d=a", "x")]
    assert (x["rows"], x["min"], x["max"], bool(x["accurate"])) == (5, 1, 200, True)
    after.close()


def test_postgresql_stopped_mid_analyze_is_one_line_and_its_data_stays(spark, tmp_path):
    import pg_server

    server = pg_server.start(str(tmp_path / "pg"))
    try:
        url = server.new_database(migrated=False)
        lab = Lab(home=str(tmp_path / "lab"), spark=spark, metastore=url)
        lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (d STRING)")
        for day in ("a", "b"):
            lab.tables["t"].write(pd.DataFrame({"x": np.arange(1000)}), partition={"d": day})
        lab.set("hive.stats.column.autogather", False)
        lab.tables["t"].write(pd.DataFrame({"x": [5000]}), partition={"d": "a"})
        stopper = threading.Timer(1.5, lambda: pg_server.stop(server))
        stopper.start()
        with pytest.raises(MetastoreUnavailable) as gone:
            for _ in range(200):  # ANALYZEs until the server goes
                lab.tables["t"].analyze()
        stopper.join()
        said = str(gone.value)
        assert "\n" not in said and said.startswith("the metastore's PostgreSQL server at postgresql://")
        assert "went away" in said and "this command stored nothing" in said
        subprocess.run([*server.as_user, os.path.join(pg_server.binaries(), "pg_ctl"), "-D",
                        os.path.join(server.folder, "data"), "-l", os.path.join(server.folder, "server.log"), "-o",
                        f"-p {server.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={server.folder}",
                        "-w", "start"], check=True, capture_output=True)
        again = Lab(home=str(tmp_path / "lab2"), spark=spark, metastore=url)
        stats = again.tables["t"].inspect.stats().set_index(["partition", "column"])
        assert stats.loc[("d=a", "x"), "rows"] == 1001 and stats.loc[("d=b", "x"), "max"] == 999
        assert all(stats["accurate"].map(lambda a: a is not None))
        again.close()
    finally:
        pg_server.stop(server)


def test_answers_while_another_job_appends_stay_within_the_files_counts(lab, tmp_path):
    root = tmp_path / "ext"
    (root / "k=0").mkdir(parents=True)
    pq.write_table(pa.table({"v": np.arange(100)}), root / "k=0" / "p-0.parquet")
    lab.register_external("t", str(root))
    lab.tables["t"].analyze()
    counts = [100]
    stop = threading.Event()

    def append() -> None:
        i = 1
        while not stop.is_set():
            pq.write_table(pa.table({"v": np.arange(10)}), root / "k=0" / f".p-{i}.parquet.tmp")
            os.replace(root / "k=0" / f".p-{i}.parquet.tmp", root / "k=0" / f"p-{i}.parquet")  # whole or not at all
            counts.append(counts[-1] + 10)
            i += 1
            time.sleep(0.05)
    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    answers = []
    try:
        for _ in range(15):
            low = counts[-1]
            result = lab.sql("SELECT count(*) FROM t")
            answers.append((low, int(result.df.iloc[0, 0]), counts[-1], result.answered_from))
    finally:
        stop.set()
        writer.join()
    assert all(low <= got <= high for low, got, high, _ in answers), answers
    assert any(source == "scan" for *_, source in answers)  # the files moved: statistics no longer answer


def test_the_s3_server_killed_is_one_line_naming_the_uri_and_after_its_restart_the_figures_hold(spark, tmp_path,
                                                                                               monkeypatch):
    """A server of its own (the session's serves other tests): SIGKILLed after an ANALYZE, then restarted on its
    data. Meanwhile each command is one line naming the endpoint and the table's URI; after, the statistics are
    still accurate (the same objects, the same ETags) and a new ANALYZE equals pandas."""
    import io

    import fsspec
    import s3_server
    import s3fs

    from colstats_lab.errors import StorageError
    from colstats_lab.lab import SPARK_PREFIXES

    folder, mount_root = str(tmp_path / "s3"), str(tmp_path / "s3-mounts")

    def serve() -> s3_server.S3Server:
        started = s3_server.start(folder, mount_root)
        for key, value in started.environment.items():
            monkeypatch.setenv(key, value)
        s3fs.S3FileSystem.clear_instance_cache()
        return started

    server = serve()
    try:
        store = fsspec.filesystem("s3")
        store.mkdir("lake")
        server.mount("lake")
        rng = np.random.default_rng(3)
        frames = {}
        for day in range(3):
            frame = pd.DataFrame({"v": rng.integers(0, 10**6, 2000), "s": rng.choice(["a", "b", None], 2000)})
            buffer = io.BytesIO()
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
            store.pipe(f"lake/t/d={day}/part-0.parquet", buffer.getvalue())
            frames[f"d={day}"] = frame
        lab = Lab(home=str(tmp_path / "home"), spark=spark)
        lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + server.mounts["lake"]})
        table = lab.register_external("t", "s3://lake/t")
        table.analyze()
        before = table.inspect.stats()

        os.killpg(server.processes[0].pid, signal.SIGKILL)
        server.processes[0].wait()
        for command in (table.analyze, lambda: lab.sql("SELECT count(*) FROM t")):
            with pytest.raises(StorageError) as unreachable:
                command()
            said = str(unreachable.value)
            assert "\n" not in said and said.startswith(f"cannot reach {server.endpoint} for s3://lake/t: "), said
        s3_server.stop(server)
        server = serve()  # on the same data, other ports
        server.mount("lake")
        pd.testing.assert_frame_equal(table.inspect.stats(), before)
        table.analyze()
        stats = table.inspect.stats()
        for part, frame in frames.items():
            row = stats[(stats.partition == part) & (stats.column == "v")].iloc[0]
            assert (row["rows"], row["min"], row["max"], bool(row["accurate"])) == \
                (2000, frame.v.min(), frame.v.max(), True), part
            nulls = stats[(stats.partition == part) & (stats.column == "s")].iloc[0]["nulls"]
            assert nulls == frame.s.isna().sum(), part
        lab.close()
    finally:
        s3_server.stop(server)
        s3fs.S3FileSystem.clear_instance_cache()
