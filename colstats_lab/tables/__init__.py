"""Managed table storage: Hive's insert-only layout on disk, writes with write IDs, snapshot reads."""
from .kinds import kind_of, read_snapshot, snapshot_files
from .layout import admitted_dirs, base_dir_name, delta_dir_name
from .snapshot import PartitionFiles, spark_schema, spark_type
from .writer import WriteResult, write_table
