"""Pruning and answers from statistics: what a query can skip, or answer without scanning."""
from .answers import StatsAnswer, answer_from_stats
from .plan import PlanningOptions, plan_table_read, plan_with_metadata, single_table_where
from .report import PruningDecision, PruningReport
