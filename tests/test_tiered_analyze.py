"""The tiered ANALYZE: exact from the files' metadata where the writer made it exact, a sample of row groups with
bands that hold where not. Truths come from pandas over the rows written; every stated band is checked."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.column_statistics.estimators import tiered_columns
from colstats_lab.errors import ColstatsError

ROW_GROUP = 2_000


def _distributions(rows: int, seed: int = 0) -> pd.DataFrame:
    """The shapes a sample finds hardest: unique and sorted, clustered by row group, skewed, uniform, Zipf-tailed
    strings, 99 % NULL, dates by file."""
    rng = np.random.default_rng(seed)
    zipf = np.minimum(rng.zipf(1.3, rows), 50_000)
    sparse = pd.array(rng.integers(0, 1_000, rows), dtype="Int64")
    sparse[rng.random(rows) >= 0.01] = pd.NA
    return pd.DataFrame({
        "sortedId": np.arange(rows, dtype=np.int64),
        "clustered": (np.arange(rows) // ROW_GROUP) * 7 + rng.integers(0, 5, rows),
        "skewed": np.where(rng.random(rows) < 0.8, 0, rng.integers(1, 40, rows)),
        "uniform": rng.integers(0, 20_000, rows),
        "zipfName": np.array([f"name-{z}" for z in zipf], dtype=object),
        "mostlyNull": sparse,
        "amount": np.where(rng.random(rows) < 0.1, np.nan, rng.normal(100, 30, rows)),
        "flag": rng.random(rows) < 0.3,
    })


def _write_files(frame: pd.DataFrame, folder, files: int, dictionary) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    per_file = len(frame) // files
    for i in range(files):
        part = frame.iloc[i * per_file:(i + 1) * per_file].copy()
        part["day"] = pd.Timestamp("2026-01-01").date() + pd.Timedelta(days=i)  # dates by file
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{i}.parquet",
                       row_group_size=ROW_GROUP, use_dictionary=dictionary)


def _truth(frame: pd.DataFrame, column: str) -> dict:
    values = frame[column]
    out = {"rows": len(values), "nulls": int(values.isna().sum())}
    if values.dtype == bool:
        out.update(trues=int(values.sum()), falses=int((~values).sum()))
        return out
    out["ndv"] = int(values.dropna().nunique())
    if values.dtype == object and values.map(lambda v: v is None or isinstance(v, str)).all():
        lengths = values.map(lambda v: 0 if v is None else len(v))
        out.update(avg_len=float(lengths.mean()), max_len=int(lengths.max()))
    elif values.dtype != object:
        out.update(min=values.min(), max=values.max())
        ordered = np.sort(values.dropna().to_numpy(dtype="float64"))
        if len(ordered):  # Hive's exclusive ranks: the sorted non-null value at floor(r * n)
            out.update({name: ordered[min(int(rank * len(ordered)), len(ordered) - 1)]
                        for name, rank in (("q1", 0.25), ("median", 0.5), ("q3", 0.75))})
    return out


def _bands(lab, table: str) -> dict:
    return tiered_columns(lab.metastore.catalog.get_table("default", table).parameters)


def test_metadata_alone_is_exact_where_every_page_is_dictionary_encoded(lab, tmp_path):
    """pyarrow's dictionary chunks give exact NDV and string lengths; a pandas Categorical's dictionary keeps its
    unused categories, so it only bounds; a column written PLAIN is bounded by its footers. No value is read."""
    rng = np.random.default_rng(1)
    rows = 40_000
    frame = pd.DataFrame({
        "userId": rng.integers(0, 3_000, rows),
        "naïveName": rng.choice(["Łukasz", "Zoë", "Ana", None], rows),
        "color": pd.Categorical(rng.choice(["red", "blue"], rows), categories=["red", "blue", "never"]),
        "plainId": np.arange(rows, dtype=np.int64),
        "archived": np.arange(rows) < 25_000,  # each row group one value: its counts are in the footers
        "shipped": np.concatenate([np.ones(20_000, bool), np.zeros(10_000, bool), rng.random(10_000) < 0.5]),
        "neverSet": np.full(rows, np.nan),  # pandas' NaN: pyarrow writes NULL
    })
    folder = tmp_path / "dict"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / "a.parquet", row_group_size=5_000,
                   use_dictionary=["userId", "naïveName", "color"])
    lab.sql(f"CREATE EXTERNAL TABLE dict LOCATION '{folder}'")
    result = lab.tables["dict"].analyze(metadata_only=True)
    assert "no value read" in result.message

    bands = _bands(lab, "dict")
    user, name = bands["userid"]["figures"], bands["naïvename"]["figures"]
    assert user["ndv"][:4] == [frame.userId.nunique()] * 3 + [True]
    assert user["ndv"][4] == "dictionary pages"
    assert name["ndv"][:4] == [3, 3, 3, True]
    assert name["max_len"][:4] == [6, 6, 6, True]  # characters, "Łukasz"
    true_avg = frame["naïveName"].map(lambda v: 0 if v is None else len(v.encode())).mean()
    assert name["avg_len"][0] == pytest.approx(true_avg)  # bytes: exact only where every value is ASCII
    assert name["avg_len"][3] is False and name["avg_len"][1] <= frame["naïveName"].str.len().fillna(0).mean()
    color = bands["color"]["figures"]["ndv"]
    assert color[3] is False and color[1] <= 2 <= color[2]  # the unused category is in the dictionary
    plain = bands["plainid"]["figures"]["ndv"]
    assert plain[3] is False and plain[2] == rows  # PLAIN: bounded by the non-NULL rows and the range min..max

    archived, shipped = bands["archived"]["figures"], bands["shipped"]["figures"]
    assert archived["trues"][:4] == [25_000] * 3 + [True] and archived["falses"][:4] == [15_000] * 3 + [True]
    assert shipped["trues"][3] is False and shipped["trues"][1:3] == [20_000, 30_000]  # the last 2 row groups: either
    assert shipped["falses"][1:3] == [10_000, 20_000]
    assert shipped["trues"][1] <= frame.shipped.sum() <= shipped["trues"][2]

    never = bands["neverset"]["figures"]
    assert never["nulls"][:4] == [rows] * 3 + [True]
    assert never["min"][3] is True and never["min"][0] is None and never["max"][3] is True  # no value: no extreme

    stats = lab.tables["dict"].inspect.stats().set_index("column")
    assert stats.loc["userId", "ndv"] == frame.userId.nunique()
    assert (stats.loc["archived", "trues"], stats.loc["archived", "falses"]) == (25_000, 15_000)
    assert stats.loc["shipped", "trues"] + stats.loc["shipped", "falses"] == rows  # not 0 and 0: both occur
    assert stats.loc["naïveName", "nulls"] == frame["naïveName"].isna().sum()
    answer = lab.stats_answer("SELECT count(*), min(userId), max(userId) FROM dict")
    assert answer.frame is not None and list(answer.frame.iloc[0]) == [rows, frame.userId.min(), frame.userId.max()]


def test_metadata_alone_counts_sorted_dictionaries_without_decoding_and_bounds_a_long_one(lab, tmp_path):
    """Row groups whose ranges are apart (a sorted id, an ordered code) hold no value in two dictionaries: their
    NDV is the sum of the dictionaries' sizes, exactly. A string column whose dictionaries are nearly as long as
    the column (each row group's own, every value distinct) is left as the bounds its sizes give: decoding it in
    Python cost more than Spark's scan of it."""
    rng = np.random.default_rng(4)
    rows = 220_000
    frame = pd.DataFrame({"orderId": np.arange(rows, dtype=np.int64) * 3,
                          "orderCode": [f"o-{i:07d}" for i in range(rows)],
                          "token": [f"t{v:x}" for v in rng.integers(0, 2**40, rows)]})
    folder = tmp_path / "sorted"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / "a.parquet", row_group_size=10_000)
    lab.sql(f"CREATE EXTERNAL TABLE sorted LOCATION '{folder}'")
    lab.tables["sorted"].analyze(metadata_only=True)
    bands = _bands(lab, "sorted")
    for column in ("orderid", "ordercode"):
        ndv = bands[column]["figures"]["ndv"]
        assert ndv[:5] == [rows, rows, rows, True, "dictionary pages of chunks apart"], (column, ndv)
    token = bands["token"]["figures"]
    truth = frame.token.nunique()
    assert token["ndv"][3] is False and token["ndv"][1] <= truth <= token["ndv"][2], token["ndv"]
    assert token["max_len"][0] is None and token["max_len"][3] is False  # unknown, never 0
    assert lab.tables["sorted"].inspect.stats().set_index("column").loc["orderId", "ndv"] == rows


def test_a_small_plain_file_beside_a_dictionary_bounds_ndv_by_its_values_not_the_partitions(lab, tmp_path):
    """Found trying the dashboard: a partition of a dictionary-encoded file of two cities and a two-row file
    written plain showed NDV "≈ 63" in [2, 2000] (every value of the partition could be distinct). Each chunk
    bounds its distinct values by its dictionary, or by its values where it has none: [2, 3] here."""
    folder = tmp_path / "cities"
    folder.mkdir()
    rng = np.random.default_rng(9)
    big = pd.DataFrame({"city": rng.choice(["Köln", "São Paulo", None], 3_000)})
    pq.write_table(pa.Table.from_pandas(big, preserve_index=False), folder / "a.parquet")
    small = pd.DataFrame({"city": ["Köln", None]})
    pq.write_table(pa.Table.from_pandas(small, preserve_index=False), folder / "b.parquet", use_dictionary=False)
    lab.sql(f"CREATE EXTERNAL TABLE cities LOCATION '{folder}'")
    lab.tables["cities"].analyze(metadata_only=True)
    ndv = _bands(lab, "cities")["city"]["figures"]["ndv"]
    truth = pd.concat([big, small]).city.nunique()
    assert truth == 2 and ndv[1] <= truth <= ndv[2] and ndv[2] == 3 and ndv[3] is False, ndv


def test_spark_written_dictionaries_give_exact_ndv_and_fallbacks_only_bounds(lab, spark):
    """parquet-mr (Spark's writer) keeps encoding_stats: a chunk that fell back to PLAIN is told apart."""
    lab.sql("CREATE TABLE sw (small INT, wide BIGINT, label STRING)")
    source = spark.range(60_000).selectExpr("CAST(id % 37 AS INT) AS small", "id * 7919 % 1000003 AS wide",
                                            "concat('l', CAST(id % 11 AS STRING)) AS label")
    lab.tables["sw"].write(source)
    lab.tables["sw"].analyze(metadata_only=True)
    figures = {c: v["figures"] for c, v in _bands(lab, "sw").items()}
    assert figures["small"]["ndv"][:4] == [37, 37, 37, True]
    assert figures["label"]["ndv"][:4] == [11, 11, 11, True]
    truth = source.selectExpr("count(DISTINCT wide)").first()[0]
    wide = figures["wide"]["ndv"]
    assert wide[1] <= truth <= wide[2]


def test_sampled_bands_hold_the_truth_in_95_percent_of_cases(lab, tmp_path, capsys):
    """Every stated band over seeds and distributions; exact figures equal the truth; the coverage is printed."""
    frame = _distributions(200_000)
    folder = tmp_path / "dist"
    _write_files(frame, folder, files=4, dictionary=["skewed", "flag"])
    lab.sql(f"CREATE EXTERNAL TABLE dist LOCATION '{folder}'")
    written = pd.concat([pq.read_table(f).to_pandas() for f in sorted(folder.iterdir())], ignore_index=True)
    truths = {c.lower(): _truth(written, c) for c in written.columns}
    lab.set("hive.stats.kll.enable", True)  # the quartiles' bands too
    held = cases = closed = 0
    misses = []
    for seed in range(1, 6):
        lab.set("colstats.sample.seed", seed)
        result = lab.tables["dist"].analyze(sample=0.1)
        assert "10 % sample of row groups" in result.message
        for column, entry in _bands(lab, "dist").items():
            assert 0.09 <= entry["read"] <= 0.11
            for figure, (value, low, high, exact, method) in entry["figures"].items():
                truth = truths[column].get(figure)
                if truth is None or isinstance(truth, str) or pd.isna(truth):
                    continue
                if exact:
                    assert value == pytest.approx(truth), (column, figure, method)
                    continue
                if figure == "ndv" and column in ("sortedid", "amount"):  # unique values: scaled, not GEE's value
                    assert value == pytest.approx(truth, rel=0.01), (seed, column, value, truth, method)
                if low is None and high is None:
                    continue
                cases += 1
                closed += figure in ("q1", "median", "q3") and low is not None and high is not None
                inside = (low is None or low <= truth + 1e-9) and (high is None or truth <= high + 1e-9)
                held += inside
                if not inside:
                    misses.append((seed, column, figure, truth, low, high, method))
    coverage = held / cases
    with capsys.disabled():
        print(f"\nsampled bands held the truth in {held} of {cases} (figure, seed) cases: {coverage:.1%}; "
              f"missed: {misses}")
    assert cases >= 40 and closed >= 30  # quartiles' bands bounded on both sides, not open-ended
    assert coverage >= 0.95, misses


def _plain_table(lab, tmp_path, name: str, seed: int) -> pd.DataFrame:
    """An external table of 40,000 rows in 2 files of 10 row groups each, no dictionary; samples seeded."""
    frame = _distributions(40_000)
    _write_files(frame, tmp_path / name, files=2, dictionary=False)
    lab.sql(f"CREATE EXTERNAL TABLE {name} LOCATION '{tmp_path / name}'")
    lab.set("colstats.sample.seed", seed)
    return frame


def test_a_sampled_figure_never_answers_a_query_as_if_exact(lab, tmp_path):
    frame = _plain_table(lab, tmp_path, "ans", 3)
    lab.tables["ans"].analyze(sample=0.1)
    exact = lab.stats_answer("SELECT count(*), max(sortedId) FROM ans")
    assert list(exact.frame.iloc[0]) == [len(frame), len(frame) - 1]
    estimated = lab.stats_answer("SELECT max(amount) FROM ans")
    assert estimated.frame is None and "estimated" in estimated.reason and "sample" in estimated.reason
    lab.tables["ans"].analyze()  # every value read: exact again, the bands gone
    assert _bands(lab, "ans") == {}
    assert lab.stats_answer("SELECT max(amount) FROM ans").frame.iloc[0, 0] == pytest.approx(frame.amount.max())


@pytest.mark.parametrize("statement, message", [
    ("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a SAMPLE 0 PERCENT", "above 0 and at most 100, found 0"),
    ("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 150 PERCENT", "at most 100, found 150"),
    ("ANALYZE TABLE t COMPUTE STATISTICS NOSCAN SAMPLE 5 PERCENT", "NOSCAN reads no row"),
    ("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a NOSCAN SAMPLE 5 PERCENT", "give one or the other"),
    ("ANALYZE TABLE t COMPUTE STATISTICS SAMPLE 5 PERCENT", "SAMPLE applies to column statistics"),
])
def test_a_bad_sample_is_one_line_with_a_caret(lab, statement, message):
    with pytest.raises(ColstatsError) as raised:
        lab.sql(statement)
    text = str(raised.value)
    assert message in text and "^" in text and "Traceback" not in text


def test_bad_arguments_and_a_table_too_small_to_sample(lab, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    frame = _distributions(5_000)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / "a.parquet")  # one row group
    lab.sql(f"CREATE EXTERNAL TABLE one LOCATION '{folder}'")
    handle = lab.tables["one"]
    for bad in (0, 1.5, "5%", True):
        with pytest.raises(ColstatsError, match="sample is the fraction of row groups"):
            handle.analyze(sample=bad)
    with pytest.raises(ColstatsError, match="give one or the other"):
        handle.analyze(sample=0.1, metadata_only=True)
    result = handle.analyze(sample=0.05)
    assert "A 5 % sample would have read most of the rows of every partition: read whole" in result.message
    assert _bands(lab, "one") == {}
    stats = handle.inspect.stats().set_index("column")
    assert stats.loc["uniform", "ndv"] == pytest.approx(frame.uniform.nunique(), rel=0.05)


def test_the_frames_say_which_figures_are_sampled(lab, tmp_path):
    frame = _plain_table(lab, tmp_path, "seen", 5)
    handle = lab.tables["seen"]
    handle.analyze(["sortedId", "amount"], sample=0.1)
    handle.analyze(["zipfName"], metadata_only=True)
    tiers = handle.inspect.stats().set_index("column")["tier"]
    assert tiers["sortedId"] == "10 % sample (10.0% of rows read)" and tiers["zipfName"] == "metadata"
    assert tiers["uniform"] == "every value"  # never analyzed: nothing estimated
    causes = {c: handle.inspect.history(c)["cause"].iloc[-1] for c in ("sortedId", "zipfName")}
    assert "from a 10 % sample of row groups" in causes["sortedId"], causes
    assert "from the files' metadata alone" in causes["zipfName"], causes
    bounds = handle.inspect.bounds()
    assert list(bounds.columns) == ["partition", "column", "figure", "value", "low", "high", "exact", "method", "tier",
                                    "read"]
    assert set(bounds["column"]) == {"sortedId", "amount", "zipfName"}  # the files' spelling
    row = bounds.set_index(["column", "figure"]).loc[("amount", "nulls")]
    assert row["exact"] and row["value"] == frame.amount.isna().sum()  # the footers count NULLs exactly
    ndv = bounds.set_index(["column", "figure"]).loc[("amount", "ndv")]
    assert not ndv["exact"] and ndv["low"] <= frame.amount.nunique() <= ndv["high"] and "row groups" in ndv["method"]


def test_a_sampled_range_never_prunes_a_partition_holding_a_match(lab, tmp_path):
    """INT96 timestamps have no footer bounds: their sampled minimum and maximum lie inside the range, so pruning
    on them would drop the partition whose one late row the sample did not read."""
    root = tmp_path / "late"
    rows = 10_000
    for day in ("1", "2"):
        at = pd.Timestamp("2026-01-01") + pd.to_timedelta(np.arange(rows), unit="s")
        if day == "2":
            at = at.where(np.arange(rows) != 7_777, pd.Timestamp("2031-06-01"))
        frame = pd.DataFrame({"at": at, "n": np.arange(rows)})
        (root / f"ds={day}").mkdir(parents=True)
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), root / f"ds={day}" / "a.parquet",
                       row_group_size=500, use_deprecated_int96_timestamps=True)
    lab.sql(f"CREATE EXTERNAL TABLE late LOCATION '{root}'")
    lab.set("colstats.sample.seed", 4)
    lab.tables["late"].analyze(["at"], sample=0.1)
    bounds = lab.tables["late"].inspect.bounds().set_index(["partition", "column", "figure"])
    latest = bounds.loc[("ds=2", "at", "max")]
    assert not latest["exact"] and "sample" in latest["method"]
    assert lab.sql("SELECT count(*) AS n FROM late WHERE at > TIMESTAMP '2030-01-01 00:00:00'").df["n"][0] == 1
    assert lab.stats_answer("SELECT max(at) FROM late").frame is None


def test_auto_analyze_samples_when_told_and_says_which_it_sampled(lab, tmp_path):
    frame = _plain_table(lab, tmp_path, "auto", 6)
    for bad in ("sometimes", 0, 1.5, True):
        with pytest.raises(ColstatsError, match="colstats.autoanalyze.sample is off, auto or a fraction"):
            lab.set("colstats.autoanalyze.sample", bad)
    lab.set("colstats.autoanalyze.sample", 0.1)
    outcome = lab.autoanalyze().details
    assert [a["table"] for a in outcome.analyzed] == ["default.auto"]
    assert "sampling default.auto (10 %)" in outcome.message
    bands = _bands(lab, "auto")
    assert bands["sortedid"]["tier"] == "10 %" and bands["sortedid"]["figures"]["nulls"][0] == 0
    ndv = bands["uniform"]["figures"]["ndv"]
    assert ndv[1] <= frame.uniform.nunique() <= ndv[2]
    lab.set("colstats.autoanalyze.sample", "auto")  # 1 GiB or more a partition: this one is read whole
    (tmp_path / "auto" / "part-0.parquet").touch()  # the files changed: due again
    outcome = lab.autoanalyze().details
    assert "sampling" not in outcome.message and _bands(lab, "auto") == {}


def test_the_table_levels_ndv_merged_from_tiered_partitions_is_a_band_that_holds_the_truth(lab, tmp_path):
    """Partitions analyzed from metadata keep exact NDVs but no sketch to union: the table level is merged as
    Hive merges without bit vectors (the largest partition's), and bounds() gives its band, never exact."""
    rng = np.random.default_rng(3)
    parts = {f"d{i}": pd.DataFrame({"ms": rng.exponential(300, 5_000), "user": rng.integers(0, 800, 5_000)})
             for i in range(3)}
    for day, frame in parts.items():
        os.makedirs(tmp_path / "visits" / f"ds={day}")
        frame.to_parquet(tmp_path / "visits" / f"ds={day}" / "part-0.parquet", row_group_size=1_000)
    lab.register_external("visits", str(tmp_path / "visits"))
    lab.sql("ANALYZE TABLE visits COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    bounds = lab.tables["visits"].inspect.bounds()
    table_level = bounds[bounds.partition.isna() & (bounds.figure == "ndv")].set_index("column")
    everything = pd.concat(parts.values())
    for column in ("ms", "user"):
        truth = everything[column].nunique()
        low, high = table_level.loc[column, "low"], table_level.loc[column, "high"]
        assert low <= truth <= high, (column, low, truth, high)
        assert not table_level.loc[column, "exact"]
        assert low == max(frame[column].nunique() for frame in parts.values())


def test_a_sample_of_partitions_of_few_row_groups_says_what_it_read(lab, tmp_path):
    root = tmp_path / "few"
    for day in ("a", "b"):
        (root / f"ds={day}").mkdir(parents=True)
        pq.write_table(pa.table({"v": np.arange(8_000)}), root / f"ds={day}" / "part-0.parquet", row_group_size=1_000)
    lab.register_external("few", str(root))
    message = lab.sql("ANALYZE TABLE few COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 1 PERCENT").message
    assert "of each partition's rows read" in message
    assert "A sample reads 2 row groups of a partition at least" in message and "not 1%" in message
