"""Join skew predicted from statistics, checked against Spark's own placement: each side repartitioned by
the key as the join's shuffle does and its rows counted per `spark_partition_id()`; the counts the test
compares with are pandas' over the rows written."""
from __future__ import annotations

import random
import uuid

import pandas as pd
import pytest

from colstats_lab.column_statistics.frequent_items import FrequentItems
from colstats_lab.errors import InvalidArgument
from colstats_lab.metastore import NoSuchObjectException

DAYS = ["2026-11-20", "2026-11-21", "2026-11-22"]
HOT = 7  # the customer most orders name
NULLS = 900  # orders of no customer, on the last day


def _orders(day: int) -> pd.DataFrame:
    rnd = random.Random(day)
    rows = []
    for i in range(3000):
        if rnd.random() < 0.5:
            customer = HOT
        else:
            customer = rnd.randint(100, 400)
        rows.append((day * 10_000 + i, customer, f"c{customer % 50}", rnd.random() * 100))
    if day == 2:
        rows += [(90_000 + i, None, None, 1.0) for i in range(NULLS)]
    return pd.DataFrame(rows, columns=["id", "customer_id", "segment", "amount"]).astype({"customer_id": "Int64"})


@pytest.fixture(scope="module")
def shop(spark, tmp_path_factory):
    from colstats_lab import Lab

    lab = Lab(home=str(tmp_path_factory.mktemp("joins")), spark=spark)
    lab.sql("CREATE TABLE orders (id BIGINT, customer_id BIGINT, segment STRING, amount DOUBLE) "
            "PARTITIONED BY (ds STRING)")
    lab.sql("ALTER TABLE orders SET TBLPROPERTIES ('colstats.frequent.items.columns'='customer_id, segment')")
    lab.sql("CREATE TABLE customers (id BIGINT, name STRING, segment STRING)")
    lab.sql("ALTER TABLE customers SET TBLPROPERTIES ('colstats.frequent.items.columns'='*')")
    orders = {}
    for day, ds in enumerate(DAYS):
        orders[ds] = _orders(day)
        lab.tables["orders"].write(orders[ds], partition={"ds": ds})
    # customer 7 has two rows (a duplicate the right side brings), every other customer one
    customers = pd.DataFrame([(c, f"name {c}", f"c{c % 50}") for c in range(1, 401)] + [(HOT, "again", "c7")],
                             columns=["id", "name", "segment"])
    lab.tables["customers"].write(customers)
    lab.sql("ANALYZE TABLE orders PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
    lab.sql("ANALYZE TABLE customers COMPUTE STATISTICS FOR COLUMNS")
    yield lab, orders, customers
    lab.close()


def _joined_per_key(orders: pd.DataFrame, customers: pd.DataFrame, left: str, right: str) -> pd.Series:
    matched = orders.dropna(subset=[left]).merge(customers, left_on=left, right_on=right)
    return matched.groupby(left).size()


def test_sketches_merged_over_partitions_hold_the_rows_counts_within_their_bound(shop):
    lab, orders, _ = shop
    sketches = lab.metastore.column_stats.get_frequent_items("default", "orders", "customer_id")
    assert sorted(sketches) == [f"ds={ds}" for ds in DAYS]
    merged = FrequentItems.merged(list(sketches.values()), "bigint")
    every = pd.concat(orders.values())
    counts = every["customer_id"].dropna().value_counts()
    assert merged.rows == len(every["customer_id"].dropna())
    for item in merged.top(10):
        assert item.lower <= counts[item.value] <= item.upper
        assert abs(item.estimate - counts[item.value]) <= merged.max_error
    assert merged.top(1)[0].value == HOT


def test_predicted_hot_keys_and_largest_task_match_sparks_placement(shop, spark):
    lab, orders, customers = shop
    every = pd.concat(orders.values())
    group = f"join-skew-{uuid.uuid4().hex}"
    spark.sparkContext.setJobGroup(group, "the prediction alone")
    try:
        predicted = lab.tables["orders"].join_skew("customers", "customer_id", "id")
    finally:
        spark.sparkContext.setJobGroup("", "")
    assert spark.sparkContext.statusTracker().getJobIdsForGroup(group) == []  # statistics alone, no Spark job
    report = lab.tables["orders"].join_skew("customers", "customer_id", "id", run=True)
    assert report.sides[0].source.startswith("statistics") and report.sides[1].source.startswith("statistics")
    assert predicted.hot_keys.equals(report.hot_keys)
    truth = _joined_per_key(every, customers, "customer_id", "id")
    hot = report.hot_keys.set_index("key")
    assert hot.loc[HOT, "left_rows"] == (every["customer_id"] == HOT).sum()
    assert hot.loc[HOT, "right_rows"] == 2
    assert hot.loc[HOT, "output_rows"] == truth[HOT]
    tasks = report.tasks.set_index("partition")
    assert len(tasks) == int(spark.conf.get("spark.sql.shuffle.partitions"))
    # Spark's placement: the task holding customer 7 is the largest, as predicted, and its rows agree
    assert int(tasks["actual_rows"].idxmax()) == int(hot.loc[HOT, "partition"]) == int(report.largest["partition"])
    assert tasks["actual_rows"].sum() == truth.sum()
    largest = int(report.largest["partition"])
    predicted, actual = tasks.loc[largest, "predicted_rows"], tasks.loc[largest, "actual_rows"]
    assert abs(predicted - actual) <= 0.1 * actual
    # a few KiB of customers: Spark broadcasts them and shuffles nothing, which the recommendation says
    assert report.broadcast == "default.customers" and report.recommendation.startswith("Nothing to do: Spark broadcasts")


def test_shuffle_partitions_and_aqe_thresholds_change_the_prediction_as_sparks_run(shop, spark):
    lab, _, _ = shop
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for n in (3, 7):
            spark.conf.set("spark.sql.shuffle.partitions", str(n))
            report = lab.tables["orders"].join_skew("customers", "customer_id", "id", run=True)
            assert len(report.tasks) == n
            hot_partition = int(report.hot_keys.set_index("key").loc[HOT, "partition"])
            assert int(report.tasks.set_index("partition")["actual_rows"].idxmax()) == hot_partition
        assert report.split_by_aqe() == []  # a few KiB: under the 256 MiB threshold
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        report = lab.tables["orders"].join_skew("customers", "customer_id", "id")
        assert report.recommendation.startswith("Broadcast default.customers")  # shuffled, skewed, small
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1b")
        # a factor well under the largest task's ratio to the median, whatever the tasks' compression
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", f"{_bytes_ratio(report) / 3:.3f}")
        report = lab.tables["orders"].join_skew("customers", "customer_id", "id")
        assert int(report.largest["partition"]) in report.split_by_aqe()
        assert report.recommendation.startswith("Nothing to do: AQE")
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
        spark.conf.unset("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes")
        spark.conf.unset("spark.sql.adaptive.skewJoin.skewedPartitionFactor")
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_aqe_is_said_to_split_a_task_only_where_its_rule_surely_does_or_the_run_showed_it(shop, spark):
    """Spark's AQE measures a shuffle's compressed bytes; statistics know the rows' uncompressed bytes. Where the
    threshold falls between the two the prediction says it cannot tell, and a run reads AQE's own plan."""
    lab, _, _ = shop
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2")
        predicted = lab.tables["orders"].join_skew("customers", "customer_id", "id")
        largest = int(predicted.largest["partition"])
        task_bytes = float(max(predicted.largest["left_bytes"], predicted.largest["right_bytes"]))
        # within the compression's reach: Spark's measured bytes may fall on either side
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", f"{int(task_bytes / 2)}b")
        report = lab.tables["orders"].join_skew("customers", "customer_id", "id")
        assert largest in report.aqe_may_split() and largest not in report.split_by_aqe()
        assert not report.recommendation.startswith("Nothing to do: AQE")
        assert any(note.startswith(f"AQE may or may not split task {largest}") for note in report.notes)
        ran = lab.tables["orders"].join_skew("customers", "customer_id", "id", run=True)
        assert ran.aqe_observed is not None  # a classic session: the plan was read
        claims = ran.recommendation.startswith("Nothing to do: AQE")
        assert claims == ran.aqe_observed  # said to split exactly when AQE's final plan marks the join skew=true
        # far above the threshold and the factor, even at the best compression: AQE's rule surely splits it
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1b")
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", f"{_bytes_ratio(report) / 3:.3f}")
        assert largest in lab.tables["orders"].join_skew("customers", "customer_id", "id").split_by_aqe()
    finally:
        for key in ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
                    "spark.sql.adaptive.skewJoin.skewedPartitionFactor", "spark.sql.autoBroadcastJoinThreshold"):
            spark.conf.unset(key)


def _bytes_ratio(report) -> float:
    """The largest task's bytes over the median task's, on the side whose ratio is larger: what AQE's factor
    compares."""
    return max(float(report.tasks[f"{side}_bytes"].max() / report.tasks[f"{side}_bytes"].median())
               for side in ("left", "right"))


def test_null_keys_of_an_outer_join_land_in_one_task(shop, spark):
    lab, orders, customers = shop
    report = lab.tables["orders"].join_skew("customers", "customer_id", "id", where="ds = '2026-11-22'", how="left",
                                            run=True)
    n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    day = orders["2026-11-22"]
    assert report.sides[0].rows == len(day) and report.sides[0].nulls == NULLS
    tasks = report.tasks.set_index("partition")
    assert tasks["actual_rows"].sum() == len(day.merge(customers, left_on="customer_id", right_on="id", how="left"))
    assert tasks.loc[42 % n, "actual_left_rows"] >= NULLS  # Spark hashes every NULL key to pmod(42, n)


def test_a_string_key_hashes_as_spark_hashes_it(shop, spark):
    lab, orders, customers = shop
    report = lab.tables["orders"].join_skew("customers", "segment", "segment", run=True)
    every = pd.concat(orders.values())
    truth = _joined_per_key(every, customers, "segment", "segment")
    top = report.hot_keys.iloc[0]
    assert top["key"] == truth.idxmax() and top["output_rows"] == truth.max()
    assert int(report.tasks.set_index("partition")["actual_rows"].idxmax()) == int(top["partition"])


def test_stale_statistics_are_never_used_the_side_is_counted(shop, spark):
    lab, orders, customers = shop
    lab.set("hive.stats.column.autogather", False)
    try:
        extra = pd.DataFrame([(99_999, HOT, "c7", 1.0)], columns=["id", "customer_id", "segment", "amount"])
        lab.tables["orders"].write(extra, partition={"ds": DAYS[0]}, mode="append")
        report = lab.tables["orders"].join_skew("customers", "customer_id", "id")
        assert report.sides[0].source.startswith("counted")
        every = pd.concat([*orders.values(), extra])
        assert report.hot_keys.set_index("key").loc[HOT, "left_rows"] == (every["customer_id"] == HOT).sum()
    finally:
        lab.set("hive.stats.column.autogather", True)
        lab.sql("ANALYZE TABLE orders PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
        orders[DAYS[0]] = pd.concat([orders[DAYS[0]], extra], ignore_index=True)


def test_a_key_without_kept_frequent_values_is_counted_and_says_how_to_keep_them(shop):
    lab, orders, customers = shop
    report = lab.tables["orders"].join_skew("customers", "id", "id")
    assert report.sides[0].source.startswith("counted") and "colstats.frequent.items.columns" in report.sides[0].source
    assert report.sides[1].source.startswith("statistics")
    assert lab.metastore.column_stats.get_frequent_items("default", "orders", "amount") == {}  # not named: not kept
    assert report.hot_keys.set_index("key").loc[HOT, "right_rows"] == 2


def test_bad_arguments_name_the_problem(shop):
    lab, _, _ = shop
    with pytest.raises(NoSuchObjectException, match="nope"):
        lab.tables["orders"].join_skew("customers", "nope", "id")
    with pytest.raises(InvalidArgument, match="how is one of"):
        lab.tables["orders"].join_skew("customers", "customer_id", "id", how="sideways")
    with pytest.raises(InvalidArgument, match="amount is not a partition key"):
        lab.tables["orders"].join_skew("customers", "customer_id", "id", where="amount > 5")
    with pytest.raises(InvalidArgument, match="partition key of default.orders"):
        lab.tables["orders"].join_skew("customers", "ds", "id")


def test_an_aggregations_tasks_match_sparks_placement(shop, spark):
    lab, orders, _ = shop
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "16")  # the hot customer's task then holds 15x the median
    try:
        report = lab.tables["orders"].group_skew("customer_id", run=True)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    every = pd.concat(orders.values())
    assert report.kind == "aggregation" and report.hot_keys.iloc[0]["key"] == HOT
    assert report.hot_keys.iloc[0]["rows"] == (every["customer_id"] == HOT).sum()
    tasks = report.tasks.set_index("partition")
    assert tasks["actual_rows"].sum() == len(every)  # NULL keys are a group of their own
    largest = int(report.largest["partition"])
    assert int(tasks["actual_rows"].idxmax()) == largest
    predicted, actual = tasks.loc[largest, "predicted_rows"], tasks.loc[largest, "actual_rows"]
    assert abs(predicted - actual) <= 0.1 * actual
    assert "partial aggregation" in report.recommendation and "customer_id = 7" in report.recommendation


def test_the_magic_shows_the_view_and_run_it_draws_sparks_placement(shop, spark):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    lab, _, _ = shop
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = lab
    shell.run_line_magic("load_ext", "colstats_lab")
    with capture_output():
        view = shell.run_line_magic("skew", "--lab lab orders.customer_id LEFT JOIN customers.id "
                                            "WHERE orders.ds = '2026-11-22'")
    assert view.result.how == "left" and view.result.sides[0].rows == len(shop[1]["2026-11-22"])
    assert "left join" in view.header.value and "Recommendation" in view.recommendation_html.value
    assert [trace.name for trace in view.figure.data] == ["predicted rows"]
    with capture_output():
        view.run_button.click()
    assert view.result.measured and [t.name for t in view.figure.data] == ["predicted rows", "rows as Spark placed them"]
    with pytest.raises(Exception, match="expected table.column on each side of JOIN"):
        shell.run_line_magic("skew", "--lab lab orders JOIN customers.id")


def test_a_composite_key_is_counted_and_placed_as_spark_hashes_both_columns(shop):
    lab, orders, customers = shop
    report = lab.tables["orders"].join_skew("customers", ["customer_id", "segment"], ["id", "segment"], run=True)
    every = pd.concat(orders.values())
    truth = every.dropna(subset=["customer_id"]).merge(customers, left_on=["customer_id", "segment"],
                                                     right_on=["id", "segment"]).groupby(["customer_id", "segment"]).size()
    assert all(side.source.startswith("counted") for side in report.sides)
    top = report.hot_keys.iloc[0]
    assert tuple(top["key"]) == (HOT, "c7") and top["output_rows"] == truth[(HOT, "c7")]
    tasks = report.tasks.set_index("partition")
    assert tasks["actual_rows"].sum() == truth.sum()
    assert int(tasks["actual_rows"].idxmax()) == int(top["partition"]) == int(report.largest["partition"])
    with pytest.raises(InvalidArgument, match="give as many on each side"):
        lab.tables["orders"].join_skew("customers", ["customer_id", "segment"], "id")


def test_an_approximate_skew_report_comes_from_the_kept_sketches_while_they_are_fresh(shop):
    lab, orders, _ = shop
    report = lab.tables["orders"].skew("customer_id", mode="approx", top=5)
    assert report.source.startswith("statistics")
    every = pd.concat(orders.values())
    for label, frame in [*((f"ds={ds}", orders[ds]) for ds in DAYS), ("(table)", every)]:
        counts = frame["customer_id"].value_counts()
        top = report.for_partition(label)
        assert top.iloc[0]["value"] == HOT
        assert all(abs(c - counts[v]) <= report.max_items for v, c in zip(top["value"], top["count"], strict=True))
        assert report.totals[label] == len(frame) and report.null_count(label) == frame["customer_id"].isna().sum()
    view = lab.views.skew("orders", "customer_id", mode="approx")
    assert "kept with the statistics" in view.header.value
    lab.set("hive.stats.column.autogather", False)
    try:
        extra = pd.DataFrame([(99_998, HOT, "c7", 1.0)], columns=["id", "customer_id", "segment", "amount"])
        lab.tables["orders"].write(extra, partition={"ds": DAYS[1]}, mode="append")
        assert lab.tables["orders"].skew("customer_id", mode="approx").source == "scan"  # stale: never used
    finally:
        lab.set("hive.stats.column.autogather", True)
        lab.sql("ANALYZE TABLE orders PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
        orders[DAYS[1]] = pd.concat([orders[DAYS[1]], extra], ignore_index=True)


def test_keys_that_are_all_null_or_absent_get_a_sentence_not_an_error(lab, spark):
    lab.sql("CREATE TABLE nulls (k BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["nulls"].write(pd.DataFrame({"k": pd.array([None] * 40, dtype="Int64")}), partition={"ds": "a"})
    lab.sql("CREATE TABLE dims (k BIGINT)")
    lab.tables["dims"].write(pd.DataFrame({"k": [1, 2, 3]}))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        left = lab.tables["nulls"].join_skew("dims", "k", "k", how="left", run=True)
        grouped = lab.tables["nulls"].group_skew("k", run=True)
        nothing = lab.tables["nulls"].join_skew("dims", "k", "k", where="ds = 'none'")
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
        spark.conf.set("spark.sql.shuffle.partitions", before)
    n = 8
    assert left.tasks.set_index("partition").loc[42 % n, "actual_rows"] == 40
    assert left.recommendation.startswith("Filter or handle the NULL keys") and "median task empty" in left.recommendation
    assert grouped.tasks.set_index("partition").loc[42 % n, "actual_rows"] == 40
    assert nothing.sides[0].rows == 0 and nothing.recommendation.startswith("Nothing to do")


def test_a_decimal_or_double_key_is_counted_value_by_value(lab, spark):
    """Keys no sketch keeps are counted as their exact text: 1.50 and 1.70 stay two keys, placed as Spark
    places them."""
    from decimal import Decimal

    rnd = random.Random(5)
    cents = [150] * 100 + [170] * 80 + [rnd.randint(100, 199) for _ in range(120)]
    lab.sql("CREATE TABLE priced (k DECIMAL(10,2), w DOUBLE)")
    lab.tables["priced"].write(pd.DataFrame({"k": [Decimal(c) / 100 for c in cents], "w": [c / 100 for c in cents]}))
    lab.sql("CREATE TABLE prices (k DECIMAL(10,2), w DOUBLE)")
    lab.tables["prices"].write(pd.DataFrame({"k": [Decimal(c) / 100 for c in range(100, 200)],
                                             "w": [c / 100 for c in range(100, 200)]}))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        for key, hot in (("k", [Decimal("1.50"), Decimal("1.70")]), ("w", [1.5, 1.7])):
            report = lab.tables["priced"].join_skew("prices", key, key, run=True)
            assert all(side.source.startswith("counted") for side in report.sides)
            top = report.hot_keys.head(2)
            assert list(top["key"]) == hot and list(top["output_rows"]) == [cents.count(150), cents.count(170)], key
            tasks = report.tasks.set_index("partition")
            assert tasks["actual_rows"].sum() == len(cents)  # every left key meets one right row
            assert int(tasks["actual_rows"].idxmax()) == int(report.largest["partition"]) == int(top.iloc[0]["partition"])
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_a_decimal_key_past_a_long_is_placed_as_spark_places_it_and_a_struct_key_is_named(lab, spark):
    """DECIMAL(38,0) keys beyond a long reach Spark as text (a Python int that large is no literal Py4J
    passes); a struct key is refused in one line naming it."""
    from decimal import Decimal

    base = 10 ** 37
    keys = [base] * 150 + [base + 1] * 60 + [base + i for i in range(2, 90)]
    lab.sql("CREATE TABLE wide (k DECIMAL(38,0), s STRUCT<a:INT>)")
    lab.tables["wide"].write(pd.DataFrame({"k": [Decimal(k) for k in keys], "s": [{"a": 1}] * len(keys)}))
    lab.sql("CREATE TABLE wide_dims (k DECIMAL(38,0), s STRUCT<a:INT>)")
    lab.tables["wide_dims"].write(pd.DataFrame({"k": [Decimal(base + i) for i in range(90)], "s": [{"a": 1}] * 90}))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        report = lab.tables["wide"].join_skew("wide_dims", "k", "k", run=True)
        top = report.hot_keys.head(2)
        assert list(top["key"]) == [Decimal(base), Decimal(base + 1)]
        assert list(top["output_rows"]) == [150, 60]
        tasks = report.tasks.set_index("partition")
        assert tasks["actual_rows"].sum() == len(keys)
        assert int(tasks["actual_rows"].idxmax()) == int(report.largest["partition"]) == int(top.iloc[0]["partition"])
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    with pytest.raises(InvalidArgument, match=r"column s of default.wide is struct<a:int>"):
        lab.tables["wide"].join_skew("wide_dims", "s", "s")


def test_a_key_hot_on_one_side_meets_its_true_count_on_the_other(lab, spark):
    """Issue 48's case, smaller: customer 1 holds 30 % of the orders and four customers rows, customer 2 about 10 %
    and three; every other id once. The other side's sketch lists neither key, so each is counted there: its
    stated bounds hold the rows Spark's join gives, and the largest task is predicted where Spark places it."""
    rnd = random.Random(48)
    orders = [1] * 6_000 + [2] * 2_100 + [rnd.randint(3, 20_000) for _ in range(11_900)]
    customers = [1] * 4 + [2] * 3 + list(range(3, 20_001))  # more ids than a counting sketch tracks
    lab.sql("CREATE TABLE o48 (customer_id BIGINT)")
    lab.tables["o48"].write(pd.DataFrame({"customer_id": orders}))
    lab.sql("CREATE TABLE c48 (id BIGINT)")
    lab.tables["c48"].write(pd.DataFrame({"id": customers}))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    try:
        report = lab.tables["o48"].join_skew("c48", "customer_id", "id", run=True)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
        spark.conf.set("spark.sql.shuffle.partitions", "2")
    hot = report.hot_keys.set_index("key")
    for key in (1, 2):
        truth = orders.count(key) * customers.count(key)
        assert hot.loc[key, "right_rows"] == customers.count(key) == hot.loc[key, "right_low"] == hot.loc[key, "right_high"]
        assert hot.loc[key, "output_low"] <= truth <= hot.loc[key, "output_high"], key
    tasks = report.tasks.set_index("partition")
    assert tasks["actual_rows"].sum() == sum(orders.count(k) * customers.count(k) for k in set(orders))
    largest = int(report.largest["partition"])
    assert largest == int(tasks["actual_rows"].idxmax()) == int(hot.loc[1, "partition"])
    assert report.largest["predicted_rows"] == pytest.approx(tasks["actual_rows"].max(), rel=0.05)


def test_a_key_pandas_wrote_as_float_joins_a_bigint_key_as_spark_compares_them(lab, spark, tmp_path):
    """An integer column holding a NULL is float64 in pandas, so its Parquet column is a double: Spark compares it
    with a bigint key as doubles, and the prediction places the keys so, in join_skew and beside a run."""
    import numpy as np

    rng = np.random.default_rng(5)
    orders = pd.DataFrame({"customerId": np.where(rng.random(20_000) < 0.3, 42, rng.integers(0, 2_000, 20_000)),
                           "amount": rng.random(20_000)})
    orders.loc[orders.sample(frac=0.05, random_state=1).index, "customerId"] = None  # float64 now
    customers = pd.DataFrame({"customerId": np.arange(2_000), "name": [f"c{i}" for i in range(2_000)]})
    for name, frame in (("orders", orders), ("customers", customers)):
        (tmp_path / name).mkdir()
        frame.to_parquet(tmp_path / name / "part-0.parquet", index=False)
        lab.register_external(name, str(tmp_path / name))
        lab.tables[name].analyze()
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.shuffle.partitions": "16",
                "spark.sql.adaptive.enabled": "false"}  # 16 tasks: the hot key's holds 5x the median or more
    before = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        report = lab.tables["orders"].join_skew("customers", "customerid", "customerid", how="left", run=True)
        hot = report.hot_keys.set_index("key")
        assert hot.loc[42, "left_rows"] == (orders["customerId"] == 42).sum()
        tasks = report.tasks.set_index("partition")
        assert int(tasks["actual_rows"].idxmax()) == int(hot.loc[42, "partition"]) == int(report.largest["partition"])
        assert tasks["actual_rows"].sum() == len(orders)  # a left join keeps every order, NULL keys too
        ran = lab.explain("SELECT o.amount, c.name FROM orders o LEFT JOIN customers c "
                          "ON o.customerId = c.customerId", run=True).skewed().iloc[0]
        assert ran["task_rows_max"] == tasks["actual_rows"].max() and ran["hot_keys"] == [42.0]
        assert abs(ran["predicted_task_rows"] - ran["task_rows_max"]) <= 0.02 * ran["task_rows_max"]
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)
