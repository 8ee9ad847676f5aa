"""One opened log table on its way through the loader: source, column mapping, conversions.

Shared by :mod:`onlineeval.logs.load` (which opens tables and makes their views) and
:mod:`onlineeval.logs.validate` (which checks them), so that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onlineeval.logs import casting
from onlineeval.logs.sources import Source

#: names the loader gives its own views, tables and columns start with this; a source column
#: may not
PREFIX = "_oe_"


@dataclass
class Table:
    """One opened table: its source, mapped columns, conversions and view names."""

    name: str
    source: Source
    columns: dict[str, str]  # canonical or extra output name -> source column
    conversions: dict[str, casting.Conversion] = field(default_factory=dict)
    extras: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # canonical name -> SQL type
    # rows read, and non-null values of each checked optional column (set by validation)
    rows: int = 0
    non_null: dict[str, int] = field(default_factory=dict)
    #: validation is to store the check view's rows in a temporary table (a small text
    #: table or DataFrame: see onlineeval.logs.validate.storable), so no typed view is made
    store_rows: bool = False
    #: validation stored them: the later views read that table instead of the files
    stored: bool = False

    @property
    def raw(self) -> str:
        """The source as DuckDB reads it (source column names and types)."""
        return f"{PREFIX}raw_{self.name}"

    @property
    def check(self) -> str:
        """The typed columns plus, per value-checked column, a flag ``_oe_bad_<col>`` (the
        source value cannot be read as its kind) and the source value ``_oe_src_<col>``."""
        return f"{PREFIX}check_{self.name}"

    @property
    def store(self) -> str:
        """The temporary table validation may store the check view's rows in."""
        return f"{PREFIX}stored_{self.name}"

    @property
    def check_rows(self) -> str:
        """Where the check view's rows are read: the table validation stored them in, or
        the view itself."""
        return self.store if self.stored else self.check

    @property
    def typed_rows(self) -> str:
        """Where the typed columns are read: the stored check rows (a superset of the typed
        view's columns) or the typed view."""
        return self.check_rows if self.stored else self.typed

    @property
    def typed(self) -> str:
        """Canonical names and types (a column the source lacks is NULL)."""
        return f"{PREFIX}typed_{self.name}"

    @property
    def flagged(self) -> str:
        """The check view with ``_oe_null``: the row lacks a required value."""
        return f"{PREFIX}flagged_{self.name}"

    @property
    def classified(self) -> str:
        """Every row with ``_oe_reason``, why it is excluded (NULL: kept)."""
        return f"{PREFIX}classified_{self.name}"

    def has(self, column: str) -> bool:
        return column in self.conversions

    def checked(self) -> list[str]:
        """The canonical columns whose source values are checked (``_oe_bad_<col>``)."""
        return [c for c, conv in self.conversions.items() if conv.checked]
