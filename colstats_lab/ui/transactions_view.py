"""The transactions view: who wrote a table under which write ID, which of those writes readers see now
(its ValidWriteIdList, as Hive prints it) and which statistics each writer left."""
from __future__ import annotations

import ipywidgets as widgets
import pandas as pd

from . import format as fmt
from .widgets import View, html_table, register

SHOWN = 200  # the latest transactions; older ones are in TXNS and TXN_TO_WRITE_ID (jupysql)


@register("transactions")
class TransactionsView(View):
    """A line with the ValidWriteIdList and the open and aborted writes, then the latest transactions."""

    def __init__(self, lab, table: str):
        super().__init__()
        self.lab = lab
        self.table = lab.resolve(table)
        self.handle = lab.tables[self.table.qualified_name]
        self.frame = self.handle.inspect.transactions(SHOWN)
        valid = self.handle.valid_write_ids()
        transactional = self.table.parameters.get("transactional", "false") == "true"
        self.header.value = (
            f'<div class="colstats-header"><b>{fmt.escape(self.table.qualified_name)}</b> · '
            + ("transactional (insert-only)" if transactional else "not transactional: write IDs are not checked")
            + f' · ValidWriteIdList <code>{fmt.escape(str(valid))}</code> · '
            f'{len(valid.open_write_ids)} open, {len(valid.aborted_write_ids)} aborted write(s)'
            + (f" · the latest {SHOWN} shown" if len(self.frame) == SHOWN else "") + "</div>")
        shown = self.frame.assign(
            started=self.frame["started"].map(lambda t: t.strftime("%Y-%m-%d %H:%M:%S UTC")),
            partitions=self.frame["partitions"].map(lambda v: "" if v is None or pd.isna(v) else fmt.count(int(v))),
            valid_for_readers=self.frame["valid_for_readers"].map({True: "yes", False: "no"}),
        ).rename(columns=lambda c: c.replace("_", " "))
        self.table_html = widgets.HTML(
            '<div class="colstats-muted">No transaction has written this table.</div>' if shown.empty
            else html_table(shown, numeric={"txn id", "write id", "partitions"}))
        self.children = [self.header, self.table_html]
