"""The workbench: IPython magics, ipywidgets views, plotly charts, Spark progress."""
from . import freshness_view, metadata_view, pruning_view, skew_view, stats_view, transactions_view  # noqa: F401 - each view registers itself
from .widgets import VIEWS, View


def load_ipython_extension(ipython) -> None:
    from .magics import load_ipython_extension as load

    load(ipython)
