"""Config loading and validation against `schemas/config.schema.yaml`.

The top-level schema holds one `$ref` per section (`schemas/config/<section>.schema.yaml`)
so each stage owns its part. Validation fills defaults, rejects unknown keys and
wrong types, and checks that paths marked `x-existing-path` exist, failing with a
message that names the offending field before any job starts.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO_ROOT / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config that fails its schema; the message names the field."""


# libyaml's safe loader when PyYAML has it: the schema files are ~0.6 s of every
# workflow parse with the pure-Python loader (cProfile of `snakemake -n`), ~0.1 s here
_SCHEMA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_schema_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SCHEMA_LOADER)  # noqa: S506 (a safe loader)


def load_schema(schema_path: str | os.PathLike = SCHEMA_PATH) -> dict[str, Any]:
    """The top-level schema with every file `$ref` inlined."""
    schema_path = Path(schema_path)

    def inline(node: Any, base: Path) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                target = (base / ref).resolve()
                loaded = _load_schema_yaml(target.read_text(encoding="utf-8"))
                merged = {k: v for k, v in node.items() if k != "$ref"}
                merged.update(inline(loaded, target.parent))
                return merged
            return {k: inline(v, base) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, base) for v in node]
        return node

    return _resolve_vocabularies(
        inline(_load_schema_yaml(schema_path.read_text(encoding="utf-8")), schema_path.parent))


def vocabulary(name: str) -> tuple[str, ...]:
    """A vocabulary named `<module>.<NAME>[.<key>]` in `judgeaudit.vocab`
    (e.g. `study_a.PLACEMENTS`, `study_b.TASK_CUES.single`)."""
    import importlib

    module, attr, *key = name.split(".")
    try:
        value = getattr(importlib.import_module(f"judgeaudit.vocab.{module}"), attr)
        for k in key:
            value = value[k]
    except (ImportError, AttributeError, KeyError):
        raise ConfigError(f"schema names unknown vocabulary {name!r} "
                          "(expected <module>.<NAME> of judgeaudit.vocab)") from None
    return tuple(value)


def _resolve_vocabularies(node: Any) -> Any:
    """`x-vocabulary: <name>` in a schema: the allowed values come from
    judgeaudit.vocab, never a copy. On a string: its `enum`; on an array: its items'
    `enum`; on an object: one property per name (the documented `properties` first,
    the others from `x-vocabulary-property`, `{name}` filled into its description)."""
    if isinstance(node, list):
        return [_resolve_vocabularies(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _resolve_vocabularies(v) for k, v in node.items()}
    name = node.get("x-vocabulary")
    if name:
        names = vocabulary(name)
        kind = node.get("type")
        if kind == "string":
            node["enum"] = list(names)
        elif kind == "array":
            node["items"] = {**node.get("items", {}), "enum": list(names)}
        elif kind == "object":
            props = dict(node.get("properties", {}))
            stale = sorted(set(props) - set(names))
            if stale:
                raise ConfigError(f"schema properties {stale} are not in vocabulary {name} "
                                  f"{list(names)}")
            template = node.get("x-vocabulary-property", {})
            for n in names:
                if n not in props:
                    sub = copy.deepcopy(template)
                    if "description" in sub:
                        sub["description"] = sub["description"].format(name=n)
                    props[n] = sub
            node["properties"] = props
    return node


def _field(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _fill_defaults(instance: Any, schema: Mapping[str, Any]) -> Any:
    """Recursively insert `default`s of object properties that are absent."""
    if not isinstance(schema, Mapping):
        return instance
    if isinstance(instance, dict) and schema.get("type") == "object":
        for key, sub in schema.get("properties", {}).items():
            if key not in instance and "default" in sub:
                instance[key] = copy.deepcopy(sub["default"])
            if key in instance:
                instance[key] = _fill_defaults(instance[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in instance:
                if key not in schema.get("properties", {}):
                    instance[key] = _fill_defaults(instance[key], extra)
    if isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        return [_fill_defaults(item, schema["items"]) for item in instance]
    return instance


def _check_paths(instance: Any, schema: Mapping[str, Any], root: Path, path=()) -> None:
    if not isinstance(schema, Mapping):
        return
    if schema.get("x-existing-path") and isinstance(instance, str) and instance:
        p = Path(instance)
        p = p if p.is_absolute() else root / p
        if not p.exists():
            raise ConfigError(
                f"config field '{_field(path)}': path '{instance}' does not exist "
                f"(expected an existing {schema.get('x-existing-path')})"
            )
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, value in instance.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else None)
            if sub is not None:
                _check_paths(value, sub, root, (*path, key))
    if isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(instance):
            _check_paths(item, schema["items"], root, (*path, i))


def validate_config(
    config: Mapping[str, Any],
    schema_path: str | os.PathLike = SCHEMA_PATH,
    root: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Return a validated copy of `config` with defaults filled in.

    Raises ConfigError naming the first offending field (all problems listed).
    """
    schema = load_schema(schema_path)
    instance = _fill_defaults(copy.deepcopy(dict(config)), schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = []
        for err in errors:
            where = _field(err.absolute_path)
            if err.instance is None and "then" in err.schema_path:
                # a field this provider needs, left at its null default
                lines.append(f"config field '{where}': required for this judge's provider "
                             f"but not set (expected {err.validator_value})")
            elif err.validator == "pattern" and where.endswith("api_key_env"):
                # never echo the value: a key pasted here by mistake must not be printed
                lines.append(f"config field '{where}': must be the NAME of an environment "
                             "variable (letters, digits, '_'), not the key itself")
            elif err.validator == "additionalProperties":
                allowed = sorted(err.schema.get("properties", {}))
                lines.append(f"config field '{where}': {err.message}; allowed keys: {allowed}")
            else:
                lines.append(f"config field '{where}': {err.message}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    _check_paths(instance, schema, Path(root) if root else Path.cwd())
    return instance


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with the same key twice (PyYAML keeps the
    last one silently, so a duplicated `budget_usd:` or `model:` would go unseen)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep=False):
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise ConfigError(
                f"duplicate key '{key}' in {getattr(loader, 'source_name', 'YAML')} at line "
                f"{key_node.start_mark.line + 1} (first at line {seen[key]}); "
                "YAML would silently keep only the last value")
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _construct_unique_mapping)


def load_yaml_strict(path: str | os.PathLike) -> Any:
    """Load a YAML file, rejecting duplicate keys with an error naming file, key and lines."""
    loader = _UniqueKeyLoader(Path(path).read_text(encoding="utf-8"))
    loader.source_name = str(path)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def check_duplicate_keys(paths) -> None:
    for p in paths:
        if Path(p).is_file():
            load_yaml_strict(p)


def load_config(path: str | os.PathLike, *overlays: str | os.PathLike) -> dict[str, Any]:
    """Load YAML config (plus overlays merged on top, as Snakemake does) and validate."""
    merged: dict[str, Any] = {}
    for p in (path, *overlays):
        data = load_yaml_strict(p) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: expected a mapping at top level, got {type(data).__name__}")
        deep_update(merged, data)
    return validate_config(merged, root=Path(path).resolve().parent)


def deep_update(base: dict, new: Mapping) -> dict:
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_update(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base
