"""A self-check's line stored in an English output, said again in Chinese.

The Chinese editions copy the masters' outputs; a feedback or hint line among them is re-said as
``rl.set_language("zh")`` would have said it (chapter 00's Chinese edition runs for real under nbval and confirms
it), and a line that looks like one but is not known is refused, so no English feedback slips through.
"""

from __future__ import annotations

import re

from ..core.language import get_language, set_language
from .core import get_question
from .messages import LINES, hints_of, say, why_of

# the lines a stored output can hold, and which fields are themselves lines
_STORED = ("unanswered", "correct", "choice_correct", "slip", "hint", "choice_why")
_NESTED = {("unanswered", "unit"): ("unit",), ("slip", "slip"): ("power_of_ten", "twice", "binary_prefix"),
           ("binary_prefix", "extra"): ("and_off",)}


def _pattern(key):
    parts = re.split(r"\{(\w+)\}", LINES[key][0])
    regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*?)" for i, p in enumerate(parts))
    return re.compile(regex + r"\Z", re.S)


def _english_fields(keys, text):
    """(key, fields) of the first of ``keys`` whose English line ``text`` is, nested lines re-said; or None."""
    for key in keys:
        match = _pattern(key).match(text)
        if not match:
            continue
        fields = match.groupdict()
        for name, value in fields.items():
            inner = _NESTED.get((key, name))
            if inner and value:
                said = _english_fields(inner, value)
                if said is None:
                    break
                fields[name] = said
        else:
            return key, fields
    return None


def _chinese_of(question_id, key, fields):
    q = get_question(question_id)
    if key == "hint":
        fields["text"] = hints_of(q)[int(fields["level"]) - 1]
    if key == "choice_why":
        fields["why"] = why_of(q, fields["given"].strip("'\""))


def in_chinese(line):
    """A stored self-check line (feedback or hint) as ``rl.set_language("zh")`` says it; other lines as they are.

    A line that looks like feedback (it starts with ✅, ❌ or ⏳, or names a hint) but is none of the known lines
    raises a ValueError that names it, so a Chinese edition never shows English feedback unnoticed."""
    found = _english_fields(_STORED, line)
    if found is None:
        if line[:1] in "✅❌⏳" and line.strip() or re.match(r"\S+ hint \d+/\d+: ", line):
            raise ValueError(f"a stored self-check line the Chinese edition cannot re-say: {line!r}; add its "
                             "form to roofline_lib.exercises.messages")
        return line
    key, fields = found
    before = get_language()
    set_language("zh")
    try:
        def said(item):
            return say(item[0], **{k: said(v) if isinstance(v, tuple) else v for k, v in item[1].items()})

        _chinese_of(fields["qid"], key, fields)
        return said((key, fields))
    finally:
        set_language(before)


__all__ = ["in_chinese"]
