"""Strict number fields: bounded, finite, and never parsed from strings."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate

from catalog.gpu_names import AmbiguousGpuName, canonical_gpu
from catalog.gpus import gpu_slugs


class StrictFloat(fields.Float):
    """A finite JSON number (int or float, not bool, not a string) within bounds."""

    def __init__(self, *, minimum: float, maximum: float, **kwargs: Any) -> None:
        kwargs.setdefault("validate", validate.Range(min=minimum, max=maximum))
        super().__init__(allow_nan=False, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("Not a valid number.")
        return super()._deserialize(value, attr, data, **kwargs)


class WholeNumber(fields.Integer):
    """A JSON integer: an int, or a float with no fractional part (JSON Schema's `integer`: 3.0 is 3).

    Refuses 2.5, strings ("3"), booleans, NaN and Infinity.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, float) and value.is_integer():  # False for NaN and Infinity
            value = int(value)
        return super()._deserialize(value, attr, data, **kwargs)


def bounded_int(*, minimum: int, maximum: int, **kwargs: Any) -> fields.Integer:
    """Return an integer field that refuses fractions, strings, booleans and out-of-range values."""
    return WholeNumber(validate=validate.Range(min=minimum, max=maximum), **kwargs)


def typed_function(serialize: Any, json_schema: dict[str, Any], **kwargs: Any) -> fields.Function:
    """Return a dump-only Function field whose OpenAPI type is `json_schema` (apispec copies the metadata).

    A bare Function field has no type in the document, and a client generated from it types the value Any.
    """
    metadata = {**json_schema, **kwargs.pop("metadata", {})}
    return fields.Function(serialize, metadata=metadata, **kwargs)


def enum_values(enum: Any) -> dict[str, Any]:
    """Return the JSON Schema of a string enum's values."""
    return {"type": "string", "enum": [member.value for member in enum]}


# The `catalog` object of an estimate, a recommendation and a review (the contract's {"version", "prices_as_of"}).
CATALOG_REF = {"type": "object", "required": ["version", "prices_as_of"], "properties": {
    "version": {"type": "string"}, "prices_as_of": {"type": "string"}}}


class GpuName(fields.String):
    """One GPU: a catalog slug, or a name as people write it ("RTX 4090", "A100 80GB"), loaded as its slug.

    A name that matches no GPU is kept as given, for the check that knows the catalog to refuse with its
    suggestions; one that names a family of several ("a100") is refused here, listing them.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=validate.Length(min=1, max=64), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        name = super()._deserialize(value, attr, data, **kwargs)
        try:
            return canonical_gpu(name, gpu_slugs())
        except AmbiguousGpuName as error:
            raise ValidationError(str(error)) from error
