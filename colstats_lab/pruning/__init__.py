"""Pruning and answers from statistics: what a query can skip, or answer without scanning."""
from .answers import StatsAnswer, answer_from_stats
