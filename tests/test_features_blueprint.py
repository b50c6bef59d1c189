"""Blueprint renderer: variants, exact block phrasings, template hashes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from judgeaudit.features import blueprint as bp
from judgeaudit.features.extract import compute, feature_names
from judgeaudit.testing.toyaudio import voice


@pytest.fixture(scope="module")
def table():
    names = list(feature_names("eGeMAPSv02"))
    rows = []
    for i, f0 in enumerate([100, 130, 160, 190, 220]):
        vals = compute(voice(f0=f0, seed=i, level_db=-30 + 4 * i), 16000, "eGeMAPSv02")
        rows.append({"clip_id": f"c{i}", "sha256": "x", "status": "ok", **dict(zip(names, vals,
                                                                               strict=True))})
    rows.append({"clip_id": "quiet", "sha256": "y", "status": "silent",
                 **dict.fromkeys(names, np.nan)})
    return pd.DataFrame(rows)


def test_blocks_and_fallible_exact(table):
    b = bp.Blueprint(table)
    assert b.block("angry", framed=True) == "A classifier labelled this clip as angry."
    assert b.block("angry", framed=False) == "Label: angry."
    assert re.search(r"can be wrong", b.fallible())
    assert "ignore the label" in b.fallible()


def test_description_has_numbers_and_corpus_words(table):
    b = bp.Blueprint(table)
    low, high = b.description("c0"), b.description("c4")
    for text in (low, high):
        assert "Hz" in text and "semitones" in text and "jitter" in text
        assert "harmonics-to-noise" in text and "syllable" in text
        assert "{" not in text
        # never mistaken for a label or oracle statement by the embedded judges
        assert not re.search(r"\blabel\s*:", text, re.I)
        assert "emotion is" not in text.lower()
    hz_low = int(re.search(r"average (\d+) Hz", low).group(1))
    hz_high = int(re.search(r"average (\d+) Hz", high).group(1))
    assert abs(hz_low - 100) < 15 and abs(hz_high - 220) < 25
    assert "low for this corpus" in low and "high for this corpus" in high
    assert "unavailable" not in low
    assert "no measurements are available" in b.description("quiet")
    assert "silent" in b.description("quiet")
    with pytest.raises(KeyError):
        b.description("nope")


def test_skeleton_has_no_values(table):
    b = bp.Blueprint(table)
    sk = b.skeleton()
    assert not re.search(r"\d+\s*Hz", sk)
    assert "[value]" in sk
    # same lines as the description template
    assert len(sk.splitlines()) == len(b.description("c1").splitlines())


def test_template_hash_changes_with_a_template(tmp_path, table):
    for f in bp.TEMPLATE_FILES:
        (tmp_path / f).write_text((bp.TEMPLATE_DIR / f).read_text())
    h1 = bp.Blueprint(table, template_dir=tmp_path).template_sha256
    assert h1 == bp.template_sha256() and len(h1) == 64
    (tmp_path / "fallible.txt").write_text("Labels may be wrong; trust the audio.\n")
    assert bp.Blueprint(table, template_dir=tmp_path).template_sha256 != h1
    (tmp_path / "skeleton.txt").unlink()
    with pytest.raises(FileNotFoundError, match="skeleton.txt"):
        bp.Blueprint(table, template_dir=tmp_path)


def test_bad_table():
    with pytest.raises(ValueError, match="lacks columns"):
        bp.Blueprint(pd.DataFrame({"clip_id": ["a"], "status": ["ok"]}))


def test_hz_conversion_and_words():
    assert bp.semitone_to_hz(0) == 27.5
    assert abs(bp.semitone_to_hz(12) - 55) < 1e-9
    assert bp.ordinal(1) == "1st" and bp.ordinal(12) == "12th" and bp.ordinal(23) == "23rd"
    assert bp.level_word(5) == "very low" and bp.level_word(50) == "average"
    assert bp.level_word(95) == "very high"
