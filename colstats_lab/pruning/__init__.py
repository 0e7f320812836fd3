"""Pruning and answers from statistics: what a query can skip, or answer without scanning."""
from .answers import StatsAnswer, answer_from_stats
from .plan import plan_table_read, single_table_where
from .report import LIST_BUCKETING_LEVEL, PruningDecision, PruningReport
