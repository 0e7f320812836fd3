"""Skew: the most frequent values of a column per partition (list-bucketing work builds on it)."""
from .topk import TABLE_LEVEL, TopValues, top_values
