"""Spark aggregation plans per column type, NDV sketches, and merging partition stats upward."""
from .aggregate import ColumnPlan, GroupStats, aggregate_stats, empty_stats, observe_stats
from .merge import merge_column_stats, merge_table_level
from .sketches import NDV_LG_K, ndv_input, ndv_relative_error
