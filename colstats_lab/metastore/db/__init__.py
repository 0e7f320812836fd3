"""The metastore's bottom layer: the database interface (`database`), its two kinds (`sqlite`, `postgres`), the
SQL each speaks (`dialect`), Hive's schema and its migrations (`schema`), and `connect`, which opens the one a
location names. Nothing here knows a repository."""
from .connect import connect
from .database import (
    BUSY_TIMEOUT_MS,
    Database,
    MetastoreWaitWarning,
    Row,
    WouldWait,
    check_location,
    is_server_url,
    redacted,
)
from .schema import migrate

__all__ = ["BUSY_TIMEOUT_MS", "Database", "MetastoreWaitWarning", "Row", "WouldWait", "check_location", "connect",
           "is_server_url", "migrate", "redacted"]
