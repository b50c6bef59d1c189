"""The prompt contract (judgeaudit.prompts) is the one home of every sentence the
builders write and the embedded judges read."""

import ast
from pathlib import Path

import pytest

from judgeaudit import prompts as P

PKG = Path(P.__file__).resolve().parent
REPO = PKG.parents[1]


@pytest.mark.parametrize("template, text", [
    ("block_framed.txt", P.FRAMED_BLOCK),
    ("block_unframed.txt", P.UNFRAMED_BLOCK),
    ("fallible.txt", P.FALLIBLE_INSTRUCTION),
])
def test_blueprint_templates_say_what_the_contract_says(template, text):
    assert (REPO / "templates" / "blueprint" / template).read_text().strip() == text


def _string_constants(path):
    tree = ast.parse(path.read_text())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_no_contract_sentence_is_restated_elsewhere_in_the_package():
    sentences = [P.SYSTEM_TEXT, P.REFERENCE_LABEL_TEXT, P.RUBRIC_TEXT, P.ALLOWED_TEXT, P.FRAMED_BLOCK,
                 P.UNFRAMED_BLOCK, P.FALLIBLE_INSTRUCTION, P.PAIR_FORMAT_TEXT, P.CONCAT_TEXT,
                 P.REFERENCE_CLIP_TEXT, P.ORACLE_EMOTION_TEXT, P.ORACLE_SHIFT_TEXT,
                 *P.CLS_QUESTIONS.values(), *P.PAIR_QUESTIONS.values()]
    offenders = {}
    for path in PKG.rglob("*.py"):
        if path.name == "prompts.py":
            continue
        hits = _string_constants(path) & set(sentences)
        if hits:
            offenders[str(path.relative_to(PKG))] = sorted(hits)
    assert not offenders, offenders


def test_contract_imports_neither_conditions_nor_judges():
    tree = ast.parse((PKG / "prompts.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    # only the vocabularies (which import nothing from the package) may be used
    assert not {m for m in mods if m and m.startswith("judgeaudit")
                and not m.startswith("judgeaudit.vocab")}, mods


def test_study_b_marks_round_trip_through_the_readers():
    m = P.AUDIO_MARK.match(P.audio_mark("A", 3))
    assert (m.group("slot"), m.group("turn")) == ("A", "3")
    assert P.AUDIO_MARK.match(P.audio_mark()).group("slot") is None
    assert P.REPLY_LINE.findall(P.reply_line("R2", "so sorry")) == [("R2", "so sorry")]
    assert P.TURN_LINE.findall(P.turn_line(4, "user", "hi")) == [("4", "User: hi")]
    assert P.ORACLE_EMOTION.search(P.ORACLE_TURN_EMOTION_TEXT.format(turn=5, label="sad")
                                   ).groups() == ("5", "sad")
    assert P.ORACLE_SHIFT.search(P.ORACLE_SHIFT_TEXT.format(turn=3)).group(1) == "3"
    assert P.IN_TURN.search("How does the user sound" + P.TURN_SCOPE_TEXT.format(turn=2)
                            ).group(1) == "2"
