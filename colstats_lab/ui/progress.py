"""A progress bar for Spark work: stages and tasks done, from Spark's status tracker."""
from __future__ import annotations

import threading

import ipywidgets as widgets
from IPython.display import display


class SparkProgress:
    """Shows tasks done of the active stages while the block runs, then removes itself.

    Over Spark Connect there is no status tracker; the bar then just says Spark is working.
    """

    def __init__(self, spark, description: str = "Spark", interval: float = 0.25):
        self._spark = spark
        self._interval = interval
        self._stop = threading.Event()
        self.bar = widgets.IntProgress(value=0, min=0, max=1, description=description,
                                       layout=widgets.Layout(width="420px"))
        self.label = widgets.Label("starting")
        self.box = widgets.HBox([self.bar, self.label])
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _tracker(self):
        try:
            return self._spark.sparkContext.statusTracker()
        except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
            return None

    def _poll(self) -> None:
        tracker = self._tracker()
        while not self._stop.wait(self._interval):
            if tracker is None:
                self.label.value = "running"
                continue
            stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            stages = [s for s in stages if s is not None]
            if not stages:
                continue
            total = sum(s.numTasks for s in stages)
            done = sum(s.numCompletedTasks for s in stages)
            self.bar.max = max(total, 1)
            self.bar.value = done
            self.label.value = f"stage {', '.join(str(s.stageId) for s in stages)}: {done}/{total} tasks"

    def __enter__(self) -> "SparkProgress":
        display(self.box)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.box.close()
