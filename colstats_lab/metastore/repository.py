"""The metastore's repositories: each keeps one family of Hive's tables (the catalog, column statistics, their
accuracy, history, transactions, ...) over the one database object of its `Metastore`, and reaches another
family through the metastore's typed attribute for it (`self.store.catalog`), never through shared state."""
from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

if TYPE_CHECKING:
    from .db import Database
    from .store import Metastore

P = ParamSpec("P")
R = TypeVar("R")


class Repository:
    """A family of the metastore's calls; every call runs in one transaction of the metastore's database, or
    joins the one open."""

    def __init__(self, store: Metastore) -> None:
        self.store = store

    @property
    def db(self) -> Database:
        return self.store.db

    def transaction(self, tables: Collection[tuple[str, str]] = ()) -> AbstractContextManager[Database]:
        return self.store.db.transaction(tables)

    def snapshot(self) -> AbstractContextManager[Database]:
        return self.store.db.snapshot()


class Forwarded(Generic[P, R]):
    """A call of the metastore that one of its repositories answers: `Metastore.get_table` is its catalog's
    `get_table`, with the same signature and documentation (Hive's one client interface over its stores)."""

    def __init__(self, repository: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.repository = repository
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, instance: None, owner: type) -> Forwarded[P, R]: ...

    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, instance: object | None, owner: type) -> Forwarded[P, R] | Callable[P, R]:
        if instance is None:
            return self
        bound: Callable[P, R] = getattr(getattr(instance, self.repository), self.method.__name__)
        return bound


def forward(repository: str, method: Callable[Concatenate[Any, P], R]) -> Forwarded[P, R]:
    return Forwarded(repository, method)
