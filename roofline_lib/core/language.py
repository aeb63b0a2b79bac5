"""The language the learner reads: English (the masters') or Chinese.

One setting for the whole kernel: the self-checks' feedback, their hints and the
grader's feedback follow it. The Chinese editions set it in their first code cell:

    >>> import roofline_lib as rl
    >>> rl.set_language("zh")
    >>> rl.get_language()
    'zh'
    >>> rl.set_language("en")
"""

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "中文 (Simplified Chinese)"}
_ALIASES = {"english": "en", "chinese": "zh", "zh-cn": "zh", "zh_cn": "zh", "zh-hans": "zh", "中文": "zh"}
_current = {"language": "en"}


def canonical_language(language):
    """``language`` as one of LANGUAGES' codes ("EN", "zh-CN", "Chinese" are accepted); a ValueError otherwise."""
    if isinstance(language, str):
        key = language.strip().lower()
        key = _ALIASES.get(key, key)
        if key in LANGUAGES:
            return key
    accepted = ", ".join(f"{code!r} ({name})" for code, name in LANGUAGES.items())
    raise ValueError(f"unknown language {language!r}: the course speaks {accepted}")


def set_language(language):
    """Make ``language`` ("en" or "zh") the one the self-checks, their hints and the grader's feedback speak.

    The Chinese editions (notebooks/zh/) call it in a code cell of their own, before their first code cell."""
    _current["language"] = canonical_language(language)


def get_language():
    """The language now set: "en" (the default) or "zh"."""
    return _current["language"]


def pick(en, zh):
    """``en`` or ``zh``, whichever the language now set reads."""
    return zh if _current["language"] == "zh" else en


__all__ = ["canonical_language", "get_language", "LANGUAGES", "pick", "set_language"]
