"""The SQL metrics each task of a query's run updated, recorded while it runs (a classic session only).

Spark sums a metric over every task that updated it. A global sort's range exchange first runs the stage
below it once more to sample its keys (and again over the partitions it finds too large), so each operator of
that stage counts its rows twice or more: an aggregate under `ORDER BY` showed 10 rows for a result of 5
(SPARK-37566, still so in Spark 4.3). A listener on Spark's listener bus keeps each successful task's updates
by stage and partition instead; an operator's figure is then one pass's: within a stage each partition once
(its last successful attempt), and of the stages that ran the operator the one with the largest total (a
sampling job reads what the real stage reads, or only some of its partitions). The same records give the
spread of a figure over the tasks of that stage.

The listener is a Python object behind Py4J's callback server, on the bus for the run only. Spark removes a
listener by identity, and Py4J makes a new Java proxy each time a Python object crosses, so it is added and
removed through reflection with one Java array holding the one proxy.
"""
from __future__ import annotations

import re
import threading
from collections import defaultdict
from typing import Any

from pyspark.java_gateway import ensure_callback_server_started

LISTENER_INTERFACE = "org.apache.spark.scheduler.SparkListenerInterface"
# one SQL metric's update in a TaskInfo's accumulables, as Scala prints the case class:
# AccumulableInfo(12,Some(number of output rows),Some(25),Some(50),true,true,Some(sql))
_SQL_UPDATE = re.compile(r"AccumulableInfo\((\d+),(?:Some\((?:[^()]|\([^()]*\))*\)|None),Some\((-?\d+)\),"
                         r"(?:Some\(-?\d+\)|None),(?:true|false),(?:true|false),Some\(sql\)\)")


class RecordedTasks:
    """What the successful tasks of a run added to each SQL metric: metric id -> stage -> partition -> value."""

    def __init__(self) -> None:
        self._values: dict[int, dict[int, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
        self._lock = threading.Lock()

    def add(self, stage: int, partition: int, accumulables: str) -> None:
        with self._lock:
            for metric, value in _SQL_UPDATE.findall(accumulables):
                self._values[int(metric)][stage][partition] = int(value)  # a later attempt replaces an earlier one

    def one_pass(self, metric: int) -> dict[int, int] | None:
        """The value each partition added to `metric` in the stage that ran its operator over every partition
        (the largest total; of equal ones the later stage); None when no task updated it."""
        with self._lock:
            stages = self._values.get(metric)
            if not stages:
                return None
            stage = max(stages, key=lambda s: (sum(stages[s].values()), s))
            return dict(stages[stage])

    def total(self, metric: int) -> int | None:
        """`metric` summed over one pass of its operator; None when no task updated it."""
        values = self.one_pass(metric)
        return None if values is None else sum(values.values())


class _TaskEndListener:
    """A SparkListenerInterface whose only work is onTaskEnd; Py4J calls it on the listener bus's thread."""

    def __init__(self, recorded: RecordedTasks) -> None:
        self.recorded = recorded

    def onTaskEnd(self, event) -> None:  # noqa: N802 - Spark's name
        try:
            info = event.taskInfo()
            if info.successful():
                self.recorded.add(event.stageId(), info.partitionId(), info.accumulables().toString())
        except Exception:  # noqa: BLE001 - a figure missed is read from Spark's own sum, never a failed bus
            pass

    def equals(self, other) -> bool:
        return other is self

    def hashCode(self) -> int:  # noqa: N802 - Java's name
        return id(self) & 0x7FFFFFFF

    def toString(self) -> str:  # noqa: N802 - Java's name
        return "colstats_lab task metrics"

    def __getattr__(self, name: str):
        if name.startswith("on"):  # every other event of the interface: nothing to do
            return _ignore
        raise AttributeError(name)

    class Java:
        implements = [LISTENER_INTERFACE]


def _ignore(*_: Any) -> None:
    return None


class TaskRecorder:
    """A listener on a classic session's bus from `start()` until `stop()`, recording into `recorded`."""

    def __init__(self, spark_context) -> None:
        self.recorded = RecordedTasks()
        self._context = spark_context
        self._arguments = None
        self._methods: tuple[Any, Any] | None = None

    def start(self) -> None:
        gateway = self._context._gateway
        ensure_callback_server_started(gateway)
        jvm = gateway.jvm
        holder = jvm.java.util.ArrayList()
        holder.add(_TaskEndListener(self.recorded))
        self._arguments = holder.toArray()  # the one Java proxy, passed to both calls below
        parameter_types = gateway.new_array(jvm.java.lang.Class, 1)
        parameter_types[0] = jvm.java.lang.Class.forName(LISTENER_INTERFACE)
        context = self._context._jsc.sc()
        kind = context.getClass()
        self._methods = (kind.getMethod("addSparkListener", parameter_types),
                         kind.getMethod("removeSparkListener", parameter_types))
        self._methods[0].invoke(context, self._arguments)

    def stop(self) -> None:
        """Waits until the bus delivered what the run posted, then takes the listener off."""
        if self._methods is None:
            return
        context = self._context._jsc.sc()
        try:
            context.listenerBus().waitUntilEmpty()
        finally:
            self._methods[1].invoke(context, self._arguments)
            self._methods = None
