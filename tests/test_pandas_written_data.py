"""Data as pandas and pyarrow write it (camelCase and non-ASCII names, NaN for a missing float, a nullable
integer's NA, nanosecond timestamps, None strings), through every path a user takes: a write, DESCRIBE, the views
and their names, the CLI, a damaged file, NaN beside NULL, a struct, Spark's plan. Each figure is checked against
pandas over the same rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.cli import main as cli_main
from colstats_lab.metastore import COLUMN_STATS_ACCURATE


def _events(rows: int = 3000, seed: int = 3) -> pd.DataFrame:
    """What pandas users write: NaN for a missing float, a nullable integer, nanosecond timestamps, None strings."""
    rng = np.random.default_rng(seed)
    amount = rng.normal(50, 20, rows)
    amount[rng.random(rows) < 0.1] = np.nan
    user = pd.array(rng.integers(0, 500, rows), dtype="Int64")
    user[rng.random(rows) < 0.2] = pd.NA
    at = pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 10**15, rows), unit="ns")
    name = np.array(["Łukasz", "Zoë", None, "Ana"], dtype=object)[rng.integers(0, 4, rows)]
    return pd.DataFrame({"amountEUR": amount, "userId": user, "eventTs": at, "naïveName": name})


@pytest.mark.parametrize("nanoseconds", [True, False], ids=["with-nanoseconds", "microseconds-only"])
def test_a_pandas_write_keeps_its_missing_values_null_whatever_else_the_frame_holds(lab, nanoseconds):
    """PySpark fell back to converting row by row when one column (nanoseconds) failed Arrow's safe cast; that
    path kept NaN as a value and made a nullable integer's NA a NaN the cast to BIGINT refused."""
    frame = _events()
    if not nanoseconds:
        frame["eventTs"] = frame["eventTs"].dt.floor("us")
    lab.sql("CREATE TABLE ev (amountEUR DOUBLE, userId BIGINT, eventTs TIMESTAMP, `naïveName` STRING)")
    written = lab.tables["ev"].write(frame)

    lost = int((frame["eventTs"].dt.nanosecond != 0).sum())
    assert (lost > 0) == nanoseconds
    assert written.notes == ([f"{lost:,} values of eventTs had nanoseconds: truncated to microseconds, as Spark "
                              f"keeps timestamps"] if nanoseconds else [])
    rows = lab.tables["ev"].to_spark()
    counts = rows.selectExpr("count(amounteur)", "sum(CAST(isnan(amounteur) AS INT))", "count(userid)",
                             "count(`naïvename`)").first()
    assert list(counts) == [frame["amountEUR"].notna().sum(), 0, frame["userId"].notna().sum(),
                            frame["naïveName"].notna().sum()]
    read_back = rows.select("eventts").toPandas()["eventts"].sort_values(ignore_index=True)
    assert read_back.equals(frame["eventTs"].dt.floor("us").sort_values(ignore_index=True).astype(read_back.dtype))

    stats = lab.tables["ev"].inspect.stats().set_index("column")  # a managed table's names are Hive's, lower case
    assert stats.loc["amounteur", "nulls"] == frame["amountEUR"].isna().sum()
    assert stats.loc["amounteur", "max"] == pytest.approx(frame["amountEUR"].max())
    assert stats.loc["userid", "nulls"] == frame["userId"].isna().sum()
    assert bool(stats.loc["amounteur", "accurate"])

    figures = lab.analyze_frame(frame).set_index("column")
    assert figures.loc["amountEUR", "nulls"] == frame["amountEUR"].isna().sum()
    assert figures.loc["userId", "nulls"] == frame["userId"].isna().sum()
    assert figures.attrs["notes"] == written.notes


def test_a_pandas_frame_spark_cannot_hold_is_refused_by_its_column(lab):
    lab.sql("CREATE TABLE u (big BIGINT)")
    with pytest.raises(Exception) as refused:
        lab.tables["u"].write(pd.DataFrame({"big": np.array([1, 2**64 - 1], dtype="uint64")}))
    assert type(refused.value).__name__ == "InvalidArgument"
    assert str(refused.value) == ("cannot read the pandas DataFrame written into default.u: column big (uint64) holds "
                                  "values above 9,223,372,036,854,775,807, which no Spark integer type holds")


@pytest.fixture
def events_on_disk(tmp_path):
    """An external table pyarrow wrote: camelCase names, one file a partition."""
    root = tmp_path / "events"
    frame = _events(2000)
    frame["eventDate"] = np.array([f"2026-01-0{d}" for d in range(1, 5)])[np.arange(len(frame)) % 4]
    for day, part in frame.groupby("eventDate"):
        (root / f"eventDate={day}").mkdir(parents=True)
        pq.write_table(pa.Table.from_pandas(part.drop(columns="eventDate"), preserve_index=False),
                       root / f"eventDate={day}" / "part-0.parquet")
    return root, frame


def test_the_table_level_describe_says_what_its_partitions_say_after_another_job_writes(lab, events_on_disk, capsys):
    root, frame = events_on_disk
    lab.register_external("events", str(root))
    lab.tables["events"].analyze()

    def table_rows() -> dict[str, str]:
        rows = lab.sql("DESCRIBE FORMATTED events").df
        return {(r.col_name.strip() or r.data_type.strip()): r.comment.strip() or r.data_type.strip()
                for r in rows.itertuples()}
    before = table_rows()
    assert before[COLUMN_STATS_ACCURATE] == '{"BASIC_STATS":"true"}'
    assert before["numRows"] == str(len(frame))

    extra = frame[frame.eventDate == "2026-01-03"].head(100).drop(columns="eventDate")
    pq.write_table(pa.Table.from_pandas(extra, preserve_index=False), root / "eventDate=2026-01-03" / "part-1.parquet")
    after = table_rows()
    assert COLUMN_STATS_ACCURATE not in after
    assert after["Statistics:"] == ("not accurate: in 1 of 4 partitions (partition eventDate=2026-01-03: files "
                                    "changed since the last analyze (1 added, 0 removed, 0 rewritten))")
    assert after["Rows changed since analyze:"] == ("unknown in all 4 partitions (not written through the lab since "
                                                    "their statistics were kept)")
    assert cli_main(["--home", lab.home, "describe", "events"]) == 0
    printed = capsys.readouterr().out
    assert "not accurate: in 1 of 4 partitions" in printed and '{"BASIC_STATS":"true"}' not in printed


def test_an_equality_is_estimated_from_the_frequent_values_the_statistics_keep(lab, tmp_path):
    """`eventType = 'click'` was estimated at 1/NDV of the rows when the frequent-items sketch held it at 39 %."""
    rng = np.random.default_rng(11)
    rows = 40_000
    kinds = np.array(["view", "buy", "cart", "search", "login", "logout", "share", "like"])
    kind = np.where(rng.random(rows) < 0.39, "click", kinds[rng.integers(0, 8, rows)]).astype(object)
    noise = rng.random(rows) < 0.2  # a fifth of the rows over values seen once or twice: no sketch lists them
    kind[noise] = [f"u{i}" for i in rng.integers(0, 100_000, int(noise.sum()))]
    frame = pd.DataFrame({"eventType": kind, "userId": rng.integers(0, 5000, rows)})
    (tmp_path / "clicks").mkdir()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "clicks" / "part-0.parquet")
    lab.register_external("clicks", str(tmp_path / "clicks"))
    lab.sql("ALTER TABLE clicks SET TBLPROPERTIES ('colstats.frequent.items.columns'='eventType')")
    lab.tables["clicks"].analyze()

    def estimate(condition: str):
        return lab.explain(f"SELECT count(*) FROM clicks WHERE {condition}").estimate

    for value in ("click", "buy"):
        found = estimate(f"eventType = '{value}'")
        assert found.rows == pytest.approx((frame.eventType == value).sum(), rel=0.01)
        assert found.how == [f"eventtype: {value} among its frequent values "
                             f"({(frame.eventType == value).mean():.1%})"]
    seen_once = frame.eventType[noise].value_counts().index[-1]
    rare = estimate(f"eventType = '{seen_once}'")  # not listed: what the listed leave, over the other distinct values
    left = 1 - frame.eventType.value_counts(normalize=True).head(9).sum()
    assert rare.how[0].startswith(f"eventtype: not among its 9 frequent values: {left:.1%} of the values over the other ")
    assert rare.rows == round(noise.sum() / frame.eventType[noise].nunique())
    both = estimate("eventType IN ('click', 'buy')")
    assert both.rows == pytest.approx(frame.eventType.isin(["click", "buy"]).sum(), rel=0.01)
    assert estimate("eventType <> 'click'").rows == pytest.approx((frame.eventType != "click").sum(), rel=0.01)
    assert estimate("userId = 7").how == ["userid: 1/NDV"]  # no frequent values kept of it


def test_a_column_the_table_lacks_is_refused_by_name_on_every_path(lab, events_on_disk):
    """It was given an estimate (`OPAQUE() = 1 taken as 0.33`) by explain and the dashboard's Pruning box."""
    from colstats_lab import NoSuchObjectException
    from colstats_lab.ui.pruning_view import PruningPanel

    root, _ = events_on_disk
    lab.register_external("events", str(root))
    lab.tables["events"].analyze()
    line = "column nosuch does not exist in table default.events"
    paths = {"explain": lambda: lab.explain("SELECT count(*) FROM events WHERE nosuch = 1"),
             "explain, qualified": lambda: lab.explain("SELECT count(*) FROM events e WHERE e.nosuch = 1"),
             "stats_answer": lambda: lab.stats_answer("SELECT count(*) FROM events WHERE nosuch = 1"),
             "sql": lambda: lab.sql("SELECT count(*) FROM events WHERE nosuch = 1"),
             "planned_read": lambda: lab.tables["events"].planned_read("nosuch = 1")}
    for path, call in paths.items():
        with pytest.raises(NoSuchObjectException) as refused:
            call()
        assert str(refused.value).replace("e.nosuch", "nosuch") == line, path
    with pytest.raises(NoSuchObjectException, match="column userId2 does not exist in table default.events; did "
                                                    "you mean userId?"):
        lab.explain("SELECT count(*) FROM events WHERE userId2 > 3")
    panel = PruningPanel(lab, "events")
    panel.where.value = "nosuch = 1"
    assert line in panel.report_area.children[0].value and "OPAQUE" not in panel.answer.value
    # what the table has still plans: a struct-free condition on a column and the key
    assert lab.explain("SELECT count(*) FROM events WHERE userId > 3 AND eventDate = '2026-01-02'").estimate.rows


@pytest.fixture
def damaged(lab, tmp_path):
    """An external table pyarrow wrote, then another job left a file that is not Parquet in one partition and
    a file cut short in another."""
    root = tmp_path / "damaged"
    for k in range(3):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"v": list(range(k * 10, k * 10 + 10))}), root / f"k={k}" / "a.parquet")
    lab.register_external("t", str(root))
    lab.tables["t"].analyze()
    (root / "k=1" / "garbage.parquet").write_bytes(b"this is not parquet at all, just some bytes")
    whole = (root / "k=2" / "a.parquet").read_bytes()
    (root / "k=2" / "short.parquet").write_bytes(whole[: len(whole) // 2])
    return lab, root


def test_a_damaged_file_is_one_line_naming_it_on_every_path(damaged, capfd):
    """Every reading path raised pyarrow's ArrowInvalid through 26 frames; Spark's task failures printed
    their stacks to stderr."""
    from colstats_lab import ColstatsError
    from colstats_lab.ui.pruning_view import PruningPanel

    lab, root = damaged
    garbage, short = str(root / "k=1" / "garbage.parquet"), str(root / "k=2" / "short.parquet")
    capfd.readouterr()
    paths = {"count": lambda: lab.sql("SELECT count(*) FROM t"),
             "filter": lambda: lab.sql("SELECT count(*) FROM t WHERE v > 3"),
             "explain": lambda: lab.explain("SELECT count(*) FROM t WHERE v > 3"),
             "explain run": lambda: lab.explain("SELECT count(*) FROM t WHERE v > 3", run=True),
             "analyze": lambda: lab.tables["t"].analyze(),
             "skew": lambda: lab.tables["t"].skew("v")}
    for path, call in paths.items():
        with pytest.raises(ColstatsError) as refused:
            call()
        said = str(refused.value)
        assert "\n" not in said and (garbage in said or short in said), (path, said)
        assert "Parquet" in said, (path, said)
    panel = PruningPanel(lab, "t")
    panel.where.value = "v > 3"
    assert garbage in panel.report_area.children[0].value
    assert lab.sql("DESCRIBE FORMATTED t").df is not None  # the metastore alone: still answers

    assert cli_main(["--home", lab.home, "sql", "SELECT count(*) FROM t"]) == 2
    assert cli_main(["--home", lab.home, "analyze", "t"]) == 2
    printed = capfd.readouterr().err  # the process's own stderr: Spark's JVM writes there too
    said = [line for line in printed.splitlines() if line.startswith("colstats-lab:")]
    assert len(said) == 2 and garbage in said[0] and short in said[1]
    assert "Spark's log of it: " in said[1]
    log = said[1].rsplit("Spark's log of it: ", 1)[1].rstrip(")")
    assert "ERROR Executor" in open(log).read()  # the task's failure and stack: in the file, not on the terminal
    assert "ERROR" not in printed and "\tat org.apache" not in printed, printed[:2000]


def test_a_round_and_analyze_stale_say_what_they_analyzed_and_why(damaged):
    """The summary said "analyzed 19 in 19 table(s)" for 19 partitions of 3 tables, and analyze_stale
    "changed by 30% or more" of partitions whose change it had not counted."""
    lab, root = damaged
    lab.sql("CREATE TABLE p (v INT) PARTITIONED BY (d STRING)")
    for d in ("a", "b"):
        lab.tables["p"].write(pd.DataFrame({"v": [1, 2, 3]}), partition={"d": d})
    lab.sql("CREATE TABLE u (v INT)")
    lab.tables["u"].write(pd.DataFrame({"v": [1, 2, 3]}))
    lab.set("hive.stats.column.autogather", False)
    lab.tables["p"].write(pd.DataFrame({"v": [4]}), partition={"d": "a"})
    lab.tables["u"].write(pd.DataFrame({"v": [4]}))
    (root / "k=1" / "garbage.parquet").unlink()  # k=1 changed (a file came and went: analyzed again); k=2 is damaged
    pq.write_table(pa.table({"v": [99]}), root / "k=1" / "late.parquet")

    outcome = lab.autoanalyze(threshold=0.2).details
    analyzed = {a["table"]: a["owners"] for a in outcome.analyzed}
    assert analyzed == {"default.p": ["d=a"], "default.t": ["k=1"], "default.u": [None]}
    assert outcome.message.startswith("Auto-analyze: 4 due; analyzed 2 partitions of 2 tables and 1 unpartitioned "
                                      "table; 1 failed: default.t k=2: ")
    (root / "k=2" / "short.parquet").unlink()  # k=2's files are again those its statistics were computed from
    pq.write_table(pa.table({"v": [5]}), root / "k=0" / "more.parquet")
    stale = lab.tables["t"].analyze_stale(threshold=0.5)
    assert stale.message.startswith("Analyzed 1 of 3 partitions: not accurate, by rows the lab did not count "
                                    "(k=0: files changed since the last analyze (1 added, 0 removed, 0 rewritten)). "
                                    "Analyzed default.t: ")


@pytest.fixture
def as_a_script():
    """This process as a script sees it: no IPython shell (other tests in the session make one, and in a
    shell a view's figures are displayed, as they should be)."""
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.clear_instance()
    yield


def test_every_view_names_columns_and_partitions_as_the_files_spell_them(lab, events_on_disk, as_a_script):
    """The Freshness, Drift and Skew tabs and every partition name used Hive's lower case (`eventdate=...`)
    where the statistics view used the files' spelling; a name shown is a name taken back."""
    import io
    import re
    from contextlib import redirect_stdout

    root, frame = events_on_disk
    lab.register_external("events", str(root))
    lab.tables["events"].analyze()
    events = lab.tables["events"]
    lowered = re.compile(r"eventdate=|\b(amounteur|userid|naïvename|eventts)\b")

    for name, shown in {"stats": events.inspect.stats(), "freshness": events.inspect.freshness(),
                        "staleness": events.inspect.staleness(),
                        "across_partitions": events.inspect.across_partitions("userId")}.items():
        text = shown.to_string()
        assert not lowered.search(text), (name, lowered.search(text))
        assert "eventDate=2026-01-01" in text, name
    assert set(events.inspect.stats()["column"]) >= {"amountEUR", "userId", "naïveName", "eventTs"}
    found = events.inspect.partitions("eventDate=2026-01-0")
    assert list(found["partition"]) == [f"eventDate=2026-01-0{d}" for d in range(1, 5)] and found.attrs["total"] == 4
    # what is shown is taken back
    assert events.partition_record("eventDate=2026-01-02").partName == "eventdate=2026-01-02"
    level = events.stats_level("eventDate=2026-01-02")
    counted = frame[frame.eventDate == "2026-01-02"]
    assert level.rows == len(counted)
    assert level.frame.set_index("column").loc["userid", "nulls"] == counted["userId"].isna().sum()
    assert len(events.inspect.history("userId", partition="eventDate=2026-01-02")) == 1

    with redirect_stdout(io.StringIO()) as printed:  # a view made from a script prints nothing
        freshness = lab.views("freshness", "events")
        drift = lab.views("drift", "events", "userId")
        skew = lab.views.skew("events", "naïveName")
    assert printed.getvalue() == ""
    assert not lowered.search(freshness.figure.to_json()) and "amountEUR" in freshness.figure.to_json()
    assert "events.userId" in drift.header.value and "eventDate=2026-01-04" in drift.figure.to_json()
    assert [label for label, _ in drift.column.options][:2] == ["amountEUR", "userId"]
    assert "events.naïveName" in skew.header.value
    assert [label for label, _ in skew.level.options][1] == "eventDate=2026-01-01"
    assert "eventDate=2026-01-01" in skew.heatmap.to_json() and "eventdate=" not in skew.heatmap.to_json()


def test_registering_gives_the_handle_and_a_deprecated_view_prints_nothing(lab, events_on_disk, as_a_script):
    """register_external returned a Thrift Table repr of hundreds of characters, and lab.view_stats(...) run
    from a script printed plotly's JSON to stdout."""
    import io
    import warnings
    from contextlib import redirect_stdout

    from colstats_lab.handles import TableHandle

    root, _ = events_on_disk
    handle = lab.register_external("events", str(root))
    assert isinstance(handle, TableHandle) and repr(handle) == "<TableHandle default.events>"
    handle.analyze()
    with redirect_stdout(io.StringIO()) as printed, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = lab.view_stats("events")
    assert printed.getvalue() == "" and "2,000 rows" in view.header.value


def test_the_cli_says_how_many_partitions_were_accurate_and_analyzes_only_the_stale_ones(lab, events_on_disk, capsys):
    """`colstats-lab analyze t` rescanned all partitions when 1 of 4 changed, and said nothing of analyze_stale."""
    root, frame = events_on_disk
    lab.register_external("events", str(root))
    assert cli_main(["--home", lab.home, "analyze", "events"]) == 0
    first = capsys.readouterr().out
    assert "were accurate already" not in first  # none was: nothing to say
    extra = frame[frame.eventDate == "2026-01-02"].head(10).drop(columns="eventDate")
    pq.write_table(pa.Table.from_pandas(extra, preserve_index=False), root / "eventDate=2026-01-02" / "late.parquet")
    assert cli_main(["--home", lab.home, "analyze", "events", "--stale"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("Analyzed 1 of 4 partitions: not accurate, by rows the lab did not count "
                           "(eventDate=2026-01-02: files changed since the last analyze (1 added, 0 removed, 0 rewritten))")
    stats = lab.tables["events"].inspect.stats()
    assert bool(stats["accurate"].all())
    day = stats[(stats.partition == "eventDate=2026-01-02") & (stats.column == "userId")].iloc[0]
    assert day["rows"] == (frame.eventDate == "2026-01-02").sum() + 10
    pq.write_table(pa.Table.from_pandas(extra, preserve_index=False), root / "eventDate=2026-01-03" / "late.parquet")
    assert cli_main(["--home", lab.home, "analyze", "events"]) == 0
    assert ("3 of 4 partitions were accurate already: `colstats-lab analyze events --stale` analyzes only those "
            "that are not") in capsys.readouterr().out


@pytest.fixture
def with_nan_and_struct(tmp_path):
    """pyarrow's file with NaN kept as a value (from_pandas=False, as Spark and most writers keep it), NULLs, and
    a struct that is NULL in some rows and holds NaN in others."""
    rng = np.random.default_rng(8)
    rows = 3000
    amount = rng.normal(size=rows)
    amount[rng.random(rows) < 0.05] = np.nan
    amount_nulls = rng.random(rows) < 0.1
    lat = rng.normal(size=rows)
    lat[rng.random(rows) < 0.1] = np.nan
    struct_nulls = rng.random(rows) < 0.2
    geo = pa.StructArray.from_arrays([pa.array(lat, from_pandas=False), pa.array(rng.integers(0, 5, rows))],
                                     names=["lat", "zone"], mask=pa.array(struct_nulls))
    table = pa.table({"id": np.arange(rows), "amount": pa.array(amount, mask=amount_nulls), "geo": geo})
    for day in ("a", "b"):
        (tmp_path / "nan" / f"d={day}").mkdir(parents=True)
        pq.write_table(table, tmp_path / "nan" / f"d={day}" / "part-0.parquet")
    expected = {"amount": (int(amount_nulls.sum()), int((np.isnan(amount) & ~amount_nulls).sum())),
                "geo": (int(struct_nulls.sum()), None),
                "geo.lat": (int(struct_nulls.sum()), int((np.isnan(lat) & ~struct_nulls).sum()))}
    return tmp_path / "nan", expected


def test_nan_is_counted_apart_from_null_and_a_struct_has_a_row_of_its_own(lab, with_nan_and_struct, capsys):
    """A double holding NaN showed nulls 0 and max NaN with no word of the NaN; a struct's own NULLs (a tenth of
    the rows in the trial) were nowhere."""
    root, expected = with_nan_and_struct
    lab.register_external("t", str(root))
    assert "(id, amount, geo, geo.lat, geo.zone)" in lab.tables["t"].analyze().message
    stats = lab.tables["t"].inspect.stats()
    for partition, times in ((None, 2), ("d=a", 1)):
        level = stats[stats.partition.isna()] if partition is None else stats[stats.partition == partition]
        figures = level.set_index("column")
        for column, (nulls, nans) in expected.items():
            assert figures.loc[column, "nulls"] == nulls * times, (partition, column)
            assert (figures.loc[column, "nans"] is None if nans is None
                    else figures.loc[column, "nans"] == nans * times), (partition, column)
        assert figures.loc["geo", "type"] == "struct<lat:double,zone:bigint>" and bool(figures.loc["geo", "accurate"])
        assert figures.loc["id", "nans"] is None  # not a double
    # min/max keep Spark's order, as its max() does: NaN above every number
    assert lab.sql("SELECT max(amount) FROM t").df.iloc[0, 0] != lab.sql("SELECT max(amount) FROM t").df.iloc[0, 0]
    described = dict(lab.sql("DESCRIBE FORMATTED t amount").df.values)
    assert described["max"] == "NaN" and described["num_nans"] == str(expected["amount"][1] * 2)
    assert dict(lab.sql("DESCRIBE FORMATTED t geo").df.values)["num_nulls"] == str(expected["geo"][0] * 2)
    history = lab.tables["t"].inspect.history("amount", partition="d=a")
    assert history["nans"].tolist() == [expected["amount"][1]]
    view = lab.views.stats("t")
    assert f"{expected['amount'][1] * 2:,} NaN" in view.table_html.value
    lab.tables["t"].report(str(root.parent / "t.html"))
    assert f"{expected['amount'][1] * 2:,} NaN" in (root.parent / "t.html").read_text()
    # a struct's row is the lab's: never published as a Hive or Spark column statistic
    from colstats_lab.interop.hms_publish import STRUCT_NOT_EXPORTED, not_exported
    assert not_exported(lab.resolve("t"))["geo"] == STRUCT_NOT_EXPORTED
    # naming the struct analyzes it and its leaves
    assert lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS geo").details.columns == ["geo", "geo.lat",
                                                                                              "geo.zone"]


def test_a_table_pandas_wrote_with_nanosecond_timestamps_is_planned_with_its_statistics(lab, tmp_path, spark):
    """Such a table was planned "sizes only (read as files)": explain had no estimate for any pandas-written table,
    and with CBO on named a join key "without column statistics" that had them."""
    rng = np.random.default_rng(12)
    facts = pd.DataFrame({"k": rng.integers(0, 100, 5000),
                          "at": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 10**15, 5000), unit="ns")})
    dims = pd.DataFrame({"k": np.arange(100), "name": [f"n{i % 7}" for i in range(100)]})
    for name, frame in (("facts", facts), ("dims", dims)):
        (tmp_path / name).mkdir()
        frame.to_parquet(tmp_path / name / "part-0.parquet")  # pandas' defaults: nanoseconds kept
        lab.register_external(name, str(tmp_path / name))
        lab.tables[name].analyze()
    assert pq.read_schema(tmp_path / "facts" / "part-0.parquet").field("at").type == pa.timestamp("ns")
    before = spark.conf.get("spark.sql.cbo.enabled")
    spark.conf.set("spark.sql.cbo.enabled", "true")
    try:
        query = ("SELECT d.name, count(*), max(f.at) FROM facts f JOIN dims d ON f.k = d.k "
                 "WHERE f.at >= TIMESTAMP '2026-01-05' GROUP BY d.name")
        report = lab.explain(query, run=True)
    finally:
        spark.conf.set("spark.sql.cbo.enabled", before)
    scans = report.operators[report.operators["node"].str.startswith("Scan")].set_index("node")
    assert scans.loc["Scan default.facts", "statistics"].startswith("the lab's: 5,000 rows"), scans["statistics"]
    join = report.operators[report.operators["node"].str.startswith("Join")].iloc[0]
    assert not pd.isna(join["estimated_rows"]) and "without column statistics" not in str(join["cause"])
    kept = facts[facts["at"] >= pd.Timestamp("2026-01-05")]
    assert join["actual_rows"] == len(kept.merge(dims, on="k"))
    answer = lab.sql(query).df.set_index("name").sort_index()
    truth = kept.merge(dims, on="k").groupby("name")["at"].agg(["count", "max"])
    assert answer.iloc[:, 0].tolist() == truth["count"].tolist()
    assert [pd.Timestamp(v) for v in answer.iloc[:, 1]] == [v.floor("us") for v in truth["max"]]
