"""Running the lab's commands: one handler per statement, shared by `Lab.sql` and `Lab`'s methods."""
from .executor import Repair, execute

__all__ = ["Repair", "execute"]
