"""`judgeaudit audit`: resolve the judge (panel name or YAML file), write a config
overlay, validate it, run the workflow target results/audit/<judge>/card.json with
snakemake, copy the card to --out and print the verdicts."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from judgeaudit.audit.battery import PROTOCOLS
from judgeaudit.config import ConfigError, load_config

CARD_FILES = ("card.json", "card.html", "card.png", "verdicts.json", "responses.jsonl")


def _judge_from_file(path: Path) -> tuple[str, dict]:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the judge file ({exc})") from None
    if isinstance(data, dict) and "judges" in data:
        data = (data.get("judges") or {}).get("panel")
    if not isinstance(data, dict) or len(data) != 1:
        raise ConfigError(f"{path}: expected exactly one judge, `<name>: {{provider: ..., ...}}` "
                          f"(or judges.panel with one entry)")
    (name, spec), = data.items()
    if not isinstance(spec, dict) or "provider" not in spec:
        raise ConfigError(f"{path}: judge {name!r} needs a mapping with `provider`")
    return str(name), spec


def resolve(args: argparse.Namespace) -> tuple[str, list[str], Path, dict]:
    """(judge name, config files incl. the overlay, overlay path, resolved config)."""
    configs = [str(p) for p in (args.configfile or [Path("config.yaml")])]
    for c in configs:
        if not Path(c).exists():
            raise ConfigError(f"config file {c} not found (run in the project folder or pass --configfile)")
    overlay: dict = {"audit": {}}
    judge_path = Path(args.judge)
    if judge_path.suffix in (".yaml", ".yml") and judge_path.exists():
        name, spec = _judge_from_file(judge_path)
        overlay["judges"] = {"panel": {name: spec}}
    else:
        name = args.judge
    if args.protocols:
        prots = [p.strip() for p in args.protocols.split(",") if p.strip()]
        bad = [p for p in prots if p not in PROTOCOLS]
        if bad:
            raise ConfigError(f"--protocols: unknown {bad}; known: {list(PROTOCOLS)}")
        overlay["audit"]["protocols"] = prots
    if args.budget_usd is not None:
        overlay["audit"]["budget_usd"] = float(args.budget_usd)
    if args.no_early_stop:
        overlay["audit"]["early_stop"] = False
    path = Path("logs") / "audit" / f"{name}.overlay.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(overlay, sort_keys=True))
    cfg = load_config(*configs, path)
    if name not in cfg["judges"]["panel"]:
        raise ConfigError(f"--judge {name!r}: not in judges.panel ({sorted(cfg['judges']['panel'])}) "
                          "and not a YAML file")
    return name, [*configs, str(path)], path, cfg


def _fmt(v: dict) -> str:
    if v.get("estimate") is None:
        return "n/a"
    return f"{v['estimate']:+.3f} [{v['ci_low']:+.3f}, {v['ci_high']:+.3f}]"


def run_audit(args: argparse.Namespace) -> int:
    try:
        name, configs, _, cfg = resolve(args)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    target = f"results/audit/{name}/card.json"
    cmd = [exe, target, "--cores", str(args.cores), "--configfile", *configs,
           *args.snakemake_args]
    print("running: " + " ".join(cmd), file=sys.stderr)
    rc = subprocess.run(cmd).returncode
    if rc != 0 or not Path(target).exists():
        print(f"judgeaudit audit: snakemake exited {rc}; no card", file=sys.stderr)
        return rc or 1
    src = Path(target).parent
    out = args.out or src
    if out.resolve() != src.resolve():
        out.mkdir(parents=True, exist_ok=True)
        for f in CARD_FILES:
            shutil.copy2(src / f, out / f)
    card = json.loads((src / "card.json").read_text())
    print(f"judge card {out / 'card.json'} ({out / 'card.html'}):")
    for p, v in card["protocols"].items():
        print(f"  {p:15s} {v['verdict']:13s} {v['lead_contrast']}: {_fmt(v)}; calls {v['calls']} "
              f"of {v['fixed_design_calls']} (fixed design), stage {v['stopping_stage']}/{v['n_stages']}")
    print(f"  total calls {card['calls']} of {card['fixed_design_calls']} for the fixed design; "
          f"early stopping {'on' if card['audit']['early_stop'] else 'off'}")
    return 0
