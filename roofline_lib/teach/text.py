"""Text from a submission, made safe to show: on a terminal, in a CSV, in a file.

A file name, an exception message or an answer's repr is chosen by the student.
Before it reaches the teacher it loses what could act instead of being read:
terminal control codes (ESC, BEL, CR...), bidirectional overrides that reorder
what is shown, lone surrogates that cannot be written as UTF-8, and a leading
character that makes a spreadsheet evaluate the cell as a formula.
"""

import os
import re

# C0 and C1 controls, DEL, direction marks and overrides, lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# OWASP "CSV injection": a cell starting with one of these may be run as a formula
# (full-width forms too: some spreadsheets fold them to ASCII).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _replace(match):
    char = match.group()
    if char in "\n\r\t":
        return " "  # every message is one line
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def clean(text, limit=None):
    """``text`` as one printable line (controls shown as escapes), at most ``limit`` characters."""
    text = _UNSAFE.sub(_replace, str(text))
    if limit is not None and len(text) > limit:
        text = text[:max(0, limit - 3)] + "..."
    return text


def csv_cell(value, lines=False):
    """A CSV cell that no spreadsheet runs: text starting like a formula gets a leading quote.
    With ``lines`` the cell keeps its line breaks (each line cleaned on its own)."""
    if not isinstance(value, str):
        return value
    value = "\n".join(clean(line) for line in value.split("\n")) if lines else clean(value)
    # lstrip: some spreadsheets drop leading blanks before they look for a formula
    return "'" + value if value.lstrip().startswith(FORMULA_STARTS) else value


def file_name(raw):
    """A file name as text: bytes that are not UTF-8 (a GBK zip, say) become U+FFFD, not an error."""
    if isinstance(raw, str):
        raw = os.fsencode(raw)
    return clean(raw.decode("utf-8", "replace"))


__all__ = ["clean", "csv_cell", "file_name", "FORMULA_STARTS"]
