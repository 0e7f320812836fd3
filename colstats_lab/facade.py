"""What the lab's namespaces (`lab.tables` and its handles, `lab.views`, `lab.autoanalyze`) need of the Lab they
hang from: a command's session, this lab's listing, its statements (as text or built) and its views. `Lab` is the one
implementation; the namespaces are typed by this protocol, so they never import `Lab` back."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .commands.session import Session

if TYPE_CHECKING:
    from .result import Result
    from .sql.statements import Statement
    from .storage import Listing
    from .transaction import Transaction


class LabFacade(Session, Protocol):
    listing: Listing  # how this lab's calls list an object store

    def sql(self, query: str = "", txn: Transaction | None = None, as_of: Any = None, *,
            text: str | None = None) -> Result: ...

    def run(self, stmt: Statement, txn: Transaction | None = None) -> Result: ...

    def views(self, name: str, *args: Any, **kwargs: Any) -> Any: ...
