"""benchmarks/scale.py's arithmetic: growth exponents, projections and budget
estimates come from completed sizes only (nothing assumed)."""

import importlib.util
import math
import re
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"
_spec = importlib.util.spec_from_file_location("scale_benchmark", _PATH)
scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale)


def _row(f, wall, cpu, calls, status="ok"):
    return {"fraction": f, "jobs": 342, "dag_s": 4.0, "dag_cpu_s": 3.5, "trials": calls,
            "calls": calls, "wall_s": wall, "cpu_s": cpu, "judge_s": wall / 2,
            "peak_mib": 500.0, "load": 2.0, "status": status}


def test_exponent_recovers_a_known_power_law():
    rows = [_row(f, 50 * (1000 * f) ** 0.8, 90 * (1000 * f) ** 1.1, int(1000 * f))
            for f in (0.125, 0.25, 0.5)]
    assert scale.exponent(rows, "calls", "wall_s") == pytest.approx(0.8, abs=0.01)
    assert scale.exponent(rows, "calls", "cpu_s") == pytest.approx(1.1, abs=0.01)


def test_projections_bracket_an_affine_truth_and_need_two_sizes():
    truth = lambda f: 300 + 2000 * f  # noqa: E731 (fixed cost + per-size cost)
    done = [_row(f, truth(f), truth(f), int(4000 * f)) for f in (0.03125, 0.0625, 0.125)]
    power, affine = scale.project(done, 1.0)
    assert affine == pytest.approx(truth(1.0))
    assert power < truth(1.0)  # fixed costs flatten the power law at small f
    assert scale.project(done[:1], 1.0) is None  # one size: no projection printed
    lines = scale.summary([*done[:1], {"fraction": 1.0, "jobs": 342, "dag_s": 4.0,
                                       "dag_cpu_s": 3.5, "status": "budget cut: x"}])
    assert any("n/a (needs two completed sizes)" in line for line in lines)
    assert not any(re.search(r"projected wall_s \d", line) for line in lines)


def test_budget_estimate_is_linear_from_one_size_and_the_larger_projection_after():
    one = [_row(0.125, 600.0, 900.0, 500)]
    est, how = scale.estimate(one, 0.25)
    assert est == pytest.approx(1200.0) and "linear" in how
    two = [*one, _row(0.25, 900.0, 1400.0, 1000)]
    est, _ = scale.estimate(two, 1.0)
    assert est == pytest.approx(max(scale.project(two, 1.0)))
    assert scale.estimate([], 0.125) is None


def test_cut_and_failed_sizes_do_not_enter_the_fit():
    rows = [_row(0.125, 100.0, 150.0, 500), _row(0.25, 200.0, 300.0, 1000),
            _row(0.5, 50.0, 60.0, 300, status="cut at 50 s")]
    done = [r for r in rows if r["status"] == "ok"]
    assert scale.exponent(done, "calls", "wall_s") == pytest.approx(1.0)
    line = [ln for ln in scale.summary(rows) if ln.startswith("f=0.5")][0]
    assert "cut at 50 s" in line and "projected wall_s 400 s power law / 400 s affine" in line
    assert not math.isnan(scale.project(done, 0.5)[0])


def test_scaled_config_keeps_floors_and_scales_study_b():
    import yaml

    base = yaml.safe_load((_PATH.parents[1] / "configs" / "scale.yaml").read_text())
    small, full = scale.scaled(base, 1 / 32), scale.scaled(base, 1.0)
    assert full["study_b"]["tasks"]["positional"]["n_items"] == 500
    assert small["study_b"]["tasks"]["positional"]["n_items"] == 16
    assert small["study_a"]["pairwise"]["n_pairs"] == 2  # floor
    assert small["datasets"]["synth_emotion"]["n_voices"] == 4  # floor
