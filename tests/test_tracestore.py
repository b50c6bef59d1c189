"""The report's row traces on disk (issue 36): each distinct value once, compressed,
read back equal to what was traced (types, key order, shared and unshared values)."""

import dataclasses
import math
import pickle
import struct
import zlib

import pytest

from judgeaudit.provenance import tracestore as TS
from judgeaudit.provenance.cells import CellTrace
from judgeaudit.report.cellpages import TraceFailed


def _trial(i: int) -> dict:
    return {"trial_id": f"t{i:04d}", "task": "emotion", "facts": {"seed": 1, "k": 8},
            "request_parts": [{"kind": "text", "text": "Which emotion? " * 40},
                              {"kind": "audio", "path": f"data/clips/c{i}.wav"}],
            "request_text": "[user]\nWhich emotion? " * 40, "raw_text": '{"label": "sad"}',
            "cache_hit": False, "response_line": i}


def _table(n_rows: int, n_trials: int) -> list:
    chain = [{"output": f"results/x{j}.tsv", "rule": "r", "params": {"n_boot": 200},
              "inputs": [{"path": "a", "sha256": "0" * 64}] * 5} for j in range(8)]
    out: list = []
    for r in range(n_rows):
        trials = [_trial(i) for i in range(n_trials)]  # equal records, new objects per row
        ch = [dict(n) for n in chain]
        out.append([CellTrace(table="t.tsv", row_index=r, row_key=f"row{r}", column=c,
                              value=0.5, row={"judge": "j", "estimate": 0.5}, chain=ch,
                              config={"params": {"r": {"n_boot": 200}}}, trials=trials,
                              recomputed=0.5, match=True) for c in ("estimate", "ci_low")])
    out.append(TraceFailed("no such row"))
    return out


def test_round_trip_is_equal_and_keeps_types_order_and_odd_floats():
    odd = {"b": (1, 2), "a": [1, 2], "z": -0.0, "n": float("nan"), "t": True, "o": 1}
    rows = [[CellTrace(table="t", row_index=0, row_key="k", column="c", value=-0.0,
                       row=odd, chain=[odd, dict(odd)], config={}, trials=[odd])],
            TraceFailed("boom")]
    back = TS.loads(TS.dumps(pickle.loads(pickle.dumps(rows))))
    assert isinstance(back[1], TraceFailed) and back[1] == "boom"
    row = back[0][0].row
    assert list(row) == ["b", "a", "z", "n", "t", "o"]
    assert type(row["b"]) is tuple and type(row["a"]) is list
    assert math.copysign(1, row["z"]) == -1 and math.copysign(1, back[0][0].value) == -1
    assert math.isnan(row["n"]) and row["t"] is True and type(row["o"]) is int
    # equal values are one object after the round trip
    assert back[0][0].chain[0] is back[0][0].chain[1] is back[0][0].trials[0] is row


def test_a_table_of_repeated_trials_is_stored_compactly_and_reads_back_equal():
    table = _table(40, 60)
    plain = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
    data = TS.dumps(pickle.loads(plain))
    assert len(data) * 20 < len(plain)
    assert TS.loads(data) == table


def test_a_file_that_is_not_a_compact_trace_is_an_error_naming_it(tmp_path):
    path = tmp_path / "old.pickle"
    path.write_bytes(pickle.dumps([]))
    with pytest.raises(TS.TraceStoreError, match=r"old\.pickle: not a compact trace file"):
        TS.read(path)
    TS.write(tmp_path / "new.pickle", _table(2, 3))
    assert TS.read(tmp_path / "new.pickle") == _table(2, 3)


def _by_value(o, memo):
    """The interning by value, written plainly (what `TS._Interner` must share): one
    object per (type, value), floats by their bits, containers by their children."""
    t = type(o)
    if t is float:
        return memo.setdefault(("f", struct.pack("<d", o)), o)
    if t in (str, int):
        return memo.setdefault((t, o), o)
    if t is dict:
        items = [(_by_value(k, memo), _by_value(v, memo)) for k, v in o.items()]
        return memo.setdefault(("d", tuple((id(k), id(v)) for k, v in items)), dict(items))
    if t in (list, tuple):
        items = [_by_value(x, memo) for x in o]
        return memo.setdefault((t, tuple(map(id, items))), t(items))
    if isinstance(o, CellTrace):
        for f in dataclasses.fields(o):
            setattr(o, f.name, _by_value(getattr(o, f.name), memo))
    return o


def test_the_fast_interning_shares_what_interning_by_value_shares_to_the_byte():
    odd = {"z": -0.0, "p": 0.0, "n": float("nan"), "t": True, "o": 1, "f": 1.0, "s": "1",
           "e": [], "u": (), "d": {}, "l": [1, 1.0, True, None, -0.0, 0.0], "k": (1, [1])}
    table = _table(5, 7)
    for row in table[:-1]:
        row[0].row = {**odd, "again": dict(odd), "list": [odd, [odd]], "tuple": (odd,)}
        row[1].recomputed = -0.0
    plain = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
    memo: dict = {}
    ref = [_by_value(r, memo) if type(r) is list else r for r in pickle.loads(plain)]
    want = TS.MAGIC + zlib.compress(pickle.dumps(ref, protocol=pickle.HIGHEST_PROTOCOL),
                                    TS.LEVEL)
    assert TS.dumps(pickle.loads(plain)) == want
