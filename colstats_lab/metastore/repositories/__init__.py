"""The metastore's repositories, one per family of Hive's tables, each built with the database, the shared
settings and the sibling repositories it calls (`repository.py`; `store.py` builds them bottom up)."""
