"""The one-command judge audit end to end, in one snakemake run on a clone of the
shared tiny run: the embedded judges get the verdicts they were built for, an
`openai` judge played by the loopback server with a scripted shortcut policy is
found out over real HTTP, a `python` provider judge is audited, the card and its
traces are written, and `judgeaudit audit` fronts the same target."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from judgeaudit.io import read_jsonl
from judgeaudit.testing.fakeserver import FakeProvider

JUDGES = ["listener", "label-reader", "first-slot", "sim-follower", "gpt", "py-copy"]
LABEL = re.compile(r"(?:A classifier labelled this clip as|Label:|Reference label:)\s+([^.\n]+)\.")
LABELS = re.compile(r"Answer with one of: ([^.]+)\.")


def scripted_policy(text: str) -> str:
    """The API judge's policy: copy any label the text states; always pick slot 1."""
    if "Question: which clip" in text:
        return json.dumps({"choice": "A"})
    if "R1:" in text:
        return json.dumps({"reasoning": "first reply", "pred": "R1"})
    m = LABEL.search(text)
    allowed = [x.strip() for x in LABELS.search(text).group(1).split(",")]
    return json.dumps({"label": m.group(1).strip() if m else allowed[0]})


@pytest.fixture(scope="module")
def audited(tiny_run, tmp_path_factory):
    work = tiny_run.clone(tmp_path_factory.mktemp("audit") / "run")
    with FakeProvider() as srv:
        srv.reply_fn = scripted_policy
        overlay = work.root / "audit_test.yaml"
        overlay.write_text(yaml.safe_dump({
            # the tiny corpora hold few units and clusters per probe (emotion: 2 test
            # speakers, so an interval on 1 df): probe the language task (4 test voices,
            # 2 clips each) with three derangement seeds (24 units), for a larger effect
            "audit": {"effect": 0.35, "stages": 3, "task": "language"},
            "study_a": {"seeds": [1, 2, 3], "reference_seeds": [1, 2, 3],
                        "language": {"per_class": 2}},
            "judges": {"panel": {
                # the default sim-follower resists on language (Paper A's pattern); the
                # probe here runs on language, so this copy follows there as on emotion
                "sim-follower": {"simulated": {"attributes": {"language": {
                    "follow_block": {"with_audio": 0.7, "with_audio_fallible": 0.3},
                    "follow_reference": {"system": 0.3, "rubric": 0.5, "before": 0.6,
                                         "after": 0.8}}}}},
                "gpt": {"provider": "openai", "model": "gpt-audio-2025-08-28",
                        "base_url": srv.url + "/v1", "concurrency": 4, "max_attempts": 2,
                        "backoff_base_s": 0.01, "backoff_cap_s": 0.02, "timeout_s": 5,
                        "price_in_per_mtok": 40.0, "price_out_per_mtok": 80.0},
                "py-copy": {"provider": "python", "model": "copy-v1",
                            "function": "judgeaudit.audit.example_judge:copy_label"}}}}))
        env = dict(work.env, OPENAI_API_KEY="sk-test")
        targets = [f"results/audit/{j}/card.json" for j in JUDGES]
        res = work.run(*targets, overlays=[overlay], env=env, timeout=1500)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-6000:]
        answered = srv.answered
        violations = list(srv.violations)
    cards = {j: json.loads((work.root / f"results/audit/{j}/card.json").read_text())
             for j in JUDGES}
    return work, cards, res.stdout + res.stderr, answered, violations, overlay


def summary(cards) -> str:
    """Every judge x protocol x contrast with its numbers (for failure messages)."""
    return "\n".join(
        f"{j} {p} {v['verdict']}: " + "; ".join(
            f"{c['name']} {c['verdict']} {c['estimate']:+.2f} [{c['ci_low']:+.2f}, "
            f"{c['ci_high']:+.2f}] units {c['units']}/{c['n_max']} stage {c['stage']}"
            for c in v["contrasts"])
        for j, card in cards.items() for p, v in card["protocols"].items())


def verdict(cards, judge, protocol):
    got = cards[judge]["protocols"][protocol]["verdict"]
    print(summary(cards))
    return got


def test_embedded_judges_get_their_verdicts(audited):
    _, cards, *_ = audited
    print(summary(cards))
    assert verdict(cards, "label-reader", "blueprint") == "shortcut"
    assert verdict(cards, "sim-follower", "blueprint") == "shortcut"
    assert verdict(cards, "first-slot", "pairwise") == "shortcut"
    # the listener never follows (every difference 0), but 4 voices are too few clusters
    # to rule the effect out at level alpha (grounded needs min_clusters_grounded): the
    # card says so instead of calling it grounded
    for p in ("blueprint", "reference"):
        v = cards["listener"]["protocols"][p]
        assert v["verdict"] == "undecided" and "too few clusters" in v["statement"], v
        assert all(c["estimate"] == 0.0 for c in v["contrasts"])
    # the listener never prefers a slot and never follows a label: no shortcut anywhere
    assert all(v["verdict"] != "shortcut" for v in cards["listener"]["protocols"].values())


def test_api_judge_found_out_over_http(audited):
    _, cards, log, answered, violations, _ = audited
    assert not violations and answered > 0
    assert verdict(cards, "gpt", "blueprint") == "shortcut"
    assert verdict(cards, "gpt", "reference") == "shortcut"
    assert verdict(cards, "gpt", "pairwise") == "shortcut"
    gpt = cards["gpt"]
    # stopped early: fewer calls than the fixed design, and at most the HTTP answers made
    assert gpt["calls"] < gpt["fixed_design_calls"]
    assert answered <= gpt["calls"]
    assert gpt["cost_usd_estimated_max"] > 0
    # the pre-flight came before the first call and names every protocol
    pre = log.index("judgeaudit audit pre-flight, judge gpt")
    for p in ("blueprint", "reference", "pairwise", "paralinguistic"):
        assert re.search(rf"{p}\s+\d+ trials \(\d+ new calls", log[pre:])


def test_python_provider_judge_is_audited(audited):
    _, cards, *_ = audited
    assert cards["py-copy"]["provider"] == "python"
    assert verdict(cards, "py-copy", "blueprint") == "shortcut"
    assert verdict(cards, "py-copy", "pairwise") == "shortcut"  # first allowed = slot A


def test_card_schema_and_traces(audited):
    work, cards, *_ = audited
    card = cards["sim-follower"]
    assert set(card["reference_panel"]) == {"listener", "label-reader", "first-slot"}
    # an embedded judge is named by the model version its rows record, never "None"
    assert cards["listener"]["model"] == "embedded-listener-v1"
    assert cards["py-copy"]["model"] == "copy-v1"
    for v in card["protocols"].values():
        assert v["verdict"] in ("shortcut", "grounded", "inconclusive", "undecided",
                                "protocol-dependent", "protocol-independent")
        assert v["calls"] <= v["fixed_design_calls"]
        for c in v["contrasts"]:
            assert c["units"] <= c["n_max"] <= c["units_available"]
            assert c["ci_low"] <= c["estimate"] <= c["ci_high"]
            assert c["stage"] <= c["n_stages"]
            assert c["equivalence_bound"][1] == 0.35 and c["null"] == 0.0
    root = work.root / "results/audit/sim-follower"
    rows = read_jsonl(root / "responses.jsonl")
    assert len({r["trial_id"] for r in rows}) == card["calls"]
    html = (root / "card.html").read_text()
    assert "card.png" in html and "(published)" in html and "responses.jsonl" in html
    assert (root / "card.png").stat().st_size > 1000
    assert (root / "card.json.prov.json").exists() and (root / "verdicts.json.prov.json").exists()


def test_cli_fronts_the_same_target(audited, tmp_path):
    work, cards, _, _, _, overlay = audited
    out = tmp_path / "card"
    env = dict(work.env, OPENAI_API_KEY="sk-test")
    res = subprocess.run(
        [sys.executable, "-m", "judgeaudit.cli", "audit", "--judge", "label-reader",
         "--configfile", "config.yaml", "tests/tiny_config.yaml", str(overlay),
         "--out", str(out), "--cores", "1"],
        cwd=work.root, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-4000:]
    assert json.loads((out / "card.json").read_text()) == cards["label-reader"]
    assert re.search(r"blueprint\s+shortcut", res.stdout)
    assert "Nothing to be done" in res.stderr or "nothing to be done" in res.stderr.lower()
    assert os.path.exists(out / "card.html")
