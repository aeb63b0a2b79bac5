"""The Chinese edition: catalogues complete and current, numbers and formulas kept, code and outputs the masters',
the committed editions equal to a rebuild, exercise editions as safe as the English ones, Chinese feedback and
hints for every question of a translated chapter, and one glossary the translations follow.

Nothing here starts a kernel: strict nbval on the masters covers the Chinese editions' code and outputs, and
chapter 00's Chinese edition is also run by nbval (conftest.py, ZH_RUN_FOR_REAL).
"""

import re
import shutil
import tomllib
from pathlib import Path

import nbformat
import pytest

import roofline_lib as rl
from roofline_lib import exercises, lab
from roofline_lib.exercises import messages, stored
from roofline_lib.teach import i18n, report, score, student

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = i18n.catalogues(ROOT)
IDS = [p.stem for p in CATALOGUES]
GLOSSARY = tomllib.loads((ROOT / "data" / "glossary.toml").read_text(encoding="utf-8"))["term"]


@pytest.fixture(autouse=True)
def english_after():
    yield
    rl.set_language("en")


def _pairs(path):
    """(cell id, English, Chinese) of each markdown cell of a catalogue's master."""
    data = i18n.read_catalogue(path)
    master = nbformat.read(ROOT / data["master"], as_version=4)
    return [(c.id, c.source, i18n.chinese(data["cells"].get(c.id, {})))
            for c in master.cells if c.cell_type == "markdown"]


# ---------------------------------------------------------------- the language setting and the Chinese lines


def test_an_unknown_language_is_refused_naming_the_two():
    with pytest.raises(ValueError, match=r"unknown language 'fr'.*'en'.*'zh'"):
        rl.set_language("fr")
    rl.set_language("Chinese")
    assert rl.get_language() == "zh"


def test_feedback_and_hints_in_chinese_as_written_by_hand(monkeypatch):
    from roofline_lib.exercises import core

    monkeypatch.setattr(core, "_HINTS_GIVEN", {})  # hints asked here do not count for a later hint() in this process
    rl.set_language("zh")
    assert repr(exercises.check("00.demo_bytes", ...)) == ("⏳ 00.demo_bytes：尚未作答——请把 `...` 换成你的答案"
                                                           "（单位：byte）。")
    assert repr(exercises.check("00.demo_bytes", 2e6)) == "✅ 00.demo_bytes：正确（2e+06 byte）。"
    assert repr(exercises.check("00.demo_bytes", 2)).startswith("❌ 00.demo_bytes：2 byte 差了 10^-6 倍：请检查单位")
    assert "是正确值的一半" in repr(exercises.check("00.demo_bytes", 1e6))
    assert "混淆了 GiB 与 GB" in repr(exercises.check("00.demo_bytes", 2 * 1.073741824e6))  # 2e6 bytes read as GiB
    assert repr(exercises.check("00.bound_h200", "memory")) == ("❌ 00.bound_h200：不是 'memory'。"
                                                               "提示：把它的计算访存比和 H200 的拐点比一比。")
    assert repr(exercises.check("00.units_slip", "sparse")).endswith(
        "989.4 是稠密 bf16 峰值（2:4 稀疏的宣传值是 1979）。")
    assert exercises.hint("01.t_math_h100", 1) == "01.t_math_h100 提示 1/2：T_math = FLOPs / 稠密峰值 FLOP/s"
    rl.set_language("en")
    assert exercises.hint("01.t_math_h100", 1) == "01.t_math_h100 hint 1/2: T_math = FLOPs / dense peak FLOP/s"


def test_every_line_has_its_chinese_with_the_same_fields():
    for key, (en, zh) in messages.LINES.items():
        english = set(re.findall(r"\{(\w+)\}", en))
        chinese = {f.removesuffix("_zh") for f in re.findall(r"\{(\w+)\}", zh)}
        assert chinese <= english | {"type"}, key
        assert zh != en and (re.search(r"[\u4e00-\u9fff]", zh) or "：" in zh), key


def _translated_chapters():
    return sorted({p.stem[:2] for p in CATALOGUES})


@pytest.mark.parametrize("chapter", _translated_chapters())
def test_every_question_of_a_translated_chapter_has_chinese_hints_and_explanations(chapter):
    module = messages._chinese(f"{chapter}.x")
    assert module is not None, f"roofline_lib/exercises/zh/ch{chapter}.py is missing"
    asked = exercises.questions(f"{chapter}.")
    assert set(module.HINTS) == {q.id for q in asked}
    for q in asked:
        hints = module.HINTS[q.id]
        assert len(hints) == len(q.hints) == 2 and all(re.search(r"[\u4e00-\u9fff]", h) for h in hints), q.id
        assert set(module.WHY.get(q.id, {})) == set(q.why), q.id


@pytest.mark.parametrize("chapter", _translated_chapters())
def test_the_chinese_hints_translate_the_english_hints_of_today(chapter):
    assert messages.stale_chinese(exercises.questions(f"{chapter}.")) == []


def test_a_changed_english_hint_makes_its_chinese_stale():
    import dataclasses

    q = exercises.get_question("01.gap_h100")
    changed = dataclasses.replace(q, hints=(q.hints[0], q.hints[1] + " (now with more)"))
    assert messages.stale_chinese([q]) == [] and messages.stale_chinese([changed]) == ["01.gap_h100"]


def test_the_grader_reads_the_chinese_feedback():
    rl.set_language("zh")
    q = exercises.get_question("00.ridge_h200")
    unanswered = exercises.judge(q, ..., None)
    grade = score.Grade("s", {"00.ridge_h200": 0}, {"00.ridge_h200": unanswered.message}, [])
    assert report.feedback_cell(grade, "00.ridge_h200") == "00.ridge_h200：尚未作答"


def test_a_stored_line_the_edition_cannot_say_in_chinese_is_refused():
    assert stored.in_chinese("42 FLOP/byte") == "42 FLOP/byte"
    with pytest.raises(ValueError, match="cannot re-say"):
        stored.in_chinese("✅ 00.demo_bytes: fine.")


# ---------------------------------------------------------------- catalogues


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_every_markdown_cell_is_translated_and_current(path):
    data = i18n.read_catalogue(path)
    assert data["master"] == f"notebooks/{path.stem}.ipynb"
    assert i18n.cell_status(nbformat.read(ROOT / data["master"], as_version=4), data) == {
        "missing": [], "stale": [], "unknown": []}


def _numbers(text):
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def _formulas(text):
    return set(re.findall(r"\$\$.+?\$\$|\$[^$\n]+\$", text, flags=re.S))


def _code_spans(text):
    return set(re.findall(r"`[^`\n]+`", text))


def _links(text):
    return set(re.findall(r"\]\(([^)\s]+)\)", text)) | set(re.findall(r'<a [^>]*(?:id|name|href)="[^"]+"', text))


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_every_number_formula_code_span_and_link_of_the_english_is_in_the_chinese(path):
    for cell_id, en, zh in _pairs(path):
        if not zh:
            continue
        for kind, found in (("number", _numbers), ("formula", _formulas), ("link or anchor", _links)):
            missing = found(en) - found(zh)
            assert not missing, f"{path.name} cell {cell_id}: {kind} {sorted(missing)} not in the Chinese"
        # a path to a notebook names the Chinese edition's own (notebooks/zh/...)
        spans = _code_spans(zh) | {s.replace("notebooks/zh/", "notebooks/") for s in _code_spans(zh)}
        missing = _code_spans(en) - spans
        assert not missing, f"{path.name} cell {cell_id}: code {sorted(missing)} not in the Chinese"


def test_the_number_check_catches_a_dropped_figure():
    assert _numbers("989.4 TFLOP/s over 4.8 TB/s") - _numbers("989.4 TFLOP/s 除以带宽") == {"4.8"}
    assert _formulas("$T_\\text{math}$ and $$x$$") - _formulas("$T_\\text{mem}$ 与 $$x$$") == {"$T_\\text{math}$"}


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_each_english_term_is_translated_as_the_glossary_says(path):
    for cell_id, en, zh in _pairs(path):
        # code and formulas keep their words ("memory-bound" as an answer, \text{bandwidth}) in Chinese too
        en = re.sub(r"`[^`\n]+`|\$\$.+?\$\$|\$[^$\n]+\$", "", en, flags=re.S)
        for term in GLOSSARY:
            if any(re.search(rf"(?<![\w-]){re.escape(form)}(?![\w-])", en, flags=re.I) for form in term["en_forms"]):
                assert any(form.lower() in zh.lower() for form in term["zh_forms"]), (
                    f"{path.name} cell {cell_id}: the English says {term['en']!r}; the Chinese uses none of "
                    f"{term['zh_forms']}")


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_an_erratum_of_the_english_is_one_in_the_chinese(path):
    for cell_id, en, zh in _pairs(path):
        if re.search(r"\berrat", en, flags=re.I):
            assert "勘误" in zh, f"{path.name} cell {cell_id}: the English corrects a seed; the Chinese must say 勘误"


def _table(text):
    """The rows of the first markdown table after its header's |---| line, as tuples of cells."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("|---")) + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(tuple(p.strip() for p in line.strip().strip("|").split(" | ")))
    return rows


def test_the_glossary_is_chapter_00s_and_its_chinese_edition_s():
    """data/glossary.toml holds chapter 00's table row for row, and the Chinese chapter shows the same two columns."""
    rows = [(t["en"], t["zh"], t["meaning"]) for t in GLOSSARY]
    master = nbformat.read(ROOT / "notebooks" / "00_start_here.ipynb", as_version=4)
    cell = next(c for c in master.cells if c.source.startswith("## Glossary"))
    assert _table(cell.source) == rows
    zh = next(z for i, _, z in _pairs(i18n.catalogue_dir(ROOT) / "00_start_here.toml") if i == cell.id)
    assert [row[:2] for row in _table(zh)] == [(t["en"], t["zh"]) for t in GLOSSARY]
    for term in GLOSSARY:
        assert term["seed"] and term["zh_forms"] and term["en_forms"]


# ---------------------------------------------------------------- the built editions


def test_the_committed_chinese_editions_equal_a_rebuild():
    assert i18n.build(ROOT, check=True, out=lambda line: None) == []


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_code_is_the_masters_and_outputs_differ_only_in_self_check_lines(path):
    lecture_path, exercise_path = i18n.edition_paths(ROOT, path)
    master = nbformat.read(ROOT / "notebooks" / lecture_path.name, as_version=4)
    zh = nbformat.read(lecture_path, as_version=4)
    language = [c for c in zh.cells if c.id == i18n.LANGUAGE_CELL_ID]
    first_code = next(c for c in zh.cells if c.cell_type == "code")
    assert language == [first_code] and i18n.LANGUAGE_LINE in first_code.source and not first_code.outputs
    rest = [c for c in zh.cells if c.id != i18n.LANGUAGE_CELL_ID]
    assert [(c.id, c.cell_type) for c in rest] == [(c.id, c.cell_type) for c in master.cells]
    for m, z in zip(master.cells, rest, strict=True):
        if m.cell_type != "code":
            continue
        assert (z.source, z.metadata, z.execution_count) == (m.source, m.metadata, m.execution_count)
        for mo, zo in zip(m.outputs, z.outputs, strict=True):
            en_lines = (mo.get("text", "") + mo.get("data", {}).get("text/plain", "")).split("\n")
            zh_lines = (zo.get("text", "") + zo.get("data", {}).get("text/plain", "")).split("\n")
            assert len(en_lines) == len(zh_lines)
            for a, b in zip(en_lines, zh_lines, strict=True):
                assert a == b or re.match(r"[✅❌⏳]|\S+ hint \d", a) and a.split(":")[0].split()[-1] in b, (a, b)
            assert {k: v for k, v in mo.items() if k not in ("text", "data")} == \
                   {k: v for k, v in zo.items() if k not in ("text", "data")}


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_the_chinese_exercise_edition_is_the_english_one_in_chinese(path):
    """Same questions for the grader, the same placeholders, no solution and no word of the markers."""
    lecture_path, exercise_path = i18n.edition_paths(ROOT, path)
    english = nbformat.read(ROOT / "notebooks" / "student" / exercise_path.name, as_version=4)
    zh = nbformat.read(exercise_path, as_version=4)
    zh_code = [c.source for c in zh.cells if c.cell_type == "code" and c.id != i18n.LANGUAGE_CELL_ID]
    assert zh_code == [c.source for c in english.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in zh.cells if c.cell_type == "code")
    assert student.solution_leaks(nbformat.read(lecture_path, as_version=4), zh) == []
    text = exercise_path.read_text(encoding="utf-8")
    for phrase in ("BEGIN SOLUTION", "END SOLUTION", "参考答案位于"):
        assert phrase not in text
    assert zh.cells[0].id == student.NOTE_ID and "练习版" in zh.cells[0].source
    questions = score.Assignment.from_notebook(exercise_path).question_ids
    assert questions == score.Assignment.from_notebook(ROOT / "notebooks" / lecture_path.name).question_ids


def test_lab_opens_the_chinese_exercise_edition_of_chapter_00():
    page = lab.first_page(ROOT, "zh")
    assert page == ROOT / "notebooks" / "zh" / "student" / "00_start_here_student.ipynb" and page.is_file()
    with pytest.raises(ValueError, match="unknown language"):
        lab.first_page(ROOT, "de")


# ---------------------------------------------------------------- keeping in step: a master changes


def test_a_changed_english_cell_turns_stale_and_its_chapter_is_not_built(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "exercise_master.ipynb", notebooks / "99_fixture.ipynb")
    path = i18n.skeleton(tmp_path, "99")
    data = i18n.read_catalogue(path)
    assert data["cells"] and all("en" in e and not i18n.chinese(e) for e in data["cells"].values())
    assert i18n.build(tmp_path, out=lambda line: None) == [] and not (notebooks / "zh" / "99_fixture.ipynb").exists()
    for entry in data["cells"].values():
        entry["zh"] = "中文。"
    path.write_text(i18n.catalogue_text(data["master"], data["cells"]), encoding="utf-8")
    i18n.build(tmp_path, out=lambda line: None)
    assert i18n.build(tmp_path, check=True, out=lambda line: None) == []

    master = nbformat.read(notebooks / "99_fixture.ipynb", as_version=4)
    changed = next(c for c in master.cells if c.cell_type == "markdown")
    changed.source += "\n\nOne more sentence."
    nbformat.write(master, notebooks / "99_fixture.ipynb")
    said = []
    assert i18n.status(tmp_path, out=said.append) == 1
    assert f"  stale {changed.id}: the English changed" in "\n".join(said)
    assert i18n.skeleton(tmp_path, "99") and i18n.cell_status(master, i18n.read_catalogue(path))["stale"] == [
        changed.id]  # a new skeleton keeps the translation stale until it is translated again
    problems = i18n.build(tmp_path, check=True, out=lambda line: None)
    assert problems and all("its catalogue is not complete" in p for p in problems)


def test_a_catalogue_written_and_read_back_is_the_same(tmp_path):
    cells = {"a1": {"en_sha256": i18n.sha256("x"), "zh": "第一行\n\n$\\frac{F}{P}$ 与 `rl.estimate`\n"},
             "b2": {"en_sha256": i18n.sha256("y"), "en": "To translate.", "zh": ""}}
    text = i18n.catalogue_text("notebooks/99_x.ipynb", cells)
    path = tmp_path / "99_x.toml"
    path.write_text(text, encoding="utf-8")
    data = i18n.read_catalogue(path)
    assert i18n.chinese(data["cells"]["a1"]) == "第一行\n\n$\\frac{F}{P}$ 与 `rl.estimate`"
    assert i18n.catalogue_text(data["master"], data["cells"]) == text  # writing again changes nothing
    with pytest.raises(ValueError, match="three single quotes"):
        i18n.catalogue_text("m", {"c": {"en_sha256": "0", "zh": "'''"}})
