"""Which database a metastore's location names, opened: the one place that knows both kinds."""
from __future__ import annotations

from .database import SQLITE_URL, Database, check_location, is_server_url
from .sqlite import SqliteDatabase


def connect(location: str) -> Database:
    """The metastore's database at `location`: a PostgreSQL URL, a `sqlite:///` URL, or a SQLite file's path."""
    check_location(location)
    if is_server_url(location):
        from .postgres import PostgresDatabase  # psycopg is imported for a server's metastore only

        return PostgresDatabase(location)
    if location.startswith(SQLITE_URL):
        location = location[len(SQLITE_URL):]
    return SqliteDatabase(location)
