"""The lab's caches of what it read, bounded together in bytes: one budget for the process (the setting
`colstats.cache.max_bytes`), the least recently used entries of any cache dropped first.

A count of entries bounds nothing: a footer of 20 columns holds about 38 KB in memory (ten times its
serialized size, measured with pyarrow 26), one of 2,000 columns megabytes, so the 8,192 footers kept before
took the lab's process to 1 GiB at 10,000 files. Each cache says what one of its values weighs.
"""
from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # what a notebook can afford beside Spark's driver

_lock = threading.Lock()
_entries: OrderedDict[tuple[str, Hashable], tuple[Any, int]] = OrderedDict()  # least recently used first
_held = 0
_max_bytes = DEFAULT_MAX_BYTES
# a dropped value may stay in memory in a reference cycle (pyarrow's FileMetaData and the schema it hands out refer
# to each other) that only a full collection frees, and Python's full collections grow rarer the more objects a
# process holds: 100,000 footers read through this cache left 1.5 GiB of them at registration. One full collection
# each time a budget's worth has been dropped frees them (about 30 of a few tens of ms each over 100,000 footers)
_dropped_since_collected = 0


class BoundedCache:
    """One named cache within the process's budget; `weigh(value)` is what a value holds, in bytes."""

    def __init__(self, name: str, weigh: Callable[[Any], int]):
        self.name, self.weigh = name, weigh

    def get(self, key: Hashable) -> Any | None:
        with _lock:
            found = _entries.get((self.name, key))
            if found is None:
                return None
            _entries.move_to_end((self.name, key))
            return found[0]

    def put(self, key: Hashable, value: Any) -> None:
        """Keeps `value`, dropping the least recently used entries of every cache past the budget; a value
        heavier than the whole budget is not kept."""
        global _held
        weight = max(1, int(self.weigh(value)))
        with _lock:
            old = _entries.pop((self.name, key), None)
            if old is not None:
                _held -= old[1]
            if weight > _max_bytes:
                return
            _entries[(self.name, key)] = (value, weight)
            _held += weight
            _evict()
            collect = _dropped_since_collected > _max_bytes
        if collect:  # outside the lock: a finalizer the collection runs may use a cache
            _collect_dropped()

    def clear(self) -> None:
        global _held
        with _lock:
            for key in [k for k in _entries if k[0] == self.name]:
                _held -= _entries.pop(key)[1]


def _evict() -> None:
    global _held, _dropped_since_collected
    while _held > _max_bytes and _entries:
        _, (_, weight) = _entries.popitem(last=False)
        _held -= weight
        _dropped_since_collected += weight


def _collect_dropped() -> None:
    global _dropped_since_collected
    with _lock:
        _dropped_since_collected = 0
    gc.collect()


def set_max_bytes(max_bytes: int) -> None:
    """The budget of every cache together, from now on (entries past it are dropped at once)."""
    global _max_bytes
    with _lock:
        _max_bytes = int(max_bytes)
        _evict()


def max_bytes() -> int:
    return _max_bytes


def held_bytes() -> int:
    """What every cache holds now, by their estimates."""
    return _held
