"""`Lab`'s methods of release 0.1 that moved to a table's handle (`lab.tables[name]`), its `.inspect`, or a
namespace (`lab.autoanalyze`, `lab.views`, `lab.metastore`). Each still works for one release, and the first
call of each in a process warns with the new spelling (a DeprecationWarning). Delete this module then."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any


class LabDeprecationWarning(DeprecationWarning):
    """A forwarder of `Lab` called: the message names the new spelling. The test suite makes it an error."""


_warned: set[str] = set()


def _warn_once(old: str, new: str) -> None:
    if old in _warned:
        return
    warnings.warn(f"lab.{old} is deprecated and goes in the next release: use {new}", LabDeprecationWarning,
                  stacklevel=3)
    _warned.add(old)  # after the warning: where warnings are errors, every call raises


def renamed_argument(where: str, old: str, new: str, value: Any) -> Any:
    """`value` given under an argument's 0.1 name: warns once (naming `where` it was given) and returns it."""
    key = f"{where}({old}=)"
    if key not in _warned:
        warnings.warn(f"{where}({old}=...) is deprecated and goes in the next release: use {new}=",
                      LabDeprecationWarning, stacklevel=3)
        _warned.add(key)
    return value


def _table_of(args: tuple, kwargs: dict, keyword: str) -> tuple[Any, tuple]:
    if args:
        return args[0], args[1:]
    if keyword in kwargs:
        return kwargs.pop(keyword), ()
    raise TypeError(f"missing the table's name (argument {keyword!r})")


def _attribute(start: Any, path: str) -> Any:
    for name in path.split("."):
        start = getattr(start, name)
    return start


def _on_handle(old: str, new: str, path: str, keyword: str = "name") -> Callable[..., Any]:
    """A method `lab.old(table, *args)` forwarding to `lab.tables[table].<path>(*args)`."""
    def forwarder(self, *args, **kwargs):
        _warn_once(old, new)
        table, rest = _table_of(args, kwargs, keyword)
        return _attribute(self.tables[table], path)(*rest, **kwargs)

    forwarder.__name__ = forwarder.__qualname__ = old
    forwarder.__doc__ = f"Deprecated: use {new}."
    return forwarder


def _on_lab(old: str, new: str, call: Callable[..., Any] | str) -> Callable[..., Any]:
    """A method `lab.old(*args)` forwarding to `lab.<call>(*args)`, or to `call(lab, *args)`."""
    def forwarder(self, *args, **kwargs):
        _warn_once(old, new)
        if isinstance(call, str):
            return _attribute(self, call)(*args, **kwargs)
        return call(self, *args, **kwargs)

    forwarder.__name__ = forwarder.__qualname__ = old
    forwarder.__doc__ = f"Deprecated: use {new}."
    return forwarder


def moved_to_handle(old: str, new: str) -> Callable[..., Any]:
    """A method `lab.tables[name].inspect.old(*args)` of release 0.2 forwarding to the handle's `new`: the
    object accessors (a ValidWriteIdList, a Thrift Partition, files, a level of the view) left `.inspect`, whose
    every method now returns a DataFrame. Hidden from `dir(inspect)`."""
    def forwarder(self, *args, **kwargs):
        _warn_once(f"tables[name].inspect.{old}()", f"lab.tables[name].{new}()")
        return getattr(self._lab.tables[self._name], new)(*args, **kwargs)

    forwarder.__name__ = forwarder.__qualname__ = old
    forwarder.__doc__ = f"Deprecated: use lab.tables[name].{new}()."
    forwarder.deprecated = True  # type: ignore[attr-defined]
    return forwarder


def _report(lab: Any, name: str, path: str | None = None) -> Any:
    return lab.tables[name].report(path) if path is not None else lab.tables[name].report_data()


def _find_partitions(lab: Any, name: str, text: str = "", limit: int = 50) -> tuple[list[str], int]:
    from .frames import names_and_total

    return names_and_total(lab.tables[name].inspect.partitions(text, limit))


def _property(old: str, new: str, get: Callable[[Any], Any]) -> property:
    def getter(self):
        _warn_once(old, new)
        return get(self)

    return property(getter, doc=f"Deprecated: use {new}.")


def _join_skew(self, left, left_key, right, right_key, where=None, how="inner", run=False):
    return self.tables[left].join_skew(right, left_key, right_key, where=where, how=how, run=run)


class DeprecatedLabMethods:
    """The forwarders `Lab` keeps for one release."""

    tables: Any
    autoanalyze: Any
    views: Any
    metastore: Any

    write = _on_handle("write", "lab.tables[name].write(data, ...)", "write")
    skew = _on_handle("skew", "lab.tables[name].skew(columns, ...)", "skew", "table")
    join_skew = _on_lab("join_skew", "lab.tables[left].join_skew(right, left_key, right_key, ...)", _join_skew)
    group_skew = _on_handle("group_skew", "lab.tables[name].group_skew(key, ...)", "group_skew", "table")
    analyze_stale = _on_handle("analyze_stale", "lab.tables[name].analyze_stale(...)", "analyze_stale", "table")
    relayout = _on_handle("relayout", "lab.tables[name].relayout(...)", "relayout")
    table = _on_handle("table", "lab.tables[name].to_spark()", "to_spark")
    expect = _on_handle("expect", "lab.tables[name].expect(column, ...)", "expect")
    report = _on_lab("report", "lab.tables[name].report(path) or .report_data()", _report)
    publish = _on_handle("publish", "lab.tables[name].publish()", "publish", "table")
    engines = _on_handle("engines", "lab.tables[name].engines(...)", "engines", "table")
    export_spark_stats = _on_handle("export_spark_stats", "lab.tables[name].export_spark_stats(spark_table)",
                                    "export_spark_stats", "table")

    staleness = _on_handle("staleness", "lab.tables[name].inspect.staleness()", "inspect.staleness", "table")
    partition = _on_handle("partition", "lab.tables[name].partition_record(spec)", "partition_record", "table")
    snapshot_parts = _on_handle("snapshot_parts", "lab.tables[name].files(...)", "files")
    planned_read = _on_handle("planned_read", "lab.tables[name].planned_read(where)", "planned_read")
    metadata = _on_handle("metadata", "lab.tables[name].inspect.metadata(level)", "inspect.metadata")
    metadata_changes = _on_handle("metadata_changes", "lab.tables[name].inspect.metadata_changes()",
                                  "inspect.metadata_changes")
    stats_level = _on_handle("stats_level", "lab.tables[name].stats_level(level)", "stats_level")
    distribution = _on_handle("distribution", "lab.tables[name].distribution(column)", "distribution")
    quartiles = _on_handle("quartiles", "lab.tables[name].inspect.quartiles(column)", "inspect.quartiles")
    history = _on_handle("history", "lab.tables[name].inspect.history(column)", "inspect.history")
    across_partitions = _on_handle("across_partitions", "lab.tables[name].inspect.across_partitions(column)",
                                   "inspect.across_partitions")
    compare = _on_handle("compare", "lab.tables[name].inspect.compare(then, now)", "inspect.compare")
    expectations = _on_handle("expectations", "lab.tables[name].inspect.expectations()", "inspect.expectations")
    find_partitions = _on_lab("find_partitions", "lab.tables[name].inspect.partitions(text, limit)",
                              _find_partitions)
    freshness = _on_handle("freshness", "lab.tables[name].inspect.freshness()", "inspect.freshness")
    freshness_basis = _on_handle("freshness_basis", "lab.tables[name].freshness_basis()", "freshness_basis")
    transactions = _on_handle("transactions", "lab.tables[name].inspect.transactions(limit)", "inspect.transactions")
    information_schema = _on_handle("information_schema", "lab.tables[name].inspect.information_schema(view)",
                                    "inspect.information_schema")
    stats_frame = _on_handle("stats_frame", "lab.tables[name].inspect.stats()", "inspect.stats")
    snapshot = _on_handle("snapshot", "lab.tables[name].valid_write_ids()", "valid_write_ids")

    tables_frame = _on_lab("tables_frame", "lab.tables.overview()", "tables.overview")
    autoanalyze_rounds = _on_lab("autoanalyze_rounds", "lab.autoanalyze.rounds(limit)", "autoanalyze.rounds")
    autoanalyze_queue = _on_lab("autoanalyze_queue", "lab.autoanalyze.queue()", "autoanalyze.queue")
    view = _on_lab("view", "lab.views(name, ...)", "views")
    view_stats = _on_lab("view_stats", "lab.views.stats(table, partition=...)", "views.stats")
    view_pruning = _on_lab("view_pruning", "lab.views.pruning(query)", "views.pruning")
    view_metadata = _on_lab("view_metadata", "lab.views.metadata(table, level=...)", "views.metadata")
    view_skew = _on_lab("view_skew", "lab.views.skew(table, column, ...)", "views.skew")

    metastore_path = _property("metastore_path", "lab.metastore.path", lambda lab: lab.metastore.path)
    metastore_url = _property("metastore_url", "lab.metastore.url", lambda lab: lab.metastore.url)
    metastore_engine = _property("metastore_engine", "lab.metastore.engine", lambda lab: lab.metastore.engine)

    def __dir__(self) -> list[str]:
        """The lab's names without the forwarders: completion in a notebook offers what stays."""
        return sorted(set(super().__dir__()) - DEPRECATED_NAMES)


# the forwarders' names, which `dir(lab)` leaves out (each still works, and warns, for one release)
DEPRECATED_NAMES = frozenset(name for name in vars(DeprecatedLabMethods)
                             if not name.startswith("_") and name not in DeprecatedLabMethods.__annotations__)
