"""The metastore's exceptions, as Hive's Thrift API names them; all are ColstatsErrors."""
from ..errors import ColstatsError


class MetastoreError(ColstatsError):
    """Base of every error the metastore raises."""


class NoSuchObjectException(MetastoreError):
    """A database, table, partition or column that does not exist."""


class AlreadyExistsException(MetastoreError):
    """A database, table or partition that exists already."""


class InvalidObjectException(MetastoreError):
    """An object whose content is not valid for where it is stored."""


class InvalidInputException(MetastoreError):
    """An argument that is malformed: a bad name, filter or statistics object."""


class MetaException(MetastoreError):
    """The metastore cannot do what was asked (a refused state change, a broken file)."""
