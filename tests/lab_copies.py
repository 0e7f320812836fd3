"""Labs written once and copied: a dataset a module's tests change, built by Spark once, a fresh copy per
test (a folder copy and two UPDATEs instead of a Spark write and ANALYZE each)."""
from __future__ import annotations

import os
import shutil
import sqlite3


def copy_lab_home(template, home) -> None:
    """A copy of a closed lab's folder at `home`, its metastore's locations pointed into the copy: a
    dataset written once per module, a fresh copy per test that changes it."""
    shutil.copytree(template, home)
    conn = sqlite3.connect(os.path.join(home, "metastore.db"))
    with conn:
        conn.execute("UPDATE SDS SET LOCATION = replace(LOCATION, ?, ?)", (str(template), str(home)))
        conn.execute("UPDATE DBS SET DB_LOCATION_URI = replace(DB_LOCATION_URI, ?, ?)", (str(template), str(home)))
    conn.close()
