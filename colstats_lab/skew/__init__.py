"""Skew: heavy hitters per partition, skew reports with list-bucketing recommendations, skew specs."""
from .report import DEFAULT_MODE, MODES, TABLE_LEVEL, SkewReport, skew_report
