"""The views: ipywidgets and plotly presenting what the lab's commands return, and Spark's progress."""
from . import (  # noqa: F401,E501 - each view registers itself
    drift_view,
    engines_view,
    freshness_view,
    join_skew_view,
    metadata_view,
    plan_view,
    profile_view,
    pruning_view,
    puffin_view,
    runs_view,
    skew_view,
    stats_view,
    transactions_view,
)
from .widgets import VIEWS, View
