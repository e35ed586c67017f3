"""Dataclasses -> JSON values and back, and dataclass types -> JSON Schema.

The JSON document and its schema are both derived from the result dataclasses, so the two cannot
disagree; ``schemas/hep-advisor.schema.json`` is the checked-in copy, and a test fails when the
code and the checked-in file drift apart (regenerate with ``python -m
hep_advisor.document.schema``).
"""

from __future__ import annotations

import dataclasses
import math
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


def _json_fields(cls_or_obj: Any) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls_or_obj) if f.metadata.get("json", True)]


def _key(f: dataclasses.Field[Any]) -> str:
    """A field's JSON key: its name, or ``metadata["key"]`` (a key that is a Python keyword)."""
    return str(f.metadata.get("key", f.name))


def to_jsonable(obj: Any) -> Any:
    """Plain JSON values from (nested) dataclasses; NaN and infinities become ``None``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {_key(f): to_jsonable(getattr(obj, f.name)) for f in _json_fields(obj)}
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
            props[_key(f)] = self.of(hints[f.name])
            required.append(_key(f))
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


class JsonInputError(ValueError):
    """A JSON document that does not match the types: one line naming the file and the key."""


def from_jsonable(tp: Any, value: Any, path: str, where: str) -> Any:
    """The dataclass (or value) of type ``tp`` from its JSON form (the inverse of
    ``jsonio.to_jsonable``); a mismatch is a ``JsonInputError`` naming the key."""
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        first: JsonInputError | None = None
        for a in args:
            if a is type(None):
                continue
            try:
                return from_jsonable(a, value, path, where)
            except JsonInputError as e:
                first = first or e
        raise first or JsonInputError(f"{path}: {where}: must not be null")
    if origin is Literal:
        if value in get_args(tp):
            return value
        raise JsonInputError(f"{path}: {where}: must be one of "
                         f"{', '.join(map(str, get_args(tp)))}, not {value!r}")
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise JsonInputError(f"{path}: {where}: must be a list")
        item = get_args(tp)[0] if get_args(tp) else Any
        return tuple(from_jsonable(item, v, path, f"{where}[{i}]")
                     for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise JsonInputError(f"{path}: {where}: must be an object")
        _, item = get_args(tp)
        return {k: from_jsonable(item, v, path, f"{where}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise JsonInputError(f"{path}: {where}: must be an object")
        hints = get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if not f.metadata.get("json", True):
                continue
            if _key(f) not in value:
                if (f.default is not dataclasses.MISSING
                        or f.default_factory is not dataclasses.MISSING):
                    continue
                raise JsonInputError(f"{path}: {where}.{_key(f)}: missing")
            kwargs[f.name] = from_jsonable(hints[f.name], value[_key(f)], path,
                                           f"{where}.{_key(f)}")
        return tp(**kwargs)
    if tp is float:
        if value is None:  # to_jsonable writes NaN and infinities as null
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise JsonInputError(f"{path}: {where}: must be a number, not {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise JsonInputError(f"{path}: {where}: must be a whole number, not {value!r}")
        return value
    if tp is bool or tp is str:
        if not isinstance(value, tp):
            raise JsonInputError(f"{path}: {where}: must be a {tp.__name__}, not {value!r}")
        return value
    if tp is type(None):
        if value is not None:
            raise JsonInputError(f"{path}: {where}: must be null")
        return None
    raise JsonInputError(f"{path}: {where}: cannot read a {tp!r}")  # pragma: no cover


__all__ = ["JsonInputError", "from_jsonable", "schema_for", "to_jsonable"]
