"""The lab's own families under one attribute each: `lab.autoanalyze` (a round now, the rounds run, the queue)
and `lab.views` (the registered workbench views by name)."""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd

from .analyze.autoanalyze import queue_frame, rounds_frame
from .commands import analyze as analyze_commands
from .errors import InvalidArgument
from .frames import DEFAULT_LIMIT
from .storage import listed_by

if TYPE_CHECKING:
    from .facade import LabFacade
    from .result import Result


@listed_by(lambda namespace: namespace._lab.listing)
class AutoAnalyze:
    """Auto-analyze on this lab's metastore: `run()` one round now (also `lab.autoanalyze(...)`), `rounds()`
    what every worker did, `queue()` what the next round would take. `colstats-lab autoanalyze` runs rounds
    on a schedule."""

    def __init__(self, lab: LabFacade):
        self._lab = lab

    def __call__(self, databases: list[str] | str | None = None, mode: str = "all", threshold: float = 0.3,
                 budget: str | float = "15m", columns: str = "all") -> Result:
        """One round now, as `run`."""
        return self.run(databases, mode, threshold, budget, columns)

    def run(self, databases: list[str] | str | None = None, mode: str = "all", threshold: float = 0.3,
            budget: str | float = "15m", columns: str = "all") -> Result:
        """One round of auto-analyze now: what went stale, most stale first, within a budget. Partitions with an
        open write wait for it.

        Args:
            databases: the databases whose tables to watch (all by default); a table marked
                `skip.stats.autoupdate=true` is left out.
            mode: "all" (never analyzed partitions too) or "existing" (only those analyzed before).
            threshold: partitions whose statistics are not accurate and whose rows changed by this fraction or more
                are due (any change where rows cannot be counted).
            budget: "15m", "90s" or seconds: the round stops starting tables past it.
            columns: "all", or "analyzed" (only the columns analyzed before).

        Returns:
            A Result whose `.details` is the round (`.due`, `.analyzed`, `.left`, `.held_back`, `to_pandas()`).

        Raises:
            InvalidArgument: naming a bad mode, threshold or budget."""
        return analyze_commands.autoanalyze(self._lab, databases, mode, threshold, budget, columns)

    def rounds(self, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
        """The latest rounds any worker ran on this metastore, newest first.

        Args:
            limit: how many rounds at most.

        Returns:
            A DataFrame, a row a round: `round_id`, `worker`, `started_at` and `ended_at` (UTC; NaT: running, or
            its worker was stopped), `seconds`, `due`, `analyzed`, `left_for_later`, `failed`, `tables` (those
            it analyzed) and `options` (a dict). No row when no worker ever ran."""
        return rounds_frame(self._lab.metastore, limit)

    def queue(self) -> pd.DataFrame:
        """What the next round would analyze, most stale first, under the options of the latest round any
        worker ran. No Spark.

        Returns:
            A DataFrame, a row a due partition: `table`, `partition` (None: an unpartitioned table),
            `changed_fraction` (None: not countable in rows, or never analyzed), `reason`, `analyzed_columns`
            and `said` (the line the dashboard shows). `attrs["options"]` holds the options (None, and no row,
            when no worker ever ran)."""
        return queue_frame(self._lab.metastore)

    def __repr__(self) -> str:
        return "<AutoAnalyze: run(), rounds(), queue()>"


@listed_by(lambda namespace: namespace._lab.listing)
class Views:
    """The workbench views by name, each an ipywidgets object: `lab.views.stats("sales")`,
    `lab.views("skew", "sales", "x")`; `dir(lab.views)` lists them."""

    def __init__(self, lab: LabFacade):
        self._lab = lab

    def __call__(self, name: str, *args, **kwargs) -> Any:
        """The view `name` made with `args`; raises InvalidArgument naming an unknown view."""
        from .ui import VIEWS

        if name not in VIEWS:
            raise InvalidArgument(f"no view named {name!r}; there are {', '.join(sorted(VIEWS))}")
        return VIEWS[name](self._lab, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        from .ui import VIEWS

        if name.startswith("_") or name not in VIEWS:
            raise AttributeError(f"no view named {name!r}; there are {', '.join(sorted(VIEWS))}")
        return partial(self, name)

    def __dir__(self) -> list[str]:
        from .ui import VIEWS

        return sorted(set(super().__dir__()) | set(VIEWS))

    def __repr__(self) -> str:
        from .ui import VIEWS

        return f"<Views: {', '.join(sorted(VIEWS))}>"
