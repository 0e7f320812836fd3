"""Skew: heavy hitters per partition, skew reports with list-bucketing recommendations, skew specs."""
from .report import DEFAULT_MODE, MODES, SkewReport, skew_report
