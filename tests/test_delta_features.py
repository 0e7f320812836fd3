"""Delta tables as Databricks writes them: deletion vectors (every storage type, a file's second vector replacing its
first, a checkpoint holding them) and column mapping (a renamed column, a name with a space), every figure checked
against two readers that are not the lab: deltalake's QueryBuilder and DuckDB's delta_scan (`delta_commits`)."""
from __future__ import annotations

import glob
import json
import os
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_commits import (
    clean_up_log,
    delete_rows,
    deltalake_rows,
    duckdb_rows,
    live_adds,
    rename_column,
    take_column_mapping,
    v2_checkpoint,
)
from deltalake import DeltaTable, WriterProperties, write_deltalake
from test_table_formats import assert_stats, rows, stale

from colstats_lab.errors import InvalidArgument, StorageError
from colstats_lab.ui.stats_view import StatsView
from colstats_lab.workbench.dashboard import TABS, TablePage


def _events(path: str, **configuration) -> None:
    """Two days of rows with NULLs in most columns, one file a day, as deltalake writes them."""
    frame = pd.concat([rows(40, "2026-01-01", 1).to_pandas(), rows(30, "2026-01-02", 2, 100).to_pandas()],
                      ignore_index=True)
    write_deltalake(path, frame, partition_by=["ds"], configuration=configuration or None)


def _file_of(path: str, ds: str) -> str:
    return next(p for p, add in live_adds(path).items() if add["partitionValues"].get("ds") == ds
                or any(v == ds for v in add["partitionValues"].values()))


def _truth(path: str) -> pd.DataFrame:
    """The live rows as deltalake reads them, checked against DuckDB's delta_scan on every data column."""
    frame = deltalake_rows(path).to_pandas().sort_values("id").reset_index(drop=True)
    other = duckdb_rows(path).to_pandas().sort_values("id").reset_index(drop=True)
    data_columns = [c for c in frame.columns if c != "ds"]  # DuckDB reads a mapped table's partition values as NULL
    pd.testing.assert_frame_equal(frame[data_columns], other[data_columns], check_dtype=False)
    return frame


def _by_day(frame: pd.DataFrame) -> pd.Series:
    return "ds=" + frame["ds"]


def _analyzed_as_read(lab, path: str) -> pd.DataFrame:
    """The table at `path` registered as `events` and analyzed: every figure equal to the live rows as both oracles
    read them, which it returns."""
    truth = _truth(path)
    lab.register_external("events", path, format="delta")
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert_stats(lab, "events", truth, _by_day)
    return truth


@pytest.mark.both_backends  # the vectors' files are files of the metastore: on SQLite and on PostgreSQL
def test_deletion_vectors_of_every_storage_type_leave_only_live_rows_in_every_figure(lab, tmp_path):
    path = str(tmp_path / "ventes 2026+q")  # a path Spark's URIs quote: the vectors still find their files (DuckDB
    # 1.5.5's delta_scan cuts a non-ASCII path short by a byte, so the oracles cannot read "été" here)
    _events(path, **{"delta.enableDeletionVectors": "true"})
    first, second = _file_of(path, "2026-01-01"), _file_of(path, "2026-01-02")
    delete_rows(path, {first: [0, 3, 4, 39]}, storage="u", prefix="x7")      # relative, with a random prefix
    delete_rows(path, {second: [0, 1, 29]}, storage="i")                     # inline in the log
    delete_rows(path, {first: [10, 11]}, storage="p", operation="UPDATE")    # absolute; replaces the first vector
    truth = _truth(path)
    assert len(truth) == 70 - 6 - 3
    lab.register_external("events", path, format="delta")
    # before any scan: the log's record counts less the vectors' cardinalities, exact
    counted = lab.sql("SELECT count(*) FROM events WHERE ds = '2026-01-01'")
    assert counted.df.iloc[0, 0] == int((truth.ds == "2026-01-01").sum()) == 34
    sampled = str(lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 5 PERCENT"))
    assert "sample would have read most of the rows of every partition: read whole" in sampled  # one row group each
    assert_stats(lab, "events", truth, _by_day)  # every value read: exact, live rows only
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert_stats(lab, "events", truth, _by_day)
    table = lab.resolve("events")
    assert int(table.parameters["numRows"]) == len(truth)
    assert lab.sql("SELECT count(*), sum(x), min(amount) FROM events").df.iloc[0].tolist() == pytest.approx(
        [len(truth), truth.x.sum(), truth.amount.min()])
    assert stale(lab, "events") == {}
    # a MERGE's vector on one file makes exactly its partition stale, naming the version
    version = delete_rows(path, {second: [5]}, operation="MERGE")
    reasons = stale(lab, "events")
    assert reasons == {"ds=2026-01-02": f"version {version} (a MERGE) deleted rows of 1 file by deletion vectors "
                                        "in ds=2026-01-02 after the last analyze"}, reasons
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert_stats(lab, "events", _truth(path), _by_day)
    # an operation a log names otherwise than a name is left out of the reason the views show
    version = delete_rows(path, {second: [6]}, operation='<img src=x onerror="alert(1)">')
    assert stale(lab, "events") == {"ds=2026-01-02": f"version {version} deleted rows of 1 file by deletion vectors "
                                                     "in ds=2026-01-02 after the last analyze"}


def test_a_checkpoint_holding_deletion_vectors_is_followed_when_the_commits_before_it_are_gone(lab, tmp_path):
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "2026-01-01"): list(range(0, 40, 3))})
    DeltaTable(path).create_checkpoint()
    checkpoint = glob.glob(os.path.join(path, "_delta_log", "*.checkpoint.parquet"))
    assert [os.path.basename(name)[:20] for name in checkpoint] == [f"{1:020d}"]
    clean_up_log(path, delete_rows(path, {_file_of(path, "2026-01-02"): [2]}, storage="i"))  # one commit after it
    assert len(_analyzed_as_read(lab, path)) == 70 - 14 - 1


def test_a_multi_part_checkpoint_is_followed_and_an_incomplete_one_passed_over(lab, tmp_path):
    """A checkpoint in two parts (`N.checkpoint.0000000001.0000000002.parquet`), as Spark writes a large one, each
    part holding some of the actions; a later checkpoint missing a part is not one, and its commits are read."""
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "2026-01-01"): list(range(0, 40, 3))})
    DeltaTable(path).create_checkpoint()
    log = os.path.join(path, "_delta_log")
    classic = glob.glob(os.path.join(log, "*.checkpoint.parquet"))[0]
    actions = pq.read_table(classic)
    version = int(os.path.basename(classic)[:20])
    half = actions.num_rows // 2
    for part, rows_of_part in ((1, actions.slice(0, half)), (2, actions.slice(half))):
        pq.write_table(rows_of_part, os.path.join(log, f"{version:020d}.checkpoint.{part:010d}.0000000002.parquet"))
    os.remove(classic)
    os.remove(os.path.join(log, "_last_checkpoint"))  # it names the classic checkpoint: readers list instead
    later = delete_rows(path, {_file_of(path, "2026-01-02"): [2]}, storage="i")
    pq.write_table(actions.slice(0, 1), os.path.join(log, f"{later:020d}.checkpoint.0000000001.0000000003.parquet"))
    clean_up_log(path, version + 1)
    assert len(_analyzed_as_read(lab, path)) == 70 - 14 - 1


def test_a_v2_checkpoint_with_a_sidecar_is_followed(lab, tmp_path):
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "2026-01-01"): [0, 1, 39]}, prefix="ab")
    v2_checkpoint(path)
    clean_up_log(path, delete_rows(path, {_file_of(path, "2026-01-02"): [3]}, storage="i"))
    assert glob.glob(os.path.join(path, "_delta_log", "_sidecars", "*.parquet"))
    assert len(_analyzed_as_read(lab, path)) == 70 - 3 - 1


def test_last_checkpoint_picks_between_two_v2_checkpoints_and_a_compaction_file_is_passed_over(lab, tmp_path):
    """Two writers may each write a v2 checkpoint of one version: `_last_checkpoint` names the one to read (the
    other's sidecar is gone here). A log compaction file is an optimization: the commits it covers are read."""
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "2026-01-01"): [0, 1, 39]})
    version = v2_checkpoint(path)
    log = os.path.join(path, "_delta_log")
    real = glob.glob(os.path.join(log, "*.checkpoint.*.json"))[0]
    broken = [line if '"sidecar"' not in line else json.dumps({"sidecar": {
        "path": "gone.parquet", "sizeInBytes": 10, "modificationTime": 0}}) for line in open(real).read().splitlines()]
    with open(os.path.join(log, f"{version:020d}.checkpoint.00000000-0000-0000-0000-000000000000.json"), "x") as f:
        f.write("\n".join(broken) + "\n")  # listed first
    with open(os.path.join(log, "_last_checkpoint"), "w") as f:
        json.dump({"version": version, "size": 4, "v2Checkpoint": {
            "path": os.path.basename(real), "sizeInBytes": os.path.getsize(real), "modificationTime": 0}}, f)
    first = delete_rows(path, {_file_of(path, "2026-01-02"): [3]}, storage="i")
    last = delete_rows(path, {_file_of(path, "2026-01-02"): [4]}, storage="i")
    with open(os.path.join(log, f"{first:020d}.{last:020d}.compacted.json"), "x") as f:
        f.write(json.dumps({"remove": {"path": _file_of(path, "2026-01-02"), "dataChange": True}}) + "\n")  # wrong
    clean_up_log(path, version + 1)
    assert len(_analyzed_as_read(lab, path)) == 70 - 3 - 2


def test_column_mapping_reads_a_renamed_column_and_a_spaced_name_by_the_logical_schema(lab, tmp_path):
    path = str(tmp_path / "mapped")
    frame = pd.DataFrame({"id": range(12), "amount": [float(i) if i % 4 else None for i in range(12)],
                          "page name": list("abcabcabcaab"), "ds": ["x"] * 6 + ["y"] * 6})
    write_deltalake(path, frame, partition_by=["ds"], configuration={"delta.columnMapping.mode": "name"})
    rename_column(path, "amount", "amountEUR")
    delete_rows(path, {_file_of(path, "y"): [1]})  # and deletion vectors on top, the table upgraded to features
    truth = _truth(path)
    assert truth.amountEUR.notna().sum() == 8  # the renamed column's values, not NULLs
    lab.register_external("mapped", path, format="delta")
    lab.sql("ANALYZE TABLE mapped COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["mapped"].inspect.stats()
    assert set(stats.column) == {"id", "amountEUR", "page name"}  # as the log's schema spells them now
    table_level = stats[stats.partition.isna()].set_index("column")
    assert table_level.loc["amountEUR", "nulls"] == truth.amountEUR.isna().sum() == 3
    assert float(table_level.loc["amountEUR", "max"]) == truth.amountEUR.max() == 11.0
    assert table_level.loc["page name", "ndv"] == truth["page name"].nunique()
    assert table_level.loc["id", "rows"] == len(truth) == 11
    shown = lab.sql("SELECT * FROM mapped ORDER BY id").df
    assert list(shown.columns) == ["id", "amountEUR", "page name", "ds"]
    assert shown.amountEUR.tolist() == pytest.approx(truth.amountEUR.tolist(), nan_ok=True)
    assert lab.sql("SELECT count(*) FROM mapped WHERE amountEUR > 5").df.iloc[0, 0] == (truth.amountEUR > 5).sum()


def test_a_table_that_took_column_mapping_later_reads_its_older_files_by_physical_name(lab, tmp_path):
    """Files written before ALTER TABLE ... SET TBLPROPERTIES ('delta.columnMapping.mode'='name') have no field ids:
    the protocol reads name mode by physical names, which a rename then leaves behind."""
    path = str(tmp_path / "upgraded")
    write_deltalake(path, pd.DataFrame({"id": [1, 2, 3], "amount": [1.5, None, 3.0]}))
    take_column_mapping(path)
    rename_column(path, "amount", "amountEUR")
    write_deltalake(path, pd.DataFrame({"id": [4], "amountEUR": [7.25]}), mode="append")  # a file with field ids
    truth = _truth(path)
    lab.register_external("upgraded", path, format="delta")
    lab.sql("ANALYZE TABLE upgraded COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["upgraded"].inspect.stats().set_index("column")
    assert stats.loc["amountEUR", "nulls"] == truth.amountEUR.isna().sum() == 1
    assert float(stats.loc["amountEUR", "max"]) == truth.amountEUR.max() == 7.25
    assert float(stats.loc["amountEUR", "min"]) == truth.amountEUR.min() == 1.5
    assert lab.sql("SELECT sum(amountEUR) FROM upgraded").df.iloc[0, 0] == pytest.approx(truth.amountEUR.sum())


def test_id_mode_reads_columns_by_their_field_ids(lab, tmp_path):
    path = str(tmp_path / "by-id")
    write_deltalake(path, pd.DataFrame({"id": [1, 2, 3], "v": ["a", None, "c"]}),
                    configuration={"delta.columnMapping.mode": "id"})
    rename_column(path, "v", "label")
    truth = _truth(path)
    lab.register_external("by_id", path, format="delta")
    lab.sql("ANALYZE TABLE by_id COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["by_id"].inspect.stats().set_index("column")
    assert stats.loc["label", "nulls"] == truth.label.isna().sum() == 1
    assert stats.loc["label", "ndv"] == 2


@pytest.mark.parametrize("mode", ["name", "id"])
def test_noscan_and_a_sample_find_mapped_columns_in_each_file_and_apply_its_vector(lab, tmp_path, mode):
    """A column-mapped table of row groups of 50 rows, a column renamed, a struct, rows deleted: metadata alone and a
    sample read every file by physical name or field id, so each band holds the live rows as both oracles read them."""
    path = str(tmp_path / f"mapped-{mode}")
    # no timestamp_ntz: deltalake 1.6.6 then writes a table-features protocol without columnMapping
    frame = rows(2_000, "2026-01-01", 1).to_pandas().drop(columns=["ts"])
    frame["ds"] = ["2026-01-01"] * 1_000 + ["2026-01-02"] * 1_000
    frame["payload"] = [{"n": None if i % 3 == 0 else i % 17} for i in range(2_000)]
    write_deltalake(path, frame, partition_by=["ds"], configuration={"delta.columnMapping.mode": mode},
                    writer_properties=WriterProperties(max_row_group_size=50))
    rename_column(path, "x", "xRenamed")
    delete_rows(path, {_file_of(path, "2026-01-02"): list(range(0, 1_000, 4))})
    truth = _truth(path)
    assert truth.xRenamed.notna().sum() > 1_000  # the renamed column's values, not NULLs
    lab.register_external("mapped", path, format="delta")
    lab.set("colstats.sample.seed", 7)  # every band is checked: a fixed sample, not 1 % of runs missing one
    for clause in ("NOSCAN", "SAMPLE 20 PERCENT"):
        said = str(lab.sql(f"ANALYZE TABLE mapped COMPUTE STATISTICS FOR ALL COLUMNS {clause}"))
        assert "Every value read" not in said and "Analyzed whole" not in said, (clause, said)
        bounds = lab.tables["mapped"].inspect.bounds()
        assert _bands_checked(bounds, truth) >= 30, clause
        renamed = bounds[(bounds.column == "xRenamed") & (bounds.figure == "nulls")].set_index("partition")
        for ds in ("2026-01-01", "2026-01-02"):
            nulls = int(truth[truth.ds == ds].xRenamed.isna().sum())
            assert renamed.loc[f"ds={ds}", "low"] <= nulls <= renamed.loc[f"ds={ds}", "high"], (clause, renamed)
        ids = bounds[bounds.column == "id"].set_index(["partition", "figure"])
        if clause == "NOSCAN":  # each chunk's own extremes (no log figure serves a deleted file's): exact integers
            assert ids.loc[("ds=2026-01-01", "min"), "exact"] and ids.loc[("ds=2026-01-01", "min"), "value"] == 0
        # sorted ids, partitions apart: the table's distinct ids are the partitions' added, exactly
        assert ids.loc[(None, "ndv"), "exact"] and ids.loc[(None, "ndv"), "value"] == truth.id.nunique(), clause
        leaf = bounds[(bounds.column == "payload.n") & (bounds.figure == "nulls")].set_index("partition")
        for ds in ("2026-01-01", "2026-01-02"):
            nulls = sum(p["n"] is None for p in truth[truth.ds == ds].payload)
            assert leaf.loc[f"ds={ds}", "low"] <= nulls <= leaf.loc[f"ds={ds}", "high"], (clause, leaf)
    largest = bounds[(bounds.column == "xRenamed") & (bounds.figure == "max") & (bounds.partition == "ds=2026-01-01")]
    assert float(largest.value.iloc[0]) == truth[truth.ds == "2026-01-01"].xRenamed.max()  # read, not NULL


def test_a_damaged_deletion_vector_is_one_line_naming_its_file_and_nothing_is_stored(lab, tmp_path):
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    data_file = _file_of(path, "2026-01-01")
    delete_rows(path, {data_file: [1, 2]})
    lab.register_external("events", path, format="delta")
    vector = glob.glob(os.path.join(path, "deletion_vector_*.bin"))[0]
    content = open(vector, "rb").read()
    with open(vector, "wb") as f:  # one bit of the bitmap flipped: the CRC no longer holds
        f.write(content[:12] + bytes([content[12] ^ 1]) + content[13:])
    with pytest.raises(InvalidArgument, match=r"deletion vector of .*2026-01-01.* fails its checksum") as failed:
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert "\n" not in str(failed.value)
    assert (lab.tables["events"].inspect.stats().reason == "never analyzed").all()
    with open(vector, "wb") as f:
        f.write(content[:-3])
    with pytest.raises(InvalidArgument, match=r"is truncated"):
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    os.remove(vector)
    with pytest.raises(StorageError, match=r"deletion vector of .*2026-01-01.*deletion_vector_.*\.bin.* cannot be read"):
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    with open(vector, "wb") as f:
        f.write(content)
    delete_rows(path, {data_file: [40]}, storage="i")  # the file has 40 rows: position 40 is past them
    with pytest.raises(InvalidArgument, match=r"deletes row 40, past the 40 rows of the file"):
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert (lab.tables["events"].inspect.stats().reason == "never analyzed").all()


def test_a_reader_feature_the_lab_does_not_know_is_refused_by_name(lab, tmp_path):
    path = str(tmp_path / "future")
    write_deltalake(path, pd.DataFrame({"id": [1]}))
    with open(os.path.join(path, "_delta_log", f"{1:020d}.json"), "x") as f:
        f.write(json.dumps({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                         "readerFeatures": ["deletionVectors", "zorderedSpaceTime"],
                                         "writerFeatures": ["deletionVectors", "zorderedSpaceTime"]}}) + "\n")
    with pytest.raises(InvalidArgument, match="zorderedSpaceTime") as refused:
        lab.register_external("future", path, format="delta")
    assert "future" not in lab.metastore.catalog.get_tables("default") and "\n" not in str(refused.value)


def test_the_delta_audit_names_the_columns_the_log_leaves_bare_and_the_vectors_per_partition(lab, tmp_path):
    path = str(tmp_path / "wide")
    frame = pd.DataFrame({f"c{i:02d}": range(i, i + 20) for i in range(34)})
    frame["ds"] = ["a"] * 10 + ["b"] * 10
    write_deltalake(path, frame, partition_by=["ds"], configuration={"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "a"): [0, 1, 2]})
    with open(os.path.join(path, "_delta_log", f"{2:020d}.json"), "x") as f:  # liquid clustering by c05
        f.write(json.dumps({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                         "readerFeatures": ["deletionVectors"],
                                         "writerFeatures": ["deletionVectors", "domainMetadata", "clustering"]}}) + "\n")
        f.write(json.dumps({"domainMetadata": {"domain": "delta.clustering", "removed": False,
                                               "configuration": json.dumps({"clusteringColumns": [["c05"]]})}}) + "\n")
    lab.register_external("wide", path, format="delta")
    lab.sql("ANALYZE TABLE wide COMPUTE STATISTICS FOR COLUMNS c00, c33")
    audit = lab.tables["wide"].inspect.delta().set_index("column")
    logged = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pandas()  # what deltalake says it kept
    for column in audit.index:
        assert audit.loc[column, "log_keeps"] == (f"min.{column}" in logged and logged[f"min.{column}"].notna().all())
    assert audit.loc["c31", "log_keeps"] and not audit.loc["c32", "log_keeps"]
    assert audit.loc["c33", "why_not"] == "past the first 32 columns (delta.dataSkippingNumIndexedCols)"
    assert audit.clustering[audit.clustering].index.tolist() == ["c05"]
    assert audit.loc["c00", "lab_accurate"] and audit.loc["c33", "lab_accurate"]
    assert audit.loc["c01", "lab_accurate"] is None
    vectors = lab.tables["wide"].inspect.deletion_vectors().set_index("partition")
    assert vectors.loc["ds=a"].tolist() == [1, 1, 10, 3, 7] and vectors.loc["ds=b"].tolist() == [1, 0, 10, 0, 10]
    truth = deltalake_rows(path).to_pandas()
    assert vectors.live_rows.sum() == len(truth) == 17
    page = TablePage(lab, "default.wide")  # the dashboard's Engines tab says the same
    page.selected_index = TABS.index("Engines")
    text = page.children[TABS.index("Engines")].children[0].value
    assert "Deletion vectors on 1 of 2 file(s) delete 3 of their 20 rows" in text, text
    assert "<code>c33</code>: 0 of 2 file(s); past the first 32 columns" in text
    assert "<code>c05</code>: 2 of 2 file(s) (a clustering column)" in text
    # and the statistics view, beside each column's figures
    view = StatsView(lab, "wide", chart=False)
    html = view.table_html.value
    assert ">Delta log<" in html and "past the first 32 columns" in html
    shown = {re.search(r">(c\d\d)<", row).group(1): re.sub(r"<[^>]+>", "|", row)
             for row in html.split("<tr>") if re.search(r">(c\d\d)<", row)}
    assert "|not kept|" in shown["c33"] and "|kept|" in shown["c00"] and "|kept · clustering|" in shown["c05"]


def test_noscan_of_partitions_with_deletion_vectors_counts_live_rows_exactly_and_bands_the_rest(lab, tmp_path):
    path = str(tmp_path / "events")
    _events(path, **{"delta.enableDeletionVectors": "true"})
    delete_rows(path, {_file_of(path, "2026-01-01"): list(range(0, 40, 4)) + [1, 2, 3]})
    delete_rows(path, {_file_of(path, "2026-01-02"): [7]}, storage="i")
    truth = _truth(path)
    lab.register_external("events", path, format="delta")
    said = str(lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN"))
    assert "Every value read" not in said and "metadata alone" in said, said
    bounds = lab.tables["events"].inspect.bounds()
    assert _bands_checked(bounds, truth) > 40
    rows = bounds[bounds.figure == "rows"].drop_duplicates("partition").set_index("partition")
    assert rows.loc["ds=2026-01-01", "value"] == 40 - 13 and rows.loc["ds=2026-01-01", "exact"]
    nulls = bounds[(bounds.figure == "nulls") & (bounds.partition == "ds=2026-01-01")].set_index("column")
    assert not nulls.loc["x", "exact"]  # a deleted row may have been one of the footers' NULLs
    stats = lab.tables["events"].inspect.stats()
    assert (stats[stats.partition == "ds=2026-01-01"].rows == 27).all()
    assert int(lab.resolve("events").parameters["numRows"]) == len(truth) == 70 - 13 - 1


def _bands_checked(bounds: pd.DataFrame, truth: pd.DataFrame) -> int:
    """How many of the partitions' bands of rows, NULLs, NDV, minimum, maximum and NaNs were checked against the
    live rows in `truth`: an exact figure equal to it, a band holding it."""
    checked = 0
    for band in bounds[bounds.partition.notna() & bounds.column.isin(truth.columns)].itertuples():
        live = truth[truth.ds == band.partition.removeprefix("ds=")]
        values = live[band.column].dropna()
        actual = {"rows": len(live), "nulls": int(live[band.column].isna().sum()), "ndv": values.nunique(),
                  "min": values.min() if len(values) else None, "max": values.max() if len(values) else None,
                  "nans": 0}.get(band.figure)
        if band.figure not in ("rows", "nulls", "ndv", "min", "max", "nans") or actual is None:
            continue
        if band.column in ("ts",) and band.figure in ("min", "max"):
            actual = pd.Timestamp(actual)
        where = (band.partition, band.column, band.figure, band.value, band.low, band.high, actual)
        if band.exact:
            assert band.value == actual, where
        if band.low is not None:
            assert _number(band.low, band.column) <= _number(actual, band.column), where
        if band.high is not None:
            assert _number(actual, band.column) <= _number(band.high, band.column), where
        checked += 1
    return checked


def _number(value, column: str):
    return pd.Timestamp(value).value if column == "ts" else float(value)


def test_a_sample_of_partitions_with_deletion_vectors_reads_only_live_rows(lab, tmp_path):
    """Row groups of 100 rows, a fifth of one day's rows deleted (every fifth, each holding an x no live row holds):
    the sample reads its row groups without those rows, every band holds the live rows, rows exact."""
    path = str(tmp_path / "events")
    days = []
    for day, ds in ((1, "2026-01-01"), (2, "2026-01-02")):
        frame = rows(4_000, ds, day, (day - 1) * 4_000).to_pandas()
        if day == 1:
            frame.loc[frame.index % 5 == 2, "x"] = 1_000_000  # only deleted rows hold it
        days.append(frame)
    write_deltalake(path, pd.concat(days, ignore_index=True), partition_by=["ds"],
                    configuration={"delta.enableDeletionVectors": "true"},
                    writer_properties=WriterProperties(max_row_group_size=100))
    first = _file_of(path, "2026-01-01")
    delete_rows(path, {first: list(range(2, 4_000, 5))}, prefix="ab")
    truth = _truth(path)
    assert len(truth) == 8_000 - 800 and truth.x.max() < 1_000_000
    lab.register_external("events", path, format="delta")
    lab.set("colstats.sample.seed", 7)  # every band is checked: a fixed sample, not 1 % of runs missing one
    said = str(lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 20 PERCENT"))
    assert "Every value read" not in said and "Analyzed whole" not in said, said
    bounds = lab.tables["events"].inspect.bounds()
    assert _bands_checked(bounds, truth) > 40
    tiers = lab.tables["events"].inspect.stats().set_index(["partition", "column"])
    assert tiers.loc[("ds=2026-01-01", "x"), "tier"].startswith("20 % sample")
    assert tiers.loc[("ds=2026-01-02", "x"), "tier"].startswith("20 % sample")
    assert tiers.loc[("ds=2026-01-01", "x"), "rows"] == 3_200  # the footers' rows less the vector's, exact
    largest = bounds[(bounds.partition == "ds=2026-01-01") & (bounds.column == "x") & (bounds.figure == "max")]
    assert float(largest.value.iloc[0]) == truth[truth.ds == "2026-01-01"].x.max()  # no deleted row's value
    assert int(lab.resolve("events").parameters["numRows"]) == len(truth)
    for level, rows_there in ((None, len(truth)), ("ds=2026-01-01", 3_200)):  # an estimated NULL count's share
        shown = (lab.tables["events"].stats_level(level) if level else
                 lab.tables["events"].stats_level()).frame.set_index("column").loc["amount"]
        assert shown.bands and "nulls" in shown.bands, shown.to_dict()
        assert shown.null_fraction == pytest.approx(shown.nulls / rows_there) and shown.null_fraction > 0.1
