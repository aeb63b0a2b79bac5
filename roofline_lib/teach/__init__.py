"""The teacher's tools: student versions of the chapters and grading of submissions.

Not imported by ``import roofline_lib``: a learner never needs them.

    student     a chapter master -> its student version (solutions out, outputs stripped)
    grade       the command line: python -m roofline_lib.grade SUBMISSIONS --chapter NN
    collect     the submissions folder: every entry, read safely, named safely
    discovery   a notebook's cells and the check(...) calls in them
    worker      one submission's run, in its own process: parse, kernel, answers
    sandbox     the bubblewrap sandbox a worker runs in, its limits, and its processes as a whole
    kernel      one kernel: start, run a cell, read answers, stop
    run         the grader's side of a worker: start it, follow it, restart it
    score       questions, expected values, a submission's marks
    report      grades.csv, feedback files and progress lines
    text        what any text from a submission goes through before it is shown
"""

__all__ = []  # its modules are imported by name: from roofline_lib.teach import grade
