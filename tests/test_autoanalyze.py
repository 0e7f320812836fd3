"""Auto-analyze in one process: what a round picks (the threshold at its edge, modes `all` and `existing`,
the opt-out property, an open write, the budget), and that what it stores equals pandas over the rows.
Workers in processes of their own are `test_autoanalyze_processes.py`."""
from __future__ import annotations

import os

import pandas as pd
import pytest

from colstats_lab.errors import InvalidArgument

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL


def stale_table(lab, name: str = "moved") -> None:
    """Four partitions of 10 rows analyzed, then (autogather off) a: +5 rows (5 of 15, 33%), b: +4 (4 of 14,
    29%), c: +10 (10 of 20, 50%), d untouched; and e written, never analyzed."""
    lab.sql(f"CREATE TABLE {name} (v INT, w STRING) PARTITIONED BY (d STRING)")
    lab.tables[name].write(pd.DataFrame({"v": list(range(40)), "w": [f"w{i}" for i in range(40)],
                                         "d": [("a", "b", "c", "d")[i % 4] for i in range(40)]}))
    lab.set("hive.stats.column.autogather", False)
    for part, rows in (("a", 5), ("b", 4), ("c", 10), ("e", 3)):
        lab.tables[name].write(pd.DataFrame({"v": [1000 + i for i in range(rows)], "w": ["new"] * rows}),
                               partition={"d": part})


def stats_of(lab, table: str, partition: str) -> dict:
    frame = lab.tables[table].inspect.stats()
    return {r.column: r for r in frame[frame.partition == partition].itertuples()}


def test_a_round_analyzes_exactly_the_partitions_due_most_stale_first(lab):
    stale_table(lab)
    outcome = lab.autoanalyze(threshold=0.3).details
    assert [d.owner for d in outcome.due] == ["d=e", "d=c", "d=a"]  # never analyzed counts as all changed
    assert [a["owners"] for a in outcome.analyzed] == [["d=e", "d=c", "d=a"]]  # one table: one ANALYZE
    assert outcome.message.startswith("Auto-analyze: 3 due; analyzed 3 partitions of 1 table")
    accurate = lab.tables["moved"].inspect.staleness().set_index("partition")["accurate"].to_dict()
    assert accurate == {"d=a": True, "d=b": False, "d=c": True, "d=d": True, "d=e": True}
    rows = lab.tables["moved"].to_spark().toPandas()
    for part in ("a", "c", "e"):
        want = rows[rows.d == part]
        got = stats_of(lab, "moved", f"d={part}")
        assert (got["v"].rows, int(got["v"].max), got["v"].ndv) == (len(want), want.v.max(), want.v.nunique())
    again = lab.autoanalyze(threshold=0.3).details
    assert again.due == [] and again.analyzed == []


def test_the_threshold_at_its_edge(lab):
    stale_table(lab)
    lab.autoanalyze(threshold=0.3)  # a, c, e
    assert lab.autoanalyze(threshold=4 / 14 + 1e-9).details.due == []
    picked = lab.autoanalyze(threshold=4 / 14).details
    assert [d.owner for d in picked.due] == ["d=b"] and picked.analyzed[0]["owners"] == ["d=b"]
    with pytest.raises(InvalidArgument, match="between 0 and 1"):
        lab.autoanalyze(threshold=1.5)
    with pytest.raises(InvalidArgument, match="mode is one of all, existing"):
        lab.autoanalyze(mode="some")
    with pytest.raises(InvalidArgument, match="duration such as 90s"):
        lab.autoanalyze(budget="ten minutes")


def test_existing_refreshes_the_columns_analyzed_before_and_leaves_the_never_analyzed(lab):
    lab.sql("CREATE TABLE two (v INT, w STRING) PARTITIONED BY (d STRING)")
    lab.set("hive.stats.column.autogather", False)
    lab.tables["two"].write(pd.DataFrame({"v": [1, 2], "w": ["a", "b"]}), partition={"d": "old"})
    lab.sql("ANALYZE TABLE two PARTITION (d='old') COMPUTE STATISTICS FOR COLUMNS v")
    lab.tables["two"].write(pd.DataFrame({"v": [3, 4], "w": ["c", "d"]}), partition={"d": "old"})  # 2 of 4
    lab.tables["two"].write(pd.DataFrame({"v": [9], "w": ["z"]}), partition={"d": "new"})
    existing = lab.autoanalyze(mode="existing").details
    assert [d.owner for d in existing.due] == ["d=old"] and existing.analyzed[0]["columns"] == "v"
    old = stats_of(lab, "two", "d=old")
    assert (old["v"].rows, int(old["v"].max), old["v"].accurate) == (4, 4, True)
    assert "w" not in old or old["w"].accurate is not True  # never analyzed there: left so
    assert lab.tables["two"].inspect.staleness().set_index("partition").loc["d=new", "accurate"] is False
    assert lab.autoanalyze(mode="existing").details.due == []  # v is accurate again: nothing more to refresh
    everything = lab.autoanalyze(mode="all").details  # every column, where some never were analyzed too
    assert [d.owner for d in everything.due] == ["d=new", "d=old"] and everything.analyzed[0]["columns"] == "all"
    new, old = stats_of(lab, "two", "d=new"), stats_of(lab, "two", "d=old")
    assert new["w"].accurate and new["v"].rows == 1 and old["w"].accurate and old["w"].ndv == 4


def test_an_opted_out_table_and_an_open_write_wait(lab):
    stale_table(lab)
    lab.sql("ALTER TABLE moved SET TBLPROPERTIES ('skip.stats.autoupdate'='true', 'owner.team'='ads')")
    held = lab.autoanalyze().details
    assert held.due == [] and held.held_back == {"default.moved": "skip.stats.autoupdate=true"}
    assert lab.sql("SHOW TBLPROPERTIES moved ('owner.team')").df.values.tolist() == [["owner.team", "ads"]]
    lab.sql("ALTER TABLE moved UNSET TBLPROPERTIES ('skip.stats.autoupdate')")
    with lab.transaction() as txn:
        lab.tables["moved"].write(pd.DataFrame({"v": [1], "w": ["x"]}), partition={"d": "c"}, txn=txn)
        during = lab.autoanalyze().details
        assert "d=c" not in {d.owner for d in during.due}
        assert during.held_back["default.moved d=c"] == f"open write in transaction {txn.txn_id}"
    after = lab.autoanalyze().details  # the write committed: d=c is due again, with its new row
    assert [d.owner for d in after.due] == ["d=c"]
    assert stats_of(lab, "moved", "d=c")["v"].rows == 21
    with pytest.raises(InvalidArgument, match="numRows is the lab's own statistics"):
        lab.sql("ALTER TABLE moved SET TBLPROPERTIES ('numRows'='5')")


def test_the_budget_leaves_the_rest_for_the_next_round(lab):
    stale_table(lab, "first")
    stale_table(lab, "second")
    one = lab.autoanalyze(budget=0).details  # a round analyzes at least one table
    assert [a["table"] for a in one.analyzed] == ["default.first"]
    assert {d.table for d in one.left} == {"second"} and "left for the next round" in one.message
    two = lab.autoanalyze(budget="10m").details
    assert [a["table"] for a in two.analyzed] == ["default.second"]



def test_check_and_the_landing_say_what_is_queued(lab, capsys):
    from colstats_lab.cli import main as cli_main
    from colstats_lab.workbench.dashboard import Dashboard

    assert Dashboard(lab).workers.value == ""  # no worker ever ran: nothing said
    nothing = lab.autoanalyze.queue()
    assert nothing.empty and nothing.attrs["options"] is None and lab.autoanalyze.rounds().empty
    stale_table(lab)
    lab.autoanalyze(threshold=0.3, budget=0)
    lab.tables["moved"].write(pd.DataFrame({"v": list(range(20)), "w": ["late"] * 20}), partition={"d": "a"})  # 20 of 35
    shown = Dashboard(lab).workers.value
    assert "3 of 3 due analyzed in 1 table," in shown and "Queue</b> (1 partition due" in shown, shown
    assert "default.moved d=a (57% of rows changed)" in shown
    rounds, queue = lab.autoanalyze.rounds(), lab.autoanalyze.queue()  # the same, as frames
    assert len(rounds) == 1 and (rounds["due"][0], rounds["analyzed"][0], rounds["tables"][0]) == (3, 3, ["default.moved"])
    took = (rounds["ended_at"][0] - rounds["started_at"][0]).total_seconds()
    assert rounds["seconds"][0] == pytest.approx(took, abs=1e-5) and took >= 0
    assert rounds["options"][0]["threshold"] == 0.3
    assert queue[["table", "partition"]].values.tolist() == [["default.moved", "d=a"]]
    assert queue["changed_fraction"][0] == pytest.approx(20 / 35) and queue.attrs["options"].threshold == 0.3
    capsys.readouterr()
    assert cli_main(["--home", lab.home, "check", "moved", "--show", "50"]) == 1
    said = capsys.readouterr().out
    assert "d=a v: partition changed by write" in said and "; stale, queued for auto-analyze" in said
    assert [line for line in said.splitlines() if "d=b" in line and "queued" in line] == []  # 29%: below 30%


def test_a_partition_another_job_left_unreadable_fails_alone(lab, tmp_path):
    """One ANALYZE a table, until it fails: then the due partitions one by one, so a file another job wrote
    with the wrong type keeps its own partition stale, not the table's others."""
    root = tmp_path / "ext"
    for day in ("d1", "d2", "d3"):
        (root / f"ds={day}").mkdir(parents=True)
        pd.DataFrame({"v": list(range(10)), "s": ["a"] * 10}).to_parquet(root / f"ds={day}" / "part-0.parquet")
    lab.register_external("ext", str(root), partition_types={"ds": "string"})
    assert lab.autoanalyze().details.analyzed[0]["owners"] == ["ds=d1", "ds=d2", "ds=d3"]
    for day in ("d1", "d2"):
        pd.DataFrame({"v": [99], "s": ["b"]}).to_parquet(root / f"ds={day}" / "part-1.parquet")
    pd.DataFrame({"v": [7], "s": [1]}).to_parquet(root / "ds=d3" / "part-1.parquet")  # s written as a number
    round_ = lab.autoanalyze().details
    assert sorted(o for a in round_.analyzed for o in a["owners"]) == ["ds=d1", "ds=d2"]
    assert [f["table"] for f in round_.failed] == ["default.ext ds=d3"] and "s" in round_.failed[0]["error"]
    accurate = lab.tables["ext"].inspect.staleness().set_index("partition")["accurate"].to_dict()
    assert accurate == {"ds=d1": True, "ds=d2": True, "ds=d3": False}


def test_a_write_that_commits_during_the_workers_analyze_leaves_its_partition_stale(lab):
    """HIVE-19416's rule for the worker: its statistics carry its own write ID, so a write committed after
    the worker took its snapshot (here: when its ANALYZE first asks for Spark) leaves the partition stale."""
    from colstats_lab.analyze.autoanalyze import AutoAnalyzeOptions, run_round

    stale_table(lab)
    late = pd.DataFrame({"v": [5000], "w": ["late"]})

    def spark_after_a_write():
        lab.tables["moved"].write(late, partition={"d": "c"})  # commits while the worker's ANALYZE holds its snapshot
        return lab.spark
    outcome = run_round(spark_after_a_write, lab.metastore, AutoAnalyzeOptions(threshold=0.3), lab.transaction)
    assert outcome.analyzed[0]["owners"] == ["d=e", "d=c", "d=a"]
    frame = lab.tables["moved"].inspect.staleness().set_index("partition")
    assert frame.loc["d=a", "accurate"] and frame.loc["d=e", "accurate"]
    assert not frame.loc["d=c", "accurate"] and "changed by write" in frame.loc["d=c", "reason"], frame.loc["d=c"]
    stored = stats_of(lab, "moved", "d=c")["v"]
    assert (stored.rows, int(stored.max)) == (20, 1009)  # what the worker read: the late row is not in it


def test_a_write_into_one_partition_never_holds_back_the_whole_table(lab, new_metastore):
    """A write whose partition is named up front is that partition's open write from its write ID on: a worker
    judging the table meanwhile (here: another connection polling as the write runs) holds back that partition
    only, never every partition of the table."""
    import threading

    stale_table(lab)
    watcher = new_metastore(os.environ.get("COLSTATS_METASTORE") or lab.metastore.path)  # the lab fixture's, password too
    seen: list[dict[str, int]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            writes = watcher.autoanalyze_claims.open_writes("default", "moved")
            if writes:
                seen.append(writes)
    polling = threading.Thread(target=watch)
    polling.start()
    try:
        for i in range(3):
            with lab.transaction() as txn:
                lab.tables["moved"].write(pd.DataFrame({"v": [2000 + i], "w": ["x"]}), partition={"d": "c"}, txn=txn)
    finally:
        done.set()
        polling.join()
    assert seen and all(set(writes) == {"d=c"} for writes in seen), [w for w in seen if set(w) != {"d=c"}][:3]
