"""Inspect's entry point (`[project.entry-points.inspect_ai]`): genotex's tasks and agents."""

from ._tasks import analysis, baseline, e2e, genotex_scorer, gold, preprocess  # noqa: F401
