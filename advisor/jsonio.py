"""Dataclasses -> JSON values, and dataclass types -> JSON Schema.

The JSON document and its schema are both derived from the result dataclasses, so the two cannot
disagree; ``schemas/hep-advisor.schema.json`` is the checked-in copy, and a test fails when the
code and the checked-in file drift apart (regenerate with ``python -m advisor.schema``).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


def _json_fields(cls_or_obj: Any) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls_or_obj) if f.metadata.get("json", True)]


def to_jsonable(obj: Any) -> Any:
    """Plain JSON values from (nested) dataclasses; NaN and infinities become ``None``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in _json_fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return to_jsonable(obj.item())
    return obj


_SCALARS: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def _doc(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or doc.startswith(cls.__name__ + "("):  # dataclass' generated signature
        return None
    return " ".join(doc.split())


class SchemaBuilder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def of(self, tp: Any) -> dict[str, Any]:
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        if tp is Any:
            return {}
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            options = [self.of(a) for a in get_args(tp)]
            return {"anyOf": options}
        if origin is Literal:
            return {"enum": list(get_args(tp))}
        if origin in (tuple, list):
            args = get_args(tp)
            item = args[0] if args else Any
            return {"type": "array", "items": self.of(item)}
        if origin is dict:
            _, value = get_args(tp)
            return {"type": "object", "additionalProperties": self.of(value)}
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            name = tp.__name__
            if name not in self.defs:
                self.defs[name] = {}  # placeholder against recursion
                self.defs[name] = self._object(tp)
            return {"$ref": f"#/$defs/{name}"}
        raise TypeError(f"no JSON schema for type {tp!r}")

    def _object(self, cls: type) -> dict[str, Any]:
        hints = get_type_hints(cls)
        props = {}
        required = []
        for f in _json_fields(cls):
            props[f.name] = self.of(hints[f.name])
            required.append(f.name)
        out: dict[str, Any] = {"type": "object"}
        doc = _doc(cls)
        if doc:
            out["description"] = doc
        out["properties"] = props
        out["required"] = required
        return out


def schema_for(cls: type, title: str, schema_id: str) -> dict[str, Any]:
    builder = SchemaBuilder()
    root = builder._object(cls)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "title": title,
        **root,
        "$defs": dict(sorted(builder.defs.items())),
    }


__all__ = ["schema_for", "to_jsonable", "typing"]
