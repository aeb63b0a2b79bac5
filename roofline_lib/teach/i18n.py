"""The Chinese edition, built from the English masters and one translation catalogue per chapter.

    python -m roofline_lib.teach.i18n build            # notebooks/zh/NN_topic.ipynb and zh/student/..._student.ipynb
    python -m roofline_lib.teach.i18n build --check    # exit 1 if a committed Chinese edition differs from a rebuild
    python -m roofline_lib.teach.i18n status           # per chapter: cells missing, stale (English changed), unknown
    python -m roofline_lib.teach.i18n skeleton 03      # a catalogue to translate: hashes and the English text

A catalogue, ``notebooks/zh/i18n/NN_topic.toml``, holds one table per markdown cell of the master, keyed by the
cell's nbformat id: ``en_sha256``, the SHA-256 of the English source it translates, and ``zh``, the Chinese
(a TOML multi-line literal string, so LaTeX stays as written). When a master's cell changes, its hash no longer
matches and ``status`` names the cell as stale; a chapter is built only while none of its cells is missing or
stale, so a Chinese edition never shows a translation of text the master no longer has.

The Chinese lecture edition is the master with each markdown cell's Chinese, the code and outputs as the master's
(a self-check's stored line re-said in Chinese, as ``rl.set_language("zh")`` says it), and one code cell of its
own before the first code cell that sets the language. The exercise edition is made from it as the English one is
made from the master (``student.student_version``), with a Chinese note and the Chinese instructions rewritten.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tomllib
from pathlib import Path

import nbformat

from ..exercises.core import get_question, questions
from ..exercises.messages import english_sha, stale_chinese
from ..exercises.stored import in_chinese
from . import student

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE_CELL_ID = "zh-language"
LANGUAGE_LINE = 'rl.set_language("zh")'
LANGUAGE_CELL = f"import roofline_lib as rl\n\n{LANGUAGE_LINE}  # 自测的反馈与提示都用中文"
NOTE_ZH = ("**练习版。** 参考答案已经去掉，输出也已清空：从头运行本章（*Run → Run All Cells*），图和表就会回来。"
           "在每个练习单元格里，把 `...` 换成你的答案并运行：下面的自测会告诉你答案对不对；不对时，还会指出可能的失误。"
           "讲义版 `notebooks/zh/{master}` 给出了参考答案：先自己做，再去对照。")
# the Chinese catalogues' instructions that name what only the lecture edition has, and what the exercise edition
# says instead (as student.STUDENT_WORDING does for the English)
ZH_STUDENT_WORDING = [
    (r"每道练习单元格中 `# BEGIN SOLUTION` 与 `# END SOLUTION` 之间的几行是参考答案。"
     r"想先自己试一试，请在本章的练习版（`notebooks/zh/student/`）中作答，那里已经去掉了这几行。",
     "参考答案已经去掉：原先答案所在的地方，单元格里有一行 `answer = ...  # your answer here`。"
     "把 `...` 换成你自己的答案，再运行该单元格。"),
    # "...（从 `answer = ...` 写起，用库函数或手算都可以），": what follows the start stays
    (r"把 `# BEGIN SOLUTION` 与 `# END SOLUTION` 之间的几行换成你自己的解答"
     r"（从 `answer = \.\.\.` (?:开始|写起)，(?P<extra>[^）]*)），",
     r"把以 `# your answer here` 结尾的每一行中的 `...` 换成你自己的解答（\g<extra>），"),
    (r"把 `# BEGIN SOLUTION` 与 `# END SOLUTION` 之间的几行换成你自己的解答（从 `answer = \.\.\.` (?:开始|写起)），",
     "把以 `# your answer here` 结尾的每一行中的 `...` 换成你自己的解答，"),
    (r"每个单元格的参考答案位于 `# BEGIN SOLUTION` 与 `# END SOLUTION` 之间；请先自己算一算。",
     "在每个练习单元格里，把以 `# your answer here` 结尾的那一行中的 `...` 换成你的答案，再运行该单元格。"),
]
ZH_MASTER_ONLY = re.compile(r"BEGIN SOLUTION|END SOLUTION|参考答案位于|参考答案。")


def sha256(source):
    """The hash a catalogue keeps of an English cell: SHA-256 of its source as nbformat reads it, in hex."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def catalogue_dir(root=ROOT):
    """Where the catalogues live: notebooks/zh/i18n/."""
    return Path(root) / "notebooks" / "zh" / "i18n"


def read_catalogue(path):
    """A catalogue as {"master": path, "cells": {cell id: {"en_sha256": ..., "zh": ...}}}; a ValueError naming
    the file and what is wrong with it otherwise."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML ({e})") from e
    if not isinstance(data.get("master"), str) or not isinstance(data.get("cells", {}), dict):
        raise ValueError(f"{path}: needs master = \"notebooks/NN_topic.ipynb\" and a [cells.\"<id>\"] table per cell")
    for cell_id, entry in data.get("cells", {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("en_sha256"), str) \
                or not isinstance(entry.get("zh", ""), str):
            raise ValueError(f"{path}: cell {cell_id!r} needs en_sha256 (a hex string) and zh (a string)")
    data.setdefault("cells", {})
    return data


def _literal(text):
    text = text.strip("\n")  # TOML drops the newline after the opening quotes; the one before the closing is ours
    if "'''" in text:
        raise ValueError(f"a catalogue text cannot hold three single quotes in a row: {text[:60]!r}")
    return f"'''\n{text}\n'''"


def catalogue_text(master, cells):
    """A catalogue's file contents: ``cells`` maps a cell id to its en_sha256, zh and (optional) en."""
    lines = [f'master = "{master}"']
    for cell_id, entry in cells.items():
        lines += ["", f'[cells."{cell_id}"]', f'en_sha256 = "{entry["en_sha256"]}"']
        if entry.get("en"):
            lines.append(f"en = {_literal(entry['en'])}")
        lines.append(f"zh = {_literal(entry.get('zh', ''))}")
    return "\n".join(lines) + "\n"


def chinese(entry):
    """The Chinese markdown of a catalogue entry, without the newlines around it."""
    return entry.get("zh", "").strip("\n")


def _master(root, data):
    return nbformat.read(Path(root) / data["master"], as_version=4)


def cell_status(master, data):
    """{"missing": [...], "stale": [...], "unknown": [...]}: the master's markdown cells not translated, those
    whose English changed since, and catalogue entries for cells the master no longer has."""
    cells = data["cells"]
    markdown = {c.id: c.source for c in master.cells if c.cell_type == "markdown"}
    return {"missing": [i for i in markdown if i not in cells or not chinese(cells[i])],
            "stale": [i for i in markdown if i in cells and chinese(cells[i]) and
                      cells[i]["en_sha256"] != sha256(markdown[i])],
            "unknown": [i for i in cells if i not in markdown]}


def catalogues(root=ROOT):
    """Every catalogue path, in chapter order."""
    return sorted(catalogue_dir(root).glob(student.MASTER_GLOB.replace(".ipynb", ".toml")))


def lecture_edition(master, data, name="notebook"):
    """The Chinese lecture edition of ``master``: Chinese markdown, code and outputs as the master's."""
    nb = nbformat.from_dict(master)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = chinese(data["cells"][cell.id])
        elif cell.cell_type == "code":
            for output in cell.outputs:
                _outputs_in_chinese(output, f"{name}, cell {index + 1}")
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first_code, nbformat.v4.new_code_cell(LANGUAGE_CELL, id=LANGUAGE_CELL_ID))
    return nb


def _say_lines(text, where):
    try:
        return "\n".join(in_chinese(line) for line in text.split("\n"))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _outputs_in_chinese(output, where):
    if "text" in output:
        output["text"] = _say_lines(output["text"], where)
    data = output.get("data", {})
    if "text/plain" in data:
        data["text/plain"] = _say_lines(data["text/plain"], where)
    if "text/html" in data:  # a Feedback's html: one message inside a styled div
        data["text/html"] = re.sub(r"(?<=>)([^<>]+)(?=</div>)", lambda m: _say_lines(m.group(1), where),
                                   data["text/html"])


def student_markdown_zh(source, where="cell"):
    """A Chinese markdown cell with the instructions that name the solution markers rewritten for the learner."""
    for pattern, text in ZH_STUDENT_WORDING:
        source = re.sub(pattern, lambda m, text=text: m.expand(text) if "\\g<" in text else text, source)
    left = ZH_MASTER_ONLY.search(source)
    if left:
        raise student.SolutionMarkupError(f"{where}: tells the learner about {left.group(0)!r}, which the exercise "
                                          "edition does not have; reword it or add its rewrite to "
                                          "roofline_lib.teach.i18n.ZH_STUDENT_WORDING")
    return student.student_markdown(source, where)


def editions(root, path):
    """(lecture text, exercise text, problems) of the catalogue at ``path``; texts are None where it is not
    complete (problems say which cells)."""
    data = read_catalogue(path)
    master = _master(root, data)
    state = cell_status(master, data)
    problems = [f"{Path(path).name}: {len(ids)} {kind} cell{'s' if len(ids) != 1 else ''} ({', '.join(ids[:5])}"
                f"{' ...' if len(ids) > 5 else ''})" for kind, ids in state.items() if ids]
    if state["missing"] or state["stale"]:
        return None, None, problems
    name = Path(data["master"]).name
    lecture = lecture_edition(master, data, name)
    exercise = student.student_version(lecture, name, note=NOTE_ZH, markdown=student_markdown_zh)
    return nbformat.writes(lecture) + "\n", nbformat.writes(exercise) + "\n", problems


def edition_paths(root, path):
    """Where the Chinese lecture and exercise editions of the catalogue at ``path`` go."""
    name = f"{Path(path).stem}.ipynb"
    zh = Path(root) / "notebooks" / "zh"
    return zh / name, zh / "student" / student.student_name(name)


def build(root=ROOT, check=False, out=print):
    """Write (or with ``check``, only compare) the Chinese editions of every complete catalogue; the problems."""
    problems = []
    for path in catalogues(root):
        lecture, exercise, notes = editions(root, path)
        targets = edition_paths(root, path)
        if lecture is None:
            out(f"skipped {path.name}: {'; '.join(notes)}")
            problems += [f"{t}: its catalogue is not complete" for t in targets if check and t.exists()]
            continue
        for target, text in zip(targets, (lecture, exercise), strict=True):
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current == text:
                continue
            if check:
                problems.append(f"{target}: {'missing' if current is None else 'out of date'}; run "
                                "`python -m roofline_lib.teach.i18n build`")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                out(f"wrote {target.relative_to(root)}")
    return problems


def skeleton(root, chapter):
    """Write notebooks/zh/i18n/NN_topic.toml for chapter ``chapter``: each markdown cell's hash and English (``en``)
    with an empty ``zh``; entries already there are kept as they are. Returns the path."""
    found = sorted((Path(root) / "notebooks").glob(f"{int(chapter):02d}_*.ipynb"))
    if not found:
        raise ValueError(f"no notebooks/{int(chapter):02d}_*.ipynb: chapter {chapter!r} has no master")
    master_path = found[0]
    target = catalogue_dir(root) / f"{master_path.stem}.toml"
    old = read_catalogue(target)["cells"] if target.exists() else {}
    master = nbformat.read(master_path, as_version=4)
    fresh = {c.id: {"en_sha256": sha256(c.source), "en": c.source, "zh": ""}
             for c in master.cells if c.cell_type == "markdown"}
    # a translated entry is kept as it is (a stale one stays stale until translated again); an empty one is renewed
    cells = {i: old[i] if chinese(old.get(i, {})) else entry for i, entry in fresh.items()}
    cells.update({i: e for i, e in old.items() if i not in cells})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(catalogue_text(master_path.relative_to(root).as_posix(), cells), encoding="utf-8")
    return target


def status(root=ROOT, out=print):
    """Print each catalogue's state (and each master without one); the number of chapters not complete."""
    have = {p.stem for p in catalogues(root)}
    incomplete = 0
    for path in catalogues(root):
        data = read_catalogue(path)
        master = _master(root, data)
        state = cell_status(master, data)
        total = sum(c.cell_type == "markdown" for c in master.cells)
        incomplete += bool(state["missing"] or state["stale"])
        out(f"{path.stem}: {total - len(state['missing']) - len(state['stale'])}/{total} cells translated and current")
        by_id = {c.id: c for c in master.cells}
        for cell_id in state["stale"]:
            out(f"  stale {cell_id}: the English changed; translate it again, then set en_sha256 = "
                f"\"{sha256(by_id[cell_id].source)}\"")
        for kind in ("missing", "unknown"):
            for cell_id in state[kind]:
                out(f"  {kind} {cell_id}")
        hints = stale_chinese(questions(f"{path.stem[:2]}."))
        incomplete += bool(hints)
        for qid in hints:
            out(f"  hints {qid}: no Chinese hints in roofline_lib/exercises/zh/ch{path.stem[:2]}.py, or their English "
                f"changed since (translate them again and set EN_SHA256[{qid!r}] = "
                f"\"{english_sha(get_question(qid))}\")")
    for master in student.masters(Path(root) / "notebooks"):
        if master.stem not in have:
            out(f"{master.stem}: no catalogue (python -m roofline_lib.teach.i18n skeleton {master.stem[:2]})")
    return incomplete


def main(argv=None):
    """``python -m roofline_lib.teach.i18n build|status|skeleton NN``."""
    parser = argparse.ArgumentParser(prog="python -m roofline_lib.teach.i18n", description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(ROOT), help="the course's folder (the one with notebooks/)")
    commands = parser.add_subparsers(dest="command", required=True)
    built = commands.add_parser("build", help="build the Chinese editions of every complete catalogue")
    built.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed edition differs")
    commands.add_parser("status", help="list missing, stale and unknown cells of every catalogue")
    skeleton_parser = commands.add_parser("skeleton", help="write a catalogue to translate for chapter NN")
    skeleton_parser.add_argument("chapter", help="the chapter's number, such as 03")
    args = parser.parse_args(argv)
    if args.command == "status":
        return 1 if status(args.root) else 0
    if args.command == "skeleton":
        print(f"wrote {skeleton(args.root, args.chapter)}")
        return 0
    problems = build(args.root, check=args.check)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "build", "catalogue_dir", "catalogue_text", "catalogues", "cell_status", "chinese", "edition_paths", "editions",
    "LANGUAGE_CELL", "LANGUAGE_CELL_ID", "LANGUAGE_LINE", "lecture_edition", "main", "NOTE_ZH", "read_catalogue",
    "sha256", "skeleton", "status", "student_markdown_zh", "ZH_MASTER_ONLY", "ZH_STUDENT_WORDING",
]
