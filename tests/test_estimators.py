"""The estimators of a tiered ANALYZE, table-driven and without Spark: a figure's band and its stored form, the
table level's merge of its partitions' bands, and the two sampled estimators' bands against the truth of data
drawn here (numpy over the whole, the estimator over a sample of its row groups)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from colstats_lab.column_statistics.estimators import (
    BOUNDS_PARAM,
    METADATA_TIER,
    UNKNOWN_BAND,
    WHOLE_TIER,
    Band,
    Tier,
    gee_ndv,
    inexact_figures,
    merged_band,
    ratio_estimate,
)


@pytest.mark.parametrize("band", [
    Band(12, 10, 14, False, "footer bounds"),
    Band(None, 0, 500, False, "unknown without a scan"),
    Band("2026-01-01", None, "2026-01-01", False, "footers, a bound: deleted rows may hold it"),
    Band(7, 7, 7, True, "every value"),
    UNKNOWN_BAND,
])
def test_a_band_keeps_one_json_form_and_reads_back_equal(band):
    stored = json.loads(json.dumps(band.to_list()))
    assert stored == [band.value, band.low, band.high, band.exact, band.method]
    assert Band.of(stored) == band


def test_the_unknown_band_is_unknown_and_a_known_one_is_exact():
    assert UNKNOWN_BAND.unknown and not UNKNOWN_BAND.exact
    assert Band.known(5) == Band(5, 5, 5, True, "every value") and not Band.known(5).unknown


def test_the_inexact_figures_are_read_from_the_stored_lists():
    parameters = {BOUNDS_PARAM: json.dumps({"x": {"tier": "metadata", "read": 0.0, "figures": {
        "nulls": [3, 3, 3, True, "footers"], "ndv": [40, 20, 80, False, "footer bounds"],
        "min": [None, None, None, False, "unknown without a scan"]}}})}
    assert inexact_figures(parameters, "x") == ["min", "ndv"] and inexact_figures(parameters, "y") == []


EXACT = "every value"


# (figure, the partitions' bands with their rows, non_null, ranges) -> the table level's band
MERGES = [
    ("counts add, exact where every one is",
     "nulls", [(Band(3, 3, 3, True, "footers"), 10), (Band(4, 4, 4, True, "footers"), 20)], None, None,
     Band(7, 7, 7, True, EXACT)),
    ("counts add, the band is the sum of theirs",
     "nulls", [(Band(3, 3, 3, True, "footers"), 10), (Band(5, 2, 9, False, "NULL share"), 20)], None, None,
     Band(8, 5, 12, False, "partitions merged (NULL share)")),
    ("an unknown count makes the sum unknown, its band still theirs",
     "nulls", [(Band(3, 3, 3, True, "footers"), 10), (Band(None, 0, 20, False, "unknown"), 20)], None, None,
     Band(None, 3, 23, False, "partitions merged (unknown)")),
    ("a minimum: the least, exact where every one is",
     "min", [(Band(4, None, None, True, "footers"), 1), (Band(-2, None, None, True, "footers"), 1)], None, None,
     Band(-2, None, None, True, EXACT)),
    ("a minimum from a bound: below the least low, at most the least high",
     "min", [(Band(4, None, None, True, "footers"), 1), (Band(6, 1, 6, False, "sample"), 1)], None, None,
     Band(4, 1, 4, False, "partitions merged (sample)")),
    ("an exact minimum under every other's band is exact",
     "min", [(Band(0, None, None, True, "footers"), 1), (Band(6, 1, 6, False, "sample"), 1)], None, None,
     Band(0, 0, 0, True, EXACT)),
    ("a maximum open above stays open",
     "max", [(Band(9, None, None, True, "footers"), 1), (Band(7, 7, None, False, "sample"), 1)], None, None,
     Band(9, 9, None, False, "partitions merged (sample)")),
    ("an average length is weighted by rows",
     "avg_len", [(Band(2.0, 2.0, 2.0, True, "size"), 10), (Band(5.0, 4.0, 6.0, False, "bytes"), 30)], None, None,
     Band(4.25, 3.5, 5.0, False, "partitions merged (bytes)")),
    ("NDV without sketches: between the largest partition's and their sum, at most the values",
     "ndv", [(Band(10, 10, 10, True, "dictionary pages"), 50), (Band(30, 20, 40, False, "GEE"), 50)], 45, None,
     Band(None, 20, 45, False, "partitions merged without sketches: between the largest partition's and their sum")),
    ("NDV of partitions whose ranges lie apart: their counts add",
     "ndv", [(Band(10, 10, 10, True, "dictionary pages"), 50), (Band(30, 20, 40, False, "GEE"), 50)], None,
     [(0, 9), (10, 99)],
     Band(40, 30, 50, False, "partitions merged: their ranges apart, so their counts add")),
    ("no partition", "rows", [], None, None, Band(None, None, None, False, "no partition")),
]


@pytest.mark.parametrize("figure, parts, non_null, ranges, expected", [m[1:] for m in MERGES],
                         ids=[m[0] for m in MERGES])
def test_the_table_level_merges_its_partitions_bands(figure, parts, non_null, ranges, expected):
    assert merged_band(figure, parts, non_null, ranges) == expected


def _row_groups(rng: np.random.Generator, groups: int, rows: int, share: float) -> tuple[list[int], list[int]]:
    """NULLs and rows of `groups` row groups, each group's share drawn around `share` (clustered data)."""
    shares = np.clip(rng.normal(share, share / 3, groups), 0, 1)
    counts = [int(rng.binomial(rows, s)) for s in shares]
    return counts, [rows] * groups


@pytest.mark.parametrize("share, groups, read", [(0.05, 200, 10), (0.3, 400, 20), (0.5, 100, 5), (0.0, 50, 5)])
def test_a_shares_band_holds_the_truth_in_nearly_every_sample(share, groups, read):
    """The NULL share over `read` of `groups` row groups: its band holds the whole's share (numpy's) in at least
    95 of 100 samples, as its 95 % confidence says (the t quantile and the finite-population correction)."""
    rng = np.random.default_rng(int(share * 1000) + groups)
    nulls, rows = _row_groups(rng, groups, 1_000, share)
    truth = sum(nulls) / sum(rows)
    held = 0
    for _ in range(100):
        chosen = rng.choice(groups, read, replace=False)
        band = ratio_estimate([nulls[i] for i in chosen], [rows[i] for i in chosen], groups, 0.0, 1.0)
        assert 0.0 <= band.low <= band.value <= band.high <= 1.0
        held += band.low <= truth <= band.high
    assert held >= 95, f"the band held the truth {truth:.4f} in {held} of 100 samples"


def test_every_row_group_read_gives_the_exact_share():
    band = ratio_estimate([3, 5], [10, 10], 2, 0.0, 1.0)
    assert (band.value, band.low, band.high) == (0.4, 0.4, 0.4)


@pytest.mark.parametrize("distinct, groups, read", [(50, 100, 10), (5_000, 100, 10), (20_000, 200, 20)])
def test_gees_band_holds_the_distinct_values_and_the_files_bounds(distinct, groups, read):
    """NDV from the values counted in `read` of `groups` row groups of 500 rows drawn from `distinct` values:
    inside the hard bounds the files give, and its band holds numpy's count of the whole."""
    rng = np.random.default_rng(distinct)
    data = rng.integers(0, distinct, (groups, 500))
    truth = len(np.unique(data))
    chosen = rng.choice(groups, read, replace=False)
    seen_in: dict[int, int] = {}
    for i in chosen:
        for value in np.unique(data[i]):
            seen_in[int(value)] = seen_in.get(int(value), 0) + 1
    frequencies: dict[int, int] = {}
    for times in seen_in.values():
        frequencies[times] = frequencies.get(times, 0) + 1
    low, high = 1, groups * 500
    band = gee_ndv(frequencies, read, groups, low, high, values_read=read * 500, values_high=groups * 500,
                   values_total=groups * 500)
    assert low <= band.low <= band.value <= band.high <= high
    assert band.low >= len(seen_in)  # never fewer than the sample saw
    assert band.low <= truth <= band.high, (truth, band)


# (FOR COLUMNS ... NOSCAN, SAMPLE n PERCENT) -> the tier, its label as stored and shown, its fraction
TIERS = [
    (False, None, WHOLE_TIER, "", None),
    (True, None, METADATA_TIER, "metadata", None),
    (False, 5.0, Tier("sample", 0.05), "5 %", 0.05),
    (False, 7.0, Tier("sample", 0.07), "7 %", 0.07),
    (False, 12.5, Tier("sample", 0.125), "12.5 %", 0.125),
    (False, 100.0, WHOLE_TIER, "", None),  # SAMPLE 100 PERCENT reads every value
]


@pytest.mark.parametrize("metadata_only, percent, tier, label, fraction", TIERS)
def test_a_tier_comes_from_the_statement_and_reads_back_from_its_label(metadata_only, percent, tier, label, fraction):
    made = Tier.of_analyze(metadata_only, percent)
    assert made == tier and made.label == label and made.fraction == pytest.approx(fraction)
    assert Tier.of_label(label) == Tier(made.kind, None if fraction is None else pytest.approx(fraction))
    assert bool(made) is not made.is_whole and [made.is_whole, made.is_metadata, made.is_sample].count(True) == 1


def test_every_value_read_is_the_whole_tier_by_any_label():
    assert Tier.of_label("every value") == Tier.of_label("") == WHOLE_TIER and not WHOLE_TIER


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, True, "0.1", None])
def test_a_sample_outside_its_range_is_refused_in_the_one_place_that_checks_it(bad):
    with pytest.raises(ValueError, match="a fraction of row groups above 0 and at most 1"):
        Tier.sampled(bad)
