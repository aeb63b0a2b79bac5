"""How long grading a class takes: 30 submissions of one chapter, two kernels at a time.

    PYTHONPATH=. python benchmarks/bench_grade.py [--master notebooks/NN_topic.ipynb] [--workers 2] [-n 30]
                                                  [--unsandboxed]

Without --master it grades the first chapter in notebooks/, or, if there is
none yet, the test fixture with a chapter's usual load added in front of its
exercises (sympy, matplotlib and a roofline plot). Of the submissions, two
thirds are the master (all right), a quarter have one answer changed and the
rest are the blank student version. Prints the total and per-submission time.
Each submission runs in its sandbox (bubblewrap), as the grader runs them;
--unsandboxed measures the same without one.
"""

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from roofline_lib.teach import grade, student

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "exercise_master.ipynb"
CHAPTER_LOAD = ('import sympy as sp\nimport matplotlib.pyplot as plt\n%matplotlib inline\n'
                'M, N, K = sp.symbols("M N K", positive=True)\n'
                'sp.simplify(2 * M * N * K / (2 * (M * K + K * N + M * N)))\n'
                'fig = rl.plotting.roofline_plot(["H200", "A100"], "bf16")\nplt.close("all")')


def default_master(scratch):
    chapters = student.masters(ROOT / "notebooks")
    if chapters:
        return chapters[0]
    nb = nbformat.read(FIXTURE, as_version=4)
    nb.cells.insert(2, nbformat.v4.new_code_cell(CHAPTER_LOAD))
    path = scratch / "typical_chapter.ipynb"
    nbformat.write(nb, path)
    return path


def one_wrong(nb, k):
    """The master with the answer of its k-th exercise doubled (a wrong number, or a wrong word)."""
    nb = nbformat.from_dict(nb)
    cells = [c for c in nb.cells if c.cell_type == "code" and "# END SOLUTION" in c.source]
    cell = cells[k % len(cells)]
    name = student.assigned_names(student.solution_blocks(cell.source)[-1])[-1]
    cell.source = cell.source.replace("# END SOLUTION\n", f"# END SOLUTION\n{name} = {name} * 2\n")
    return nb


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--master")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-n", type=int, default=30)
    parser.add_argument("--unsandboxed", action="store_true", help="grade without the sandbox (to compare)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        master = Path(args.master) if args.master else default_master(tmp)
        nb = nbformat.read(master, as_version=4)
        folder = tmp / "submissions"
        folder.mkdir()
        for i in range(args.n):
            if i < args.n * 2 // 3:
                data = nbformat.writes(nb)
            elif i < args.n * 11 // 12:
                data = nbformat.writes(one_wrong(nb, i))
            else:
                data = student.student_text(master)
            (folder / f"student{i:02d}.ipynb").write_text(data, encoding="utf-8")
        lines = []

        def show(line):
            lines.append(line)
            print(line, file=sys.stderr, flush=True)

        start = time.monotonic()
        grade.main([str(folder), "--master", str(master), "--out", str(tmp / "grades.csv"),
                    "--workers", str(args.workers), *(["--unsandboxed"] if args.unsandboxed else [])], progress=show)
        total = time.monotonic() - start
        per = [float(m.group(1)) for line in lines if (m := re.search(r"\((\d+\.\d) s\)", line))]
        print(f"chapter: {master.name}; {args.n} submissions, {args.workers} kernels at a time, "
              f"{'without a sandbox' if args.unsandboxed else 'each in its sandbox'}")
        print(f"total {total:.1f} s; {total / args.n:.2f} s per submission in throughput; "
              f"each submission's own run: median {sorted(per)[len(per) // 2]:.1f} s, max {max(per):.1f} s")


if __name__ == "__main__":
    main()
