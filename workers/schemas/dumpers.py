"""Schema dumps worked out once: a marshmallow schema turned into a plain function with the same output.

marshmallow's `Schema.dump` asks, for every value, which field it is, how to read it and how to format
it: about 2 us a value, 2.7 ms of CPU for a recommendation's ~1,400 values
(examples/resnet50-imagenet.json on the 2-core machine), about the no-op Celery round trip the result
then waits on; compiled, 0.8 ms. `compiled_dump(schema)` asks those questions once, per schema instance,
and keeps for each field its key, the attribute it reads and a formatter that does what the field's
`_serialize` does: `int(v)` or `float(v)` for numbers (None stays None), `str` for strings, the value
itself for booleans and raw fields, a list of the inner field's values, the nested schema's own compiled
dump. Anything else (a field type or subclass that formats in its own way, a dotted attribute, an object
read by key, a missing value and its dump_default, a schema with pre/post-dump hooks or its own
`get_attribute`) goes through marshmallow itself, so the output is always marshmallow's, key order
included (tests/test_schema_dumpers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.utils import ensure_text_type

Formatter = Callable[[Any, Any], Any]  # (value read, the object it was read from) -> the dumped value

_NUMBERS = {int: int, float: float}
_WHOLE = ""  # a field reading the whole object (Function, Method): no attribute
_MARSHMALLOW = "."  # a field read by marshmallow itself (a dotted attribute): never a plain attribute name


def compiled_dump(schema: Schema) -> Callable[[Any], Any]:
    """Return a function dumping what `schema.dump` dumps, the same way (the schema's `many` included)."""
    return _compiled(schema, many=schema.many)


def _compiled(schema: Schema, *, many: bool) -> Callable[[Any], Any]:
    if any(schema._hooks.values()) or type(schema).get_attribute is not Schema.get_attribute:
        return lambda obj: schema.dump(obj, many=many)  # hooks and custom readers: marshmallow's own way
    one = _object_dump(schema)
    if many:
        return lambda objs: schema.dump(objs, many=True) if objs is None else [one(obj) for obj in objs]
    return one


def _object_dump(schema: Schema) -> Callable[[Any], Any]:
    plan = tuple(_field_step(name, field) for name, field in schema.dump_fields.items())
    make = schema.dict_class
    accessor = schema.get_attribute

    def dump(obj: Any) -> Any:
        out = make()
        by_key = hasattr(obj, "__getitem__")  # marshmallow reads obj[key] first from such objects
        for key, attr, formatter, field, name in plan:
            if attr is _WHOLE:
                value = formatter(None, obj)
            else:
                value = missing if by_key else getattr(obj, attr, missing)
                # read by key, a dotted attribute, absent: marshmallow's own path, and its default
                value = field.serialize(name, obj, accessor=accessor) if value is missing else formatter(value, obj)
            if value is not missing:
                out[key] = value
        return out

    return dump


def _field_step(name: str, field: fields.Field[Any]) -> tuple[str, str, Formatter, fields.Field[Any], str]:
    key = field.data_key if field.data_key is not None else name
    attr = field.attribute or name
    if not field._CHECK_ATTRIBUTE:
        attr = _WHOLE
    elif "." in attr:
        attr = _MARSHMALLOW
    return key, attr, _formatter(field, name), field, name


def _formatter(field: fields.Field[Any], name: str) -> Formatter:
    """Return what the field's `_serialize` does to a value read, without asking the field each time."""
    kind: Any = type(field)._serialize
    if kind is fields.Field._serialize:
        return lambda value, obj: value
    if (kind is fields.Number._serialize and getattr(type(field), "_format_num", None) is fields.Number._format_num
            and not getattr(field, "as_string", True) and getattr(field, "num_type", None) in _NUMBERS):
        convert = _NUMBERS[field.num_type]  # type: ignore[attr-defined]
        return lambda value, obj: None if value is None else convert(value)
    if kind is fields.String._serialize:
        return lambda value, obj: None if value is None else ensure_text_type(value)
    if kind is fields.List._serialize and isinstance(field, fields.List):
        inner = _formatter(field.inner, name)
        return lambda value, obj: None if value is None else [inner(each, obj) for each in value]
    if kind is fields.Nested._serialize and isinstance(field, fields.Nested):
        nested = field.schema
        dump = _compiled(nested, many=bool(nested.many or field.many))
        return lambda value, obj: None if value is None else dump(value)
    if kind is fields.Function._serialize and isinstance(field, fields.Function):
        func: Callable[[Any], Any] = field.serialize_func  # type: ignore[assignment]
        return lambda value, obj: func(obj)
    return lambda value, obj: field._serialize(value, name, obj)


__all__ = ["compiled_dump"]
