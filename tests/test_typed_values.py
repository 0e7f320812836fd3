"""What travels between the lab's parts has a type (no JVM): a kept run's operators, the modes a call takes, the
metastore's settings. Each is checked against values written here and against the shapes it replaced."""
from __future__ import annotations

import json

import pytest

from colstats_lab import InvalidArgument, StorageError
from colstats_lab.analyze.autoanalyze import AutoAnalyzeColumns, AutoAnalyzeMode, AutoAnalyzeOptions
from colstats_lab.metastore import FieldSchema, Metastore, Table
from colstats_lab.metastore.repositories.run_records import KeptRun, RunOperator, RunTable
from colstats_lab.plans.report import OPERATOR_COLUMNS
from colstats_lab.skew.report import DEFAULT_MODE, SkewMode, check_options
from colstats_lab.storage import Listing
from colstats_lab.storage.resolve import ListingMode
from colstats_lab.tables.writer import MODES as WRITE_MODES
from colstats_lab.tables.writer import WriteMode


def test_a_run_operator_has_a_field_for_every_column_of_a_plan_reports_operators():
    assert list(RunOperator.__dataclass_fields__) == ["id", "node", *[c for c in OPERATOR_COLUMNS
                                                                          if c not in ("id", "node")]]


@pytest.mark.parametrize("record, expected", [
    ({"id": 3, "node": "Filter", "estimated_rows": 10, "actual_rows": 2_000, "q_error": 200.0},
     RunOperator(3, "Filter", estimated_rows=10, actual_rows=2_000, q_error=200.0)),
    # a record of a later release with a column this one does not know: read, the column left out
    ({"id": 0, "node": "Scan parquet", "tasks": 4, "task_rows_median": 25.5, "new_figure": 1},
     RunOperator(0, "Scan parquet", tasks=4, task_rows_median=25.5)),
])
def test_a_run_operator_reads_its_json_record(record, expected):
    assert RunOperator.of(record) == expected
    assert RunOperator.of(json.loads(json.dumps(expected.to_record()))) == expected


def test_a_kept_run_travels_through_the_metastore_with_typed_operators(tmp_path):
    metastore = Metastore(str(tmp_path / "metastore.db"))
    metastore.catalog.create_table(Table("default", "t", [FieldSchema("x", "int")], location=str(tmp_path / "t")))
    operators = (RunOperator(0, "Project", actual_rows=5), RunOperator(1, "Scan parquet", parent=0, depth=1,
                                                                        estimated_rows=50, actual_rows=5, q_error=10.0))
    run_id = metastore.runs.keep_run(KeptRun(None, "abc", "SELECT x FROM t", 1_700_000_000, 0.5, operators,
                                             (RunTable("default", "t", None, "accurate"),)))
    (kept,) = metastore.runs.get_runs()
    assert kept.run_id == run_id and kept.operators == operators
    metastore.close()


@pytest.mark.parametrize("kind, values", [(WriteMode, ["append", "overwrite"]), (SkewMode, ["exact", "approx"]),
                                          (AutoAnalyzeMode, ["all", "existing"]),
                                          (AutoAnalyzeColumns, ["all", "analyzed"]),
                                          (ListingMode, ["auto", "store", "spark"])])
def test_each_mode_is_a_str_enum_of_the_strings_a_call_took(kind, values):
    assert [member.value for member in kind] == values
    assert all(kind(v) == v and str(kind(v)) == v for v in values)  # a str where a str went before


def test_a_mode_out_of_its_set_is_refused_naming_the_set():
    assert WRITE_MODES == ("append", "overwrite") and DEFAULT_MODE == "approx"
    with pytest.raises(InvalidArgument, match="mode must be one of exact, approx, not 'magic'"):
        check_options("magic", 20, 0.02)
    with pytest.raises(InvalidArgument, match="mode is one of all, existing, not 'some'"):
        AutoAnalyzeOptions.of(mode="some")
    with pytest.raises(InvalidArgument, match="columns is one of all, analyzed, not 'few'"):
        AutoAnalyzeOptions.of(columns="few")
    with pytest.raises(StorageError, match="colstats.storage.listing is one of auto, store, spark, not 'ftp'"):
        Listing.of("ftp")
    options = AutoAnalyzeOptions.of(mode="existing", columns="analyzed")
    assert options.mode is AutoAnalyzeMode.EXISTING and options.columns is AutoAnalyzeColumns.ANALYZED
    assert AutoAnalyzeOptions.from_json(options.to_json()) == options  # a round's options, as kept and read back
    assert Listing.of("spark").mode is ListingMode.SPARK
