"""Text shown on a terminal: values from the data with their control characters escaped.

A query, experiment name or file name from a log can hold anything, including terminal
escape sequences (``ESC [ 2 J`` clears the screen, others retitle the window or hide text),
carriage returns that overwrite a line, or Unicode direction overrides that display text
reversed. Printed raw they would let a log rewrite what the user sees; :func:`escape` shows
them as ``\\x1b``, ``\\r``, ``\\u202e``. Only what goes to a terminal is escaped; CSV and JSON
output is data and carries the values unchanged.
"""

from __future__ import annotations

import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Unicode bidirectional embeddings, overrides and isolates, and line/paragraph separators
_FORMAT = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
                    "\u2028\u2029")


def _shown(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str, keep: str = "") -> str:
    """``text`` with every control character (and direction override) written as an escape
    such as ``\\x1b``; characters in ``keep`` (e.g. ``"\\n"``) are left as they are."""
    if text.isprintable() and not _FORMAT.intersection(text):
        return text  # the common case, without a per-character loop
    return "".join(
        _shown(ch) if ch not in keep and (unicodedata.category(ch) == "Cc" or ch in _FORMAT)
        else ch
        for ch in text
    )


def one_line(text: str) -> str:
    """The first line of ``text`` (stripped), escaped for the terminal."""
    stripped = text.strip()
    return escape(stripped.splitlines()[0]) if stripped else ""
