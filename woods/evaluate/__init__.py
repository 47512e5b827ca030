"""Retrieval evaluation: query sets, metrics, baselines and the Ruby-bench corpus mode."""

from woods.evaluate.runner import EvaluationReport, QueryOutcome, run_evaluation

__all__ = ["EvaluationReport", "QueryOutcome", "run_evaluation"]
