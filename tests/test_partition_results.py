"""An ANALYZE's partitions' results kept from the scan to the commit: held, then in a temporary file past the
limit, each read back as it was put (no JVM: a unit test)."""
from __future__ import annotations

import os

import pytest

from colstats_lab.column_statistics.model import (
    BinaryColumnStatsData,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    LongColumnStatsData,
)
from colstats_lab.stats.aggregate import GroupStats
from colstats_lab.stats.partition_results import PartitionResults


def _group(day: int) -> GroupStats:
    """A partition's figures with a sketch of its own bytes: what a pickled round trip must keep exactly."""
    sketch = bytes(range(day % 256)) * 3
    return GroupStats((f"2026-01-{day:02d}", None), 100 + day, [
        ColumnStatisticsObj("id", "bigint", ColumnStatisticsData.of(LongColumnStatsData(
            lowValue=-day, highValue=day * 1_000, numNulls=day % 3, numDVs=day, bitVectors=sketch))),
        ColumnStatisticsObj("payload", "binary", ColumnStatisticsData.of(BinaryColumnStatsData(
            maxColLen=day, avgColLen=day / 2, numNulls=0)))], row_sketch=sketch or None)


@pytest.mark.parametrize("held, groups", [(10, 3), (3, 3), (3, 4), (1, 25), (0, 5)])
def test_every_partition_reads_back_as_it_was_put_held_or_in_the_file(held, groups):
    results = PartitionResults(held_in_memory=held)
    put = [_group(day) for day in range(1, groups + 1)]
    results.add_all(put)
    assert len(results) == groups and results.spilled == (groups > held)
    for group in reversed(put):  # any order, as the commit's batches ask
        assert group.values in results and results.get(group.values) == group
    assert results.get(("2026-02-01", None)) is None and ("2026-02-01", None) not in results
    assert not results.closed
    results.close()
    assert len(results) == 0 and results.get(put[0].values) is None
    assert results.closed  # what keeps an ANALYZE's change from being stored twice, as empty the second time


def test_a_partition_put_again_reads_back_as_the_last_put():
    """Two jobs never hand over one partition, but a tier's figures replace a scan's where both came."""
    results = PartitionResults(held_in_memory=1)
    first, again = _group(4), _group(4)
    again.num_rows = 7
    results.add_all([first, _group(5), again])
    assert results.get(first.values).num_rows == 7 and len(results) == 2


def test_the_file_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    results = PartitionResults(held_in_memory=0)
    results.add(_group(1))
    assert results.spilled and os.listdir(tmp_path) == []  # unlinked as it is made: a crash leaves nothing
    results.close()
