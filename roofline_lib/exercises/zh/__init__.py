"""The Chinese of each chapter's hints and explanations: ``chNN.py`` holds ``HINTS`` (question id -> the two
hints, nudge then method) and ``WHY`` (question id -> wrong choice -> why not), beside the English in
``../chNN.py``. ``rl.set_language("zh")`` makes the checks read them."""
