"""The rows a partition's deletes remove from its data files, by position within each file: Delta's deletion
vectors decoded (`deletion_vectors`), Iceberg's position-delete files read (each row a data file's path and a
position; a position may be deleted by more than one file, and counts once). What metadata alone subtracts from the
footers' rows and what a sample leaves out of the row groups it reads."""
from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyroaring import BitMap64

from ..errors import InvalidArgument
from ..files import POSITION_DELETES, DataFile
from ..storage import is_local, local_path, normalized, storage_for
from .deletion_vectors import deleted_positions, file_vectors, vector_of


def deleted_by_file(files: list[DataFile], deletes: list[DataFile], table_root: str) -> dict[str, BitMap64]:
    """The deleted positions of each data file of `files` that a delete of `deletes` applies to, by its path."""
    out: dict[str, BitMap64] = {data_file.path: deleted_positions(*vector_of(vector), table_root,
                                                                  data_file.record_count)
                                for data_file, vector in file_vectors(files, deletes)}
    position_files = [d for d in deletes if d.content == POSITION_DELETES]
    if position_files:
        by_name = {_spelled(f.path): f for f in files}
        for delete_file in position_files:
            for data_path, positions in _positions(delete_file).items():
                data_file = by_name.get(_spelled(data_path))
                if data_file is None:  # a file of another partition, or gone: it removes nothing here
                    continue
                if data_file.record_count is not None and len(positions) and positions.max() >= data_file.record_count:
                    raise InvalidArgument(f"position-delete file {delete_file.path} deletes row {positions.max():,} of "
                                          f"{data_file.path}, past its {data_file.record_count:,} rows")
                out[data_file.path] = out.get(data_file.path, BitMap64()) | positions
    return out


def _spelled(path: str) -> str:
    """A data file's path as both a manifest and a delete file name it: `file:` left out."""
    return local_path(path) if is_local(path) else normalized(path)


def _positions(delete_file: DataFile) -> dict[str, BitMap64]:
    """Each data file's positions a position-delete file names (its `file_path` and `pos` columns)."""
    with storage_for(delete_file.path).open_input(delete_file.path) as handle:
        table = pq.read_table(handle, columns=["file_path", "pos"])
    named = pc.dictionary_encode(table.column("file_path")).combine_chunks()
    codes = named.indices.to_numpy(zero_copy_only=False)
    positions = table.column("pos").to_numpy().astype("uint64")
    order = np.argsort(codes, kind="stable")  # each file's positions together, in one pass
    bounds = np.searchsorted(codes[order], np.arange(len(named.dictionary) + 1))
    return {name: BitMap64(positions[order[bounds[i]:bounds[i + 1]]].tolist())
            for i, name in enumerate(named.dictionary.to_pylist())}
