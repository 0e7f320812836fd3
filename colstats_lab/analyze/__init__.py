"""Running ANALYZE: the snapshot to scan, the one Spark aggregation, persisting in one transaction."""
from .refresh_metadata import UP_TO_DATE, RefreshOutcome, run_refresh_metadata
from .runner import AnalyzeOutcome, run_analyze
