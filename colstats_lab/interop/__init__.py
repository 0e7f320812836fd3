"""Statistics exchanged with Spark's own catalog."""
from .spark_catalog import SparkTable, UnsupportedCatalog, plan_statistics, read_table_statistics, write_table_statistics
