"""A NULL in a skewed column: never a skewed value, its share reported per partition and for the table, a
partition of NULLs alone holding no value, the magic's chart and table showing NULL as its own line; and the
magics' bad input as one line, never a traceback. Counts are the rows written here."""
from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

X_WITH_NULLS = [1, 1, 2, None, None, None, None, 3]


@pytest.fixture
def nulls_table(lab):
    lab.sql("CREATE TABLE t (x INT, y STRING) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"x": pd.array(X_WITH_NULLS, dtype="Int32"), "y": list("abcdefgh")}),
                          partition={"ds": "a"})
    return lab


@pytest.mark.parametrize("mode", ["exact", "approx"])
def test_null_is_never_a_skewed_value_but_its_share_is_reported(nulls_table, mode):
    """Hive puts rows whose skewed column is NULL in the default list-bucketing directory."""
    report = nulls_table.tables["t"].skew("x", mode=mode, min_share=0.1)
    values = [v for v in X_WITH_NULLS if v is not None]
    assert report.null_count("ds=a") == X_WITH_NULLS.count(None) == 4
    assert report.null_share() == pytest.approx(4 / 8)
    assert report.totals["ds=a"] == 8
    assert None not in list(report.frame["value"])
    # 1 holds 2 of 8 rows, 2 and 3 one each: all at least 0.1, but only 1 stands out (twice what 2 holds);
    # NULL holds 4 but is never skewed
    assert report.heavy_hitters()["value"].tolist() == [1, 2, 3]
    assert report.recommended == [1]
    assert report.statement == "ALTER TABLE `default`.`t` SKEWED BY (`x`) ON (1) STORED AS DIRECTORIES"
    fractions = report.scan_fractions()
    assert "None" not in " ".join(fractions["query"])
    # x = <other> reads the default directory: every row that is not 1, NULLs included
    assert fractions.iloc[-1]["with"] == pytest.approx(1 - values.count(1) / 8)
    assert report.others("ds=a") == 0


def test_a_partition_of_nulls_only_has_no_values_and_a_full_null_share(nulls_table):
    nulls_table.tables["t"].write(pd.DataFrame({"x": pd.array([None] * 3, dtype="Int32"), "y": ["p", "q", "r"]}),
                                  partition={"ds": "b"})
    for mode in ("exact", "approx"):
        report = nulls_table.tables["t"].skew("x", mode=mode)
        assert report.for_partition("ds=b").empty
        assert report.null_share("ds=b") == 1.0 and report.totals["ds=b"] == 3
        assert report.null_count() == 7


def test_skew_magic_shows_null_as_its_own_line(nulls_table):
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = nulls_table
    shell.run_line_magic("load_ext", "colstats_lab")
    view = shell.run_line_magic("skew", "t.x --lab lab --mode exact")
    assert list(view.figure.data[0].x)[-1] == "(NULL)" and list(view.figure.data[0].y)[-1] == 4
    assert "(NULL)" in view.values_html.value and "never (default directory)" in view.values_html.value
    assert "None" not in view.recommendation_html.value


@pytest.mark.parametrize("line, named", [
    ("explain SELECT * FROM t WHERE x >", "^"),
    ("skew t.x --top -3", "top takes a whole number of at least 1, not -3"),
    ("skew t.x --partition ds=zzz", "partition ds=zzz of default.t does not exist"),
    ("skew t.x --mode nope", "nope"),
    ("skew t.x --min-share 7", "min_share is a fraction between 0 and 1, not 7.0"),
    ("skew t", "expected table.column, got 't'"),
    ("skew t.x --top 'unclosed", "cannot read the arguments"),
    ("explain", "expected a query, e.g. %explain --run SELECT"),
    ("explain SELECT * FROM nosuch", "The table or view `nosuch` cannot be found"),  # the lab or Spark may hold it
])
def test_magics_turn_bad_input_into_one_line(nulls_table, line, named):
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = nulls_table
    shell.run_line_magic("load_ext", "colstats_lab")
    magic, _, rest = line.partition(" ")
    with pytest.raises(UsageError) as caught:
        shell.run_line_magic(magic, rest)
    assert named in str(caught.value)
    with capture_output() as captured:
        shell.run_cell("%" + line)
    assert "Traceback" not in captured.stdout + captured.stderr
    assert named in captured.stdout + captured.stderr
