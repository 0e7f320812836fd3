"""Spark's progress while a magic works: tasks done of the active stages, from the status tracker of a
classic session or the progress Spark Connect streams with each result (PySpark's progress handlers).
In a notebook it is a widget; in a terminal IPython, one line on stderr rewritten in place."""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display


def _in_a_notebook() -> bool:
    """A kernel with a front end that draws widgets (a terminal IPython prints their repr)."""
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class SparkProgress:
    """Shows tasks done of the active stages while the block runs, then removes itself; in `container` (a
    widget box, e.g. a dashboard's, whose callbacks have no cell output to display into) when given."""

    def __init__(self, spark, description: str = "Spark", interval: float = 0.25, notebook: bool | None = None,
                 container: widgets.Box | None = None):
        self._spark = spark
        self._container = container
        self._interval = interval
        self._stop = threading.Event()
        self._notebook = container is not None or (_in_a_notebook() if notebook is None else notebook)
        self.bar = widgets.IntProgress(value=0, min=0, max=1, description=description,
                                       layout=widgets.Layout(width="420px"))
        self.label = widgets.Label("starting")
        self.box = widgets.HBox([self.bar, self.label])
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._connect: Callable | None = None  # the handler registered with a Spark Connect session

    def _tracker(self):
        try:
            return self._spark.sparkContext.statusTracker()
        except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
            return None

    def show(self, stages: list[tuple[int, int, int]]) -> None:
        """(stage id, tasks, tasks done) of the stages running now."""
        if not stages:
            return
        total = sum(tasks for _, tasks, _ in stages)
        done = sum(finished for _, _, finished in stages)
        self.bar.max = max(total, 1)
        self.bar.value = done
        self.label.value = f"stage {', '.join(str(s) for s, _, _ in stages)}: {done}/{total} tasks"
        if not self._notebook:
            sys.stderr.write(f"\r{self.bar.description}: {self.label.value}\033[K")
            sys.stderr.flush()

    def _on_connect_progress(self, stages, inflight_tasks, operation_id, done) -> None:
        # a stage Spark skipped (its shuffle output reused) reports done with none of its tasks run
        self.show([(s.stage_id, s.num_tasks, s.num_tasks if s.done or done else s.num_completed_tasks)
                   for s in stages or []])

    def _poll(self) -> None:
        tracker = self._tracker()
        while not self._stop.wait(self._interval):
            stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            self.show([(s.stageId, s.numTasks, s.numCompletedTasks) for s in stages if s is not None])

    def __enter__(self) -> SparkProgress:
        if self._container is not None:
            self._container.children = [*self._container.children, self.box]
        elif self._notebook:
            display(self.box)
        if self._tracker() is not None:
            self._thread.start()
        elif hasattr(self._spark, "registerProgressHandler"):
            self._connect = self._on_connect_progress
            self._spark.registerProgressHandler(self._connect)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        if self._connect is not None:
            self._spark.removeProgressHandler(self._connect)
        if self._container is not None:
            self._container.children = [c for c in self._container.children if c is not self.box]
        if self._notebook:
            self.box.close()
        elif self.label.value != "starting":
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
