"""Spark's side of statistics: aggregation plans per column type, NDV sketch inputs, metadata scans."""
from .aggregate import ColumnPlan, GroupStats, aggregate_stats, empty_stats, observe_stats
from .sketches import ndv_input
