"""The checking machinery: questions, diagnosis of wrong answers, feedback."""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
import pkgutil
from collections.abc import Callable

import numpy as np

from .messages import hints_of, say, why_of

# Other words readers use for the bounds; "compute-bound" and "compute bound" need no entry,
# since a trailing "bound" is dropped before the choices are compared.
BOUND_ALIASES = {"math": "compute", "flops": "compute", "bandwidth": "memory", "memory bandwidth": "memory",
                 "comms": "communication", "network": "communication", "launch": "overhead"}


# how a count is rounded: "" (not a count), up (the smallest that reaches a target), down (the largest that fits)
ROUNDINGS = {"": "", "up": "the smallest that reaches it", "down": "the largest that fits"}


@dataclasses.dataclass(frozen=True)
class Question:
    """One self-checked question.

    ``expected`` is a function of the context (keyword arguments given to
    ``check``; most questions need none) that computes the right answer with
    the library. ``kind`` is "number" (compared within ``rtol``) or "choice"
    (one of ``choices``, case-insensitive; ``aliases`` maps other spellings;
    ``why`` maps a wrong choice to the feedback that explains it). ``hints``
    are progressive (a nudge first, then the method) for ``hint()``; the first is also
    what a wrong answer's feedback suggests. ``rounding`` marks a count (a batch, a tile, a
    number of elements): "up" for "the smallest ... that", "down" for "the largest ... that
    fits"; a count's answer must be a whole number, then is compared like any other.
    """

    id: str
    prompt: str
    expected: Callable
    kind: str = "number"
    rtol: float = 0.02
    unit: str = ""
    choices: tuple = ()
    aliases: dict = dataclasses.field(default_factory=lambda: dict(BOUND_ALIASES))
    why: dict = dataclasses.field(default_factory=dict)
    hints: tuple = ()
    rounding: str = ""

    def __post_init__(self):
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"question {self.id!r}: rounding must be one of {', '.join(map(repr, ROUNDINGS))} "
                             f"(a count rounded up or down, or '' for none), got {self.rounding!r}")
        # keep only the spellings that lead to one of this question's choices: the default bound words
        # would otherwise turn a choice such as "bandwidth" into "memory", which is not one
        if self.kind == "choice":
            object.__setattr__(self, "aliases", {k: v for k, v in self.aliases.items() if v in self.choices})


@dataclasses.dataclass(frozen=True)
class Feedback:
    """What ``check`` says about one answer: whether it is right, and the line shown (its repr, so a cell that ends with
    ``check(...)`` prints it). True when correct; ``answered`` is False while the answer is still ``...``."""

    question_id: str
    correct: bool
    message: str
    answered: bool = True

    def __bool__(self):
        return self.correct

    def __repr__(self):
        return self.message

    def _repr_html_(self):
        colour = "#1a7f37" if self.correct else ("#9a6700" if not self.answered else "#cf222e")
        return f'<div style="color:{colour};font-weight:600">{self.message}</div>'


_REGISTRY: dict = {}


def _load_all():
    if _REGISTRY:
        return _REGISTRY
    package = importlib.import_module(__package__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("ch"):
            module = importlib.import_module(f"{__package__}.{info.name}")
            for q in module.QUESTIONS:
                if q.id in _REGISTRY:
                    raise ValueError(f"question id {q.id!r} is defined twice")
                _REGISTRY[q.id] = q
    return _REGISTRY


def questions(prefix=""):
    """The questions whose id starts with ``prefix`` ("01." for chapter 1)."""
    return [q for qid, q in _load_all().items() if qid.startswith(prefix)]


def get_question(question_id):
    """The ``Question`` with this id ("05.decode_time_7b"); a ValueError naming close ids otherwise.

    Taught in chapter 00 (notebooks/00_start_here.ipynb)."""
    registry = _load_all()
    if question_id not in registry:
        import difflib

        close = difflib.get_close_matches(str(question_id), list(registry), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown question id {question_id!r}.{hint}")
    return registry[question_id]


class Hint(str):
    """A hint: a string that shows as plain text (no quotes) in a notebook."""

    def __repr__(self):
        return str(self)


_HINTS_GIVEN: dict = {}


def hint(question_id, level=None):
    """The next hint for ``question_id``: a nudge first, then the method (then the method again).

    ``level`` (1, 2, ...) asks for one hint by number instead of the next one.

    Taught in chapter 00 (notebooks/00_start_here.ipynb).
    """
    q = get_question(question_id)
    steps = hints_of(q)
    if not steps:
        return Hint(say("no_hint", qid=q.id))
    if level is None:
        level = min(_HINTS_GIVEN.get(q.id, 0) + 1, len(steps))
    elif isinstance(level, bool) or not isinstance(level, numbers.Integral) or not 1 <= level <= len(steps):
        raise ValueError(f"hint level for {q.id!r} must be an integer from 1 to {len(steps)}, got {level!r}")
    _HINTS_GIVEN[q.id] = max(_HINTS_GIVEN.get(q.id, 0), int(level))
    return Hint(say("hint", qid=q.id, level=level, n=len(steps), text=steps[level - 1]))


def check(question_id, answer, **context):
    """Compare ``answer`` with the library's value for ``question_id``; return Feedback.

    Taught in chapter 00 (notebooks/00_start_here.ipynb); also used in chapters 01, 02, 03, 04, 05, 06, 07, 08, 09,
    10, 11, 12, 13, 14, 15."""
    q = get_question(question_id)
    unanswered = answer is ... or answer is None
    return judge(q, answer, None if unanswered else q.expected(**context))


def judge(q, answer, expected):
    """Feedback on ``answer`` to question ``q`` whose right answer is ``expected``.

    ``check`` computes ``expected`` with the library each time; the grader
    computes it once, before any submission runs, and judges with this.
    """
    if answer is ... or answer is None:
        return Feedback(q.id, False, say("unanswered", qid=q.id, unit=_unit_note(q)), answered=False)
    if q.kind == "choice":
        return _check_choice(q, answer, expected)
    return _check_number(q, answer, expected)


def _normalise_choice(q, answer):
    given = " ".join(answer.strip().lower().replace("-", " ").split())
    choices = {c.lower(): c for c in q.choices}  # a choice may be written with capitals ("the FLOPs per token")
    for text in (given, given.removesuffix(" bound")):
        for key in (text, text.replace(" ", "-")):
            key = key if key in choices else q.aliases.get(key, key)  # a choice is never re-spelled
            if key in choices:
                return choices[key]
            if key in q.choices:
                return key
    return given


def _a(noun):
    """'a str', 'an int': the article a type's name takes."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _unit_note(q):
    return say("unit", unit=q.unit) if q.unit else ""


def _then_hint(q):
    """" Hint: <the first hint>", or nothing where the question has none."""
    hints = hints_of(q)
    return say("then_hint", hint=hints[0]) if hints else ""


def _check_choice(q, answer, expected):
    choices = ", ".join(map(repr, q.choices))
    if not isinstance(answer, str):
        kind = type(answer).__name__
        return Feedback(q.id, False, say("choice_type", qid=q.id, choices=choices, a_type=_a(kind), type=kind,
                                         answer=repr(answer)))
    given = _normalise_choice(q, answer)
    if given not in q.choices:
        return Feedback(q.id, False, say("not_a_choice", qid=q.id, answer=repr(answer), choices=choices))
    if given == expected:
        return Feedback(q.id, True, say("choice_correct", qid=q.id, expected=expected))
    if given in q.why:
        return Feedback(q.id, False, say("choice_why", qid=q.id, given=repr(given), why=why_of(q, given)))
    return Feedback(q.id, False, say("choice_wrong", qid=q.id, given=repr(given)) + _then_hint(q))


def _as_real(answer):
    if isinstance(answer, bool):
        return None
    if isinstance(answer, numbers.Real):
        return float(answer)
    if (isinstance(answer, np.ndarray) and answer.size == 1 and np.issubdtype(answer.dtype, np.number)
            and not np.iscomplexobj(answer)):
        return float(answer.item())
    if hasattr(answer, "is_number") and getattr(answer, "is_number", False):  # a sympy number
        try:
            return float(answer)
        except TypeError:
            return None
    return None


def diagnose_ratio(ratio, rtol):
    """Name the likely slip behind answer/expected = ratio, or None if it is not a known one."""
    exponent = round(math.log10(ratio))
    if exponent != 0 and abs(ratio / 10.0**exponent - 1) <= rtol:
        return say("power_of_ten", exponent=exponent)
    for factor, text in ((2, "twice"), (0.5, "half")):
        if abs(ratio / factor - 1) <= rtol:
            return say("twice", times=text)
    return _binary_prefix_slip(ratio, rtol)


def _binary_prefix_slip(ratio, rtol):
    """A GiB/GB (KiB/kB, MiB/MB, TiB/TB) mix-up, possibly beside a power of 1000, or None."""
    for prefix, power in (("Gi", 3), ("Mi", 2), ("Ti", 4), ("Ki", 1)):
        binary = 1024**power / 1000**power  # 1 GiB / 1 GB = 1.0737...
        if binary - 1 <= rtol:
            continue  # inside the tolerance: not a slip the checker can tell apart
        for scale in range(-12, 13, 3):
            for factor, way in ((binary, "larger"), (1 / binary, "smaller")):
                if abs(ratio / (factor * 10.0**scale) - 1) <= rtol:
                    extra = say("and_off", scale=scale) if scale else ""
                    return say("binary_prefix", binary=f"{binary:.4f}", way=way, extra=extra, prefix=prefix,
                               unit=prefix[0] + "B", bits=10 * power, digits=3 * power)
    return None


def _check_number(q, answer, expected):
    value = _as_real(answer)
    unit = f" {q.unit}" if q.unit else ""
    if value is None:
        kind = type(answer).__name__
        return Feedback(q.id, False, say("number_type", qid=q.id, unit=_unit_note(q), a_type=_a(kind), type=kind,
                                         answer=repr(answer)))
    if not math.isfinite(value):
        return Feedback(q.id, False, say("not_finite", qid=q.id, value=value))
    if q.rounding and not value.is_integer():
        return Feedback(q.id, False, say("not_whole", qid=q.id, value=f"{value:.6g}", unit=unit,
                                         items=q.unit or "items", rounding=q.rounding, how=ROUNDINGS[q.rounding]))
    expected = float(expected)
    if value == expected or (expected != 0 and abs(value / expected - 1) <= q.rtol):
        return Feedback(q.id, True, say("correct", qid=q.id, value=f"{value:.4g}", unit=unit))
    if expected != 0 and value != 0 and (value < 0) != (expected < 0):
        return Feedback(q.id, False, say("wrong_sign", qid=q.id, value=f"{value:.4g}", unit=unit,
                                         sign="positive" if expected > 0 else "negative"))
    if value == 0 or expected == 0:
        return Feedback(q.id, False, say("not_right", qid=q.id, value=f"{value:.4g}", unit=unit) + _then_hint(q))
    ratio = value / expected
    slip = diagnose_ratio(ratio, q.rtol)
    if slip:
        return Feedback(q.id, False, say("slip", qid=q.id, value=f"{value:.4g}", unit=unit, slip=slip))
    return Feedback(q.id, False, say("off", qid=q.id, value=f"{value:.4g}", unit=unit,
                                     direction="too high" if ratio > 1 else "too low",
                                     factor=f"{max(ratio, 1 / ratio):.3g}", rtol=f"{q.rtol:.0%}") + _then_hint(q))


__all__ = [
    "BOUND_ALIASES", "check", "diagnose_ratio", "Feedback", "get_question", "Hint", "hint", "judge", "Question",
    "questions", "ROUNDINGS",
]
