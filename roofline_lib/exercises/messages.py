"""Every line the self-checks say, in English and in Chinese, and the Chinese hints of each chapter.

``say(key, **fields)`` formats the line ``key`` in the language ``rl.set_language`` set. A question's
hints and its wrong choices' explanations are written in its chapter's module (``chNN.py``) in English;
their Chinese lives in ``zh/chNN.py`` beside it (``HINTS`` and ``WHY``, keyed by question id), so a
question added to a chapter needs one more entry there and nothing else changes.
"""

from __future__ import annotations

import importlib

from ..core.language import get_language

# key -> (English, Chinese); str.format fields, the same in both
LINES = {
    "no_hint": ("{qid}: no hint for this one — reread the question's unit and the section it follows.",
                "{qid}：这一题没有提示——请重读题目要求的单位和它所在的那一节。"),
    "hint": ("{qid} hint {level}/{n}: {text}", "{qid} 提示 {level}/{n}：{text}"),
    "unanswered": ("⏳ {qid}: not answered yet — replace `...` with your answer{unit}.",
                   "⏳ {qid}：尚未作答——请把 `...` 换成你的答案{unit}。"),
    "unit": (" (unit: {unit})", "（单位：{unit}）"),
    "choice_type": ("❌ {qid}: expected one of {choices}, got {a_type} ({answer}).",
                    "❌ {qid}：答案应为 {choices} 之一，收到的却是 {type}（{answer}）。"),
    "not_a_choice": ("❌ {qid}: {answer} is not one of the choices: {choices}.",
                     "❌ {qid}：{answer} 不在可选项中：{choices}。"),
    "choice_correct": ("✅ {qid}: correct — {expected}.", "✅ {qid}：正确——{expected}。"),
    "choice_why": ("❌ {qid}: not {given}: {why}", "❌ {qid}：不是 {given}：{why}"),
    "choice_wrong": ("❌ {qid}: not {given}.", "❌ {qid}：不是 {given}。"),
    "then_hint": (" Hint: {hint}", "提示：{hint}"),
    "number_type": ("❌ {qid}: expected a number{unit}, got {a_type} ({answer}).",
                    "❌ {qid}：答案应为一个数{unit}，收到的却是 {type}（{answer}）。"),
    "not_finite": ("❌ {qid}: {value} is not a finite number.", "❌ {qid}：{value} 不是有限的数。"),
    "not_whole": ("❌ {qid}: {value}{unit} is not a whole number; this question counts whole {items}: round "
                  "{rounding} ({how}).",
                  "❌ {qid}：{value}{unit} 不是整数；这一题数的是整的{items_zh}：请{rounding_zh}取整（{how_zh}）。"),
    "correct": ("✅ {qid}: correct ({value}{unit}).", "✅ {qid}：正确（{value}{unit}）。"),
    "wrong_sign": ("❌ {qid}: wrong sign — {value}{unit} should be {sign}.",
                   "❌ {qid}：符号错了——{value}{unit} 应为{sign_zh}。"),
    "not_right": ("❌ {qid}: {value}{unit} is not right.", "❌ {qid}：{value}{unit} 不对。"),
    "slip": ("❌ {qid}: {value}{unit} is {slip}", "❌ {qid}：{value}{unit} {slip}"),
    "off": ("❌ {qid}: {value}{unit} is {direction} (by a factor of {factor}; tolerance ±{rtol}).",
            "❌ {qid}：{value}{unit} {direction_zh}（相差 {factor} 倍；容差 ±{rtol}）。"),
    "power_of_ten": ("off by a factor of 10^{exponent}: check your units (T = 1e12, G = 1e9, M = 1e6; TB/s vs GB/s; "
                     "s vs ms vs µs)",
                     "差了 10^{exponent} 倍：请检查单位（T = 1e12，G = 1e9，M = 1e6；TB/s 与 GB/s；s、ms 与 µs）"),
    "twice": ("{times} the expected value: elements vs bytes (bf16 is 2 bytes)? one direction vs both? a multiply-add "
              "counted as 1 FLOP instead of 2?",
              "是正确值的{times_zh}：是否把元素数当成了字节数（bf16 每个元素 2 字节）？把单向当成了双向（或反过来）？"
              "把一次乘加算成了 1 次 FLOP 而不是 2 次？"),
    "binary_prefix": ("{binary}x {way} than expected{extra}: a {prefix}B / {unit} slip? 1 {prefix}B = 2^{bits} bytes, "
                      "1 {unit} = 10^{digits} (nvidia-smi prints MiB)",
                      "比正确值{way_zh} {binary} 倍{extra}：是否混淆了 {prefix}B 与 {unit}？"
                      "1 {prefix}B = 2^{bits} 字节，1 {unit} = 10^{digits} 字节（nvidia-smi 显示的是 MiB）"),
    "and_off": (", and off by 10^{scale} besides", "，另外还差了 10^{scale} 倍"),
    # the grader's own lines about one question
    "not_found": ("{qid}: question not found in submission", "{qid}：提交的 notebook 中没有这道题"),
    "not_read": ("{qid}: the answer was not read", "{qid}：没有读到答案"),
}

# the words some lines put in their fields, in Chinese
WORDS_ZH = {"up": "向上", "down": "向下", "the smallest that reaches it": "取达到目标的最小值",
            "the largest that fits": "取放得下的最大值", "positive": "正数", "negative": "负数",
            "too high": "偏大", "too low": "偏小", "twice": "两倍", "half": "一半", "larger": "大",
            "smaller": "小", "items": "个数"}


def say(key, **fields):
    """The line ``key`` with its fields filled in, in the language now set."""
    en, zh = LINES[key]
    if get_language() != "zh":
        return en.format(**fields)
    for name in ("rounding", "how", "sign", "direction", "times", "way", "items"):
        if name in fields:
            fields[f"{name}_zh"] = WORDS_ZH.get(fields[name], fields[name])
    return zh.format(**fields)


def _chinese(question_id):
    """The zh/chNN module of a question's chapter, or None where the chapter has no Chinese yet."""
    chapter = question_id.split(".", 1)[0]
    try:
        return importlib.import_module(f"{__package__}.zh.ch{chapter}")
    except ModuleNotFoundError:
        return None


def english_sha(q):
    """The hash a Chinese chapter module keeps (``EN_SHA256``) of the English its entry for ``q`` translates: the
    question's hints and wrong-choice explanations. When they change, the Chinese is stale (``stale_chinese``)."""
    import hashlib
    import json

    text = json.dumps([list(q.hints), sorted(q.why.items())], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def stale_chinese(questions):
    """Of ``questions``, the ids whose Chinese hints are missing or translate English that has changed since."""
    stale = []
    for q in questions:
        module = _chinese(q.id)
        if module is None or q.id not in module.HINTS or getattr(module, "EN_SHA256", {}).get(q.id) != english_sha(q):
            stale.append(q.id)
    return stale


def hints_of(q):
    """Question ``q``'s hints in the language now set (the English ones where a chapter has no Chinese yet)."""
    module = _chinese(q.id) if get_language() == "zh" else None
    return tuple(module.HINTS.get(q.id, q.hints)) if module else tuple(q.hints)


def why_of(q, choice):
    """Why ``choice`` is wrong for question ``q``, in the language now set; None where the question does not say."""
    if choice not in q.why:
        return None
    module = _chinese(q.id) if get_language() == "zh" else None
    return getattr(module, "WHY", {}).get(q.id, {}).get(choice, q.why[choice]) if module else q.why[choice]


__all__ = ["english_sha", "hints_of", "LINES", "say", "stale_chinese", "why_of", "WORDS_ZH"]
