"""Text from a file or a log as a terminal, a log line or a page may show it, never act on it."""

from __future__ import annotations

__all__ = ["printable"]


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    r"""`text` with every character that is not printable escaped (as `\x1b` or `\u202e`).

    Not printable, as Python's `str.isprintable` says: the C0 and C1 controls (ESC, BEL,
    the CSI U+009B, NEL U+0085, tab and newline), format characters such as the bidi
    overrides (U+202E), the line and paragraph separators (U+2028, U+2029), surrogates and
    unassigned code points. A name shown this way cannot move the cursor, recolour the
    terminal, reverse the text after it or split one line into two; the other non-ASCII
    characters (é, 肝) are kept.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)
