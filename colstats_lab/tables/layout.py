"""Where a table's files live: Hive's insert-only layout of `base_N/` and `delta_N_N/` directories.

A managed table keeps each write's files in `delta_N_N/` (an overwrite: `base_N/`) under the
partition directory; a reader admits the newest valid base and the valid deltas above it.
An external table's files sit directly in its partition directories.
"""
from __future__ import annotations

import re

from ..files import DataFile
from ..metastore.rows.write_ids import ValidWriteIdList
from ..storage import footer_of, join, storage_for

_DELTA = re.compile(r"^delta_(\d+)_(\d+)(?:_(\d+))?$")  # Hive's delta_N_N[_statement]
_BASE = re.compile(r"^base_(\d+)$")


def delta_dir_name(write_id: int, statement: int = 0) -> str:
    """`delta_N_N` for a write's first statement into a directory, `delta_N_N_SSSS` for later ones."""
    return f"delta_{write_id:07d}_{write_id:07d}" + (f"_{statement:04d}" if statement else "")


def base_dir_name(write_id: int) -> str:
    return f"base_{write_id:07d}"


def admitted_dirs(location: str, valid: ValidWriteIdList) -> list[str]:
    """The base/delta directories of one partition (or unpartitioned table) a reader may see."""
    names = storage_for(location).child_names(location)
    bases, deltas = [], []
    for name in names:
        if (m := _BASE.match(name)) and valid.is_write_id_valid(int(m.group(1))):
            bases.append((int(m.group(1)), name))
        elif (m := _DELTA.match(name)) and valid.is_write_id_valid(int(m.group(2))):
            deltas.append((int(m.group(2)), name))
    base_id, base_name = max(bases, default=(0, None))
    chosen = [base_name] if base_name else []
    # A delta with the base's own write ID was written after it in the same transaction: an
    # overwrite removes its transaction's earlier deltas of the partition.
    chosen += [name for write_id, name in sorted(deltas) if write_id > base_id or (base_name and write_id == base_id)]
    return [join(location, name) for name in chosen]


def own_dirs(location: str, write_id: int) -> list[str]:
    """A partition's directories written under `write_id` (one transaction's statements)."""
    return [join(location, n) for n in storage_for(location).child_names(location) if write_id_of(n) == write_id]


def write_id_of(name: str) -> int | None:
    """The write ID of a `delta_N_N` or `base_N` directory name; None for anything else."""
    if m := _DELTA.match(name):
        return int(m.group(2))
    if m := _BASE.match(name):
        return int(m.group(1))
    return None


def footer_counts(data_file: DataFile) -> tuple[int, int]:
    """(rows, uncompressed bytes) of a Parquet file from its footer; no data is read. The bytes are
    what Hive calls rawDataSize."""
    meta = footer_of(data_file)
    return meta.num_rows, sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
