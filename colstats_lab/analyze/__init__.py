"""Running ANALYZE: the snapshot to scan, the one Spark aggregation, persisting in one transaction."""
from .runner import AnalyzeOutcome, run_analyze
