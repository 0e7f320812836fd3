"""colstats_lab: column statistics, skew and pruning on Spark tables, recorded in a Hive-schema metastore."""
import logging

from .errors import ColstatsError, InvalidArgument, ParseError, QueryError, StorageError
from .lab import Lab
from .metastore import (
    AlreadyExistsException,
    InvalidInputException,
    InvalidObjectException,
    MetaException,
    Metastore,
    NoSuchObjectException,
)
from .result import Result

__all__ = [
    "Lab", "Metastore", "Result", "ColstatsError", "InvalidArgument", "StorageError", "ParseError", "QueryError",
    "NoSuchObjectException", "InvalidInputException",
    "InvalidObjectException", "MetaException", "AlreadyExistsException",
]
__version__ = "0.1.0"

# a library logs under colstats_lab.* and leaves output to the application (logging.basicConfig shows it)
logging.getLogger(__name__).addHandler(logging.NullHandler())


def load_ipython_extension(ipython) -> None:
    """`%load_ext colstats_lab` registers `%%analyze` and `%skew`."""
    from .workbench.magics import load_ipython_extension as load

    load(ipython)
