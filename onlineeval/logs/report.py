"""LoadReport: what the loader read, and which rows it excluded and why."""

from __future__ import annotations

from dataclasses import dataclass, field

from onlineeval.logs.schema import TABLES

# reason code -> what it means (the report and the docs print these)
REASONS: dict[str, str] = {
    "null_required": "a required column is null",
    "duplicate_search_id": "its search_id occurs on more than one searches row "
    "(every row of that id is excluded)",
    "rank_below_1": "rank < 1 (ranks are 1-based)",
    "duplicate_rank": "another results row has the same search_id and rank "
    "(every row of that pair is excluded)",
    "search_excluded": "its search_id belongs to an excluded searches row",
    "unknown_search": "its search_id is not in searches",
    "not_on_page": "the clicked rank/doc_id is not among the page's results",
}


#: what an empty results table means (load_logs warns with it)
EMPTY_RESULTS = (
    "the table has no rows: a search without n_results counts 0 results, and every click "
    "needs its rank/doc_id on the page, so clicks are excluded as not_on_page; if the log "
    "has no results table, do not pass one"
)


def _rows(n: int) -> str:
    return f"{n:,} row" + ("" if n == 1 else "s")


@dataclass
class LoadReport:
    """Rows read per table and rows excluded per (table, reason).

    Attributes
    ----------
    source
        Where the log came from (a path or ``"DataFrames"``).
    rows_read
        Rows in each source table before validation (no entry for a table not given).
    excluded
        ``{(table, reason): rows}`` for every reason that excluded at least one row.
        Each excluded row is counted once, under the first reason that applies, in the
        order of :data:`REASONS`.
    provided
        Canonical columns each table provided (after the column mapping).
    empty_columns
        Optional columns present in a table but without a single non-null value; they are
        treated as absent (``Logs.has`` is False), e.g. a ``ts`` column left empty.
    """

    source: str
    rows_read: dict[str, int] = field(default_factory=dict)
    excluded: dict[tuple[str, str], int] = field(default_factory=dict)
    provided: dict[str, tuple[str, ...]] = field(default_factory=dict)
    empty_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def excluded_total(self) -> int:
        """Rows excluded over all tables and reasons."""
        return sum(self.excluded.values())

    def excluded_in(self, table: str) -> int:
        """Rows excluded from ``table``."""
        return sum(n for (t, _), n in self.excluded.items() if t == table)

    def rows_kept(self, table: str) -> int:
        """Rows of ``table`` left after exclusions."""
        return self.rows_read.get(table, 0) - self.excluded_in(table)

    def summary(self) -> str:
        """A short human-readable block (the CLI prints it to stderr)."""
        parts = []
        for t in TABLES:
            if t not in self.rows_read:
                continue
            n = self.rows_read[t]
            x = self.excluded_in(t)
            parts.append(f"{t} {_rows(n)}" + (f" ({x:,} excluded)" if x else ""))
        lines = [f"loaded {self.source}: " + ", ".join(parts)]
        for (t, reason), n in self.excluded.items():
            lines.append(f"  {t}: {_rows(n)} excluded ({reason}): {REASONS.get(reason, reason)}")
        if not self.excluded:
            lines.append("  no rows excluded")
        for t, cols in self.empty_columns.items():
            lines.append(f"  {t}: column(s) {', '.join(cols)} hold no value; treated as absent")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
