"""A small JSON Schema validator for the subset docs/report.schema.json uses (``jsonschema`` is
not a dependency): type (one or a list), const, enum, required, properties,
additionalProperties (false or a schema), items, minItems, maxItems, oneOf, and local ``$ref``
(``#/$defs/NAME``). Unknown keywords are an error, so the schema cannot outgrow the validator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["errors", "validate"]

_KNOWN = {"$schema", "$id", "title", "description", "$defs", "type", "const", "enum", "required", "properties",
          "additionalProperties", "items", "minItems", "maxItems", "oneOf", "$ref"}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def errors(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (``path: what``); empty when it conforms."""
    root = schema if root is None else root
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"{path}: the validator does not know {sorted(unknown)}")
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return errors(value, root["$defs"][ref.split("/")[-1]], root, path)
    out: list[str] = []
    if "type" in schema:
        types = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not any(_TYPES[t](value) for t in types):
            return [f"{path}: expected {'/'.join(types)}, got {type(value).__name__} {value!r:.60}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "oneOf" in schema:
        passing = [s for s in schema["oneOf"] if not errors(value, s, root, path)]
        if len(passing) != 1:
            out.append(f"{path}: matches {len(passing)} of the oneOf schemas, not exactly 1")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{path}: missing key {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], root, f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}: unexpected key {key!r}")
            elif isinstance(extra, Mapping):
                out += errors(item, extra, root, f"{path}[{key!r}]")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                out += errors(item, schema["items"], root, f"{path}[{i}]")
    return out


def validate(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise AssertionError listing what in ``value`` breaks ``schema``."""
    found = errors(value, schema)
    assert not found, "\n".join(found[:20])
