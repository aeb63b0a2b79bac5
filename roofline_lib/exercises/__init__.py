"""Self-checks for the course's exercises.

    >>> import roofline_lib as rl
    >>> rl.exercises.check("00.ridge_h200", 206.1)
    ✅ 00.ridge_h200: correct (206.1 FLOP/byte).
    >>> rl.exercises.check("01.t_math_h100", ...)
    ⏳ 01.t_math_h100: not answered yet — replace `...` with your answer (unit: s).
    >>> rl.exercises.hint("01.t_math_h100")     # stuck? a nudge first, then the method
    01.t_math_h100 hint 1/2: T_math = FLOPs / dense peak FLOP/s

Each question's expected value is computed by the library when checked (never
a literal copied into a notebook), and a wrong answer gets a diagnosis in
plain words: a power of ten (units?), a factor of two (elements vs bytes? one
direction vs both?), a wrong sign or a wrong type. Questions live in one
module per chapter, ``chNN.py`` beside this file.
"""

from .core import Feedback, Question, check, get_question, hint, judge, questions

__all__ = ["Feedback", "Question", "check", "get_question", "hint", "judge", "questions"]
