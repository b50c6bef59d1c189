"""`judgeaudit audit`: resolve the judge (panel name or YAML file), write a config
overlay, validate it, refuse an API judge without prices (unless --allow-unpriced),
run the workflow target `<card folder>/card.json` with snakemake (results/audit/<judge>
for every protocol, results/audit/<judge>/protocols/<set> for a `--protocols` subset:
`judgeaudit.audit.plan.card_dir`), copy the card and everything its links point to
into --out, and print the verdicts with their answer counts. Exit status: 0 with at least one decided protocol, 3 when no
protocol could be decided (no valid answers to speak of), 2 for a bad config, else
snakemake's."""

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

CARD_FILES = ("card.json", "card.html", "card.png", "verdicts.json", "responses.jsonl",
              "card.json.prov.json", "verdicts.json.prov.json")
NO_VERDICT = 3


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
    if getattr(args, "allow_unpriced", False):
        overlay["audit"]["allow_unpriced"] = True
    path = Path("logs") / "audit" / f"{name}.overlay.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(overlay, sort_keys=True))
    cfg = load_config(*configs, path)
    if name not in cfg["judges"]["panel"]:
        raise ConfigError(f"--judge {name!r}: not in judges.panel ({sorted(cfg['judges']['panel'])}) "
                          "and not a YAML file")
    _check_priced(name, cfg)
    return name, [*configs, str(path)], path, cfg


def _check_priced(name: str, cfg: dict) -> None:
    """The audit stage refuses an unpriced API judge too; saying it here, before
    snakemake starts, gives the message without a failed job."""
    from judgeaudit.audit.run import check_priced

    spec = cfg["judges"]["panel"][name]
    try:
        check_priced(name, {"panel": spec}, bool(cfg["audit"].get("allow_unpriced")))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    except Exception:  # noqa: BLE001 - an adapter that cannot be built fails in the run
        return


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
    from judgeaudit.audit.plan import card_dir

    target = f"{card_dir(name, cfg['audit']['protocols'])}/card.json"
    cmd = [exe, target, "--cores", str(args.cores), "--configfile", *configs,
           *args.snakemake_args]
    print("running: " + " ".join(cmd), file=sys.stderr)
    rc = subprocess.run(cmd).returncode
    if rc != 0 or not Path(target).exists():
        print(f"judgeaudit audit: snakemake exited {rc}; no card", file=sys.stderr)
        return rc or 1
    src = Path(target).parent
    out = args.out or src
    card = json.loads((src / "card.json").read_text())
    copied = out.resolve() != src.resolve()
    if copied:
        copy_card(src, out, card)
    print(f"judge card {src / 'card.json'} ({src / 'card.html'})"
          + (f"; copied with everything its links need to {out}" if copied else "") + ":")
    for line in summary_lines(card):
        print(line)
    if not card.get("decided", True):
        print(f"judgeaudit audit: no verdict for {name}: no protocol could be decided "
              "(see the answer counts above)", file=sys.stderr)
        return NO_VERDICT
    return 0


def _counts(a: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in a.items()) or "none"


def summary_lines(card: dict) -> list[str]:
    """The CLI's verdict summary: per protocol the verdict, what it says, the answers
    (valid / invalid / refused / error) and the calls; then the requests sent."""
    from judgeaudit.audit.card import protocol_order

    out = []
    for p in protocol_order(card):
        v = card["protocols"][p]
        out.append(f"  {p:15s} {v['verdict']:21s} {v['lead_contrast']}: {_fmt(v)}; calls "
                   f"{v['calls']} of {v['fixed_design_calls']} (fixed design), stage "
                   f"{v['stopping_stage']}/{v['n_stages']}")
        out.append(f"  {'':15s} {v.get('statement', '')}")
        out.append(f"  {'':15s} answers: {_counts(v.get('answers', {}))}; requests sent "
                   f"{v.get('requests_sent', '?')}")
    out.append(f"  {card.get('requests_sent', '?')} requests sent to the judge in this run; "
               f"{card['calls']} trials used of {card['fixed_design_calls']} for the fixed "
               f"design; early stopping {'on' if card['audit']['early_stop'] else 'off'}")
    return out


def copy_card(src: Path, out: Path, card: dict) -> None:
    """Copy the card with everything its links need: the card files, their provenance
    records and the trial shards (linked `../../trials/...` from results/audit/<judge>,
    `../../../../trials/...` from a protocol set's folder; copied to `trials/...` here,
    with card.html's links rewritten to match)."""
    out.mkdir(parents=True, exist_ok=True)
    for f in CARD_FILES:
        if (src / f).exists():
            shutil.copy2(src / f, out / f)
    html = (src / "card.html").read_text()
    for href in card.get("traces", {}).values():
        if href.startswith("../"):
            shard = (src / href).resolve()
            rel = Path(*[part for part in Path(href).parts if part != ".."])
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(shard, out / rel)
            for extra in (shard.with_name(shard.name + ".prov.json"),):
                if extra.exists():
                    shutil.copy2(extra, out / rel.with_name(extra.name))
            html = html.replace(f"href='{href}'", f"href='{rel.as_posix()}'")
    (out / "card.html").write_text(html)
