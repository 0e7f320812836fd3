"""Auto-analyze workers as processes of their own on one metastore file, as a cron job or two machines would
run them: two at once never analyze one partition, a write committed meanwhile is never taken for analyzed,
and a worker killed while it holds claims leaves every partition as it was and nothing claimed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from metastore_rows import connect

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]  # several processes on one metastore, on each database

# a process of its own: appends `rounds` small writes, one partition after another
WRITER = textwrap.dedent("""
    import sys
    import pandas as pd
    from colstats_lab import Lab
    lab = Lab(home=sys.argv[1], master="local[1]")
    for i in range(int(sys.argv[2])):
        lab.tables["events"].write(pd.DataFrame({"v": [1000 + i, None], "w": [f"late{i}", None]}),
                                   partition={"d": f"p{i % 4:02d}"})
""")
# a process of its own: ANALYZE of the whole table, `rounds` times
ANALYZER = textwrap.dedent("""
    import sys
    from colstats_lab import Lab
    lab = Lab(home=sys.argv[1], master="local[1]")
    for _ in range(int(sys.argv[2])):
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
""")


def worker(home: str, log_path: str, *extra: str) -> subprocess.Popen:
    with open(log_path, "w") as log:
        return subprocess.Popen([sys.executable, "-m", "colstats_lab.cli", "--home", home, "autoanalyze", "--once",
                                 *extra], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def changed_table(lab, name: str, parts: int, changed: int) -> list[str]:
    """`parts` partitions of 10 rows, analyzed; then (autogather off) the first `changed` get 10 rows more
    (50% of their rows). Returns the changed partitions' names."""
    lab.sql(f"CREATE TABLE {name} (v INT, w STRING) PARTITIONED BY (d STRING)")
    lab.set("hive.stats.column.autogather", True)
    lab.tables[name].write(pd.DataFrame({"v": list(range(parts * 10)), "w": [f"w{i % 7}" for i in range(parts * 10)],
                                         "d": [f"p{i % parts:02d}" for i in range(parts * 10)]}))
    lab.set("hive.stats.column.autogather", False)
    for index in range(changed):
        lab.tables[name].write(pd.DataFrame({"v": list(range(500, 510)), "w": ["new"] * 10}), partition={"d": f"p{index:02d}"})
    return [f"d=p{index:02d}" for index in range(changed)]


def never_falsely_accurate(lab, name: str) -> None:
    """Every partition whose statistics say accurate holds the rows they count."""
    rows = lab.tables[name].to_spark().toPandas().groupby("d").size()
    frame = lab.tables[name].inspect.stats()
    for r in frame[(frame.column == "v") & frame.partition.notna()].itertuples():
        if r.accurate:
            assert r.rows == rows[r.partition.split("=")[1]], (r.partition, r.rows)


def test_two_workers_and_a_writer_share_one_metastore(lab, tmp_path):
    first = changed_table(lab, "clicks", parts=8, changed=4)
    second = changed_table(lab, "views", parts=8, changed=6)
    workers = [worker(lab.home, str(tmp_path / f"worker{i}.log")) for i in (1, 2)]
    written = 0
    while any(w.poll() is None for w in workers):  # a writer meanwhile, into partitions the workers analyze
        lab.tables["clicks"].write(pd.DataFrame({"v": [900 + written], "w": ["late"]}), partition={"d": "p00"})
        written += 1
        time.sleep(0.5)
    logs = [open(tmp_path / f"worker{i}.log").read() for i in (1, 2)]
    assert [w.returncode for w in workers] == [0, 0], logs
    rounds = lab.metastore.autoanalyze_claims.autoanalyze_rounds()
    analyzed = [(t["table"], owner) for r in rounds for t in json.loads(r["tables"] or "[]") for owner in t["owners"]]
    assert len(analyzed) == len(set(analyzed)), (analyzed, logs)  # no partition analyzed twice
    # the one the writer kept writing may have waited for its open write; the others were analyzed, once
    expected = {("default.clicks", p) for p in first} | {("default.views", p) for p in second}
    assert expected - {("default.clicks", "d=p00")} <= set(analyzed) <= expected, logs
    assert all(r["ended_at"] is not None for r in rounds) and lab.metastore.autoanalyze_claims.claims() == []
    never_falsely_accurate(lab, "clicks")
    never_falsely_accurate(lab, "views")
    assert written > 0
    last = lab.autoanalyze().details  # the writer is done: what waited, or went stale meanwhile, is analyzed
    assert {d.owner for d in last.due} <= {"d=p00"}
    assert all(lab.tables[name].inspect.staleness()["accurate"].all() for name in ("clicks", "views"))
    never_falsely_accurate(lab, "clicks")


def test_a_worker_killed_while_it_holds_claims_leaves_everything_as_it_was(lab, tmp_path):
    stale = changed_table(lab, "orders", parts=6, changed=3)
    before = lab.tables["orders"].inspect.stats()
    killed = worker(lab.home, str(tmp_path / "killed.log"))
    deadline = time.time() + 120
    while not lab.metastore.autoanalyze_claims.claims():
        assert killed.poll() is None and time.time() < deadline, open(tmp_path / "killed.log").read()
        time.sleep(0.1)
    assert sorted(c["owner"] for c in lab.metastore.autoanalyze_claims.claims()) == stale
    time.sleep(3)  # into its Spark start or its job
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert lab.metastore.autoanalyze_claims.claims() == []  # its transaction is aborted: its process is gone
    after = lab.tables["orders"].inspect.stats()
    pd.testing.assert_frame_equal(before, after)  # nothing of its round stored
    assert lab.metastore.autoanalyze_claims.autoanalyze_rounds()[0]["ended_at"] is None
    done = lab.autoanalyze().details
    assert sorted(done.analyzed[0]["owners"]) == stale
    assert lab.tables["orders"].inspect.staleness()["accurate"].all()


def test_a_worker_runs_round_after_round_until_it_is_told_to_stop(lab, tmp_path):
    stale = changed_table(lab, "events", parts=3, changed=1)
    log_path = str(tmp_path / "every.log")
    with open(log_path, "w") as log:
        running = subprocess.Popen([sys.executable, "-m", "colstats_lab.cli", "--home", lab.home, "autoanalyze",
                                    "--every", "1s"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 120
    claims = lab.metastore.autoanalyze_claims
    while len(claims.autoanalyze_rounds()) < 3 or claims.autoanalyze_rounds()[0]["ended_at"] is None:
        assert running.poll() is None and time.time() < deadline, open(log_path).read()
        time.sleep(0.2)
    os.killpg(running.pid, signal.SIGTERM)
    assert running.wait(timeout=60) == 0, open(log_path).read()
    said = open(log_path).read()
    assert "auto-analyze stopped" in said and said.count("Auto-analyze: nothing due") >= 2, said
    rounds = lab.metastore.autoanalyze_claims.autoanalyze_rounds()
    analyzed = [o for r in rounds for t in json.loads(r["tables"] or "[]") for o in t.get("owners", [])]
    assert analyzed == stale  # the first round analyzed it; the next ones found nothing due
    assert lab.metastore.autoanalyze_claims.claims() == []


@pytest.mark.postgresql_only("a team's shared server; SQLite's one writer at a time is the other tests' case")
def test_a_writer_two_analyzers_and_a_worker_on_one_table_leave_one_row_per_column_and_true_figures(lab, tmp_path):
    """One writer appending while two processes ANALYZE the same table and an auto-analyze worker runs: no state
    on the way holds two statistics rows for a column; afterwards no partition is accurate that does not count its
    rows, and after a last ANALYZE every partition is accurate with the figures pandas computes over the rows."""
    changed_table(lab, "events", parts=4, changed=2)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    logs = {name: open(tmp_path / f"{name}.log", "w") for name in ("writer", "analyzer1", "analyzer2")}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, lab.home, "8"], env=env, stdout=logs["writer"],
                              stderr=subprocess.STDOUT)]
    procs += [subprocess.Popen([sys.executable, "-c", ANALYZER, lab.home, "2"], env=env, stdout=logs[name],
                               stderr=subprocess.STDOUT) for name in ("analyzer1", "analyzer2")]
    procs.append(worker(lab.home, str(tmp_path / "worker.log")))
    reader, polls, deadline = connect(lab.metastore.url), 0, time.time() + 600
    while any(p.poll() is None for p in procs):
        reader.begin_snapshot()
        try:
            assert reader.intact()  # one statistics row per column and owner, none without its owner
        finally:
            reader.execute("COMMIT")
        polls += 1
        assert time.time() < deadline
        time.sleep(0.2)
    reader.close()
    output = {name: open(tmp_path / f"{name}.log").read()[-3000:] for name in (*logs, "worker")}
    assert [p.returncode for p in procs] == [0, 0, 0, 0], output
    assert polls > 0
    never_falsely_accurate(lab, "events")
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.tables["events"].inspect.staleness()["accurate"].all()
    rows = lab.tables["events"].to_spark().toPandas()
    frame = lab.tables["events"].inspect.stats()
    for d, part in rows.groupby("d"):
        stats = frame[(frame.partition == f"d={d}") & (frame.column == "v")].iloc[0]
        assert (stats.rows, stats.nulls, stats["min"], stats["max"]) == \
            (len(part), int(part.v.isna().sum()), part.v.min(), part.v.max()), d
    assert len(rows) == 4 * 10 + 2 * 10 + 8 * 2
