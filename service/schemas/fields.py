"""Strict number fields: bounded, finite, and never parsed from strings."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate


class StrictFloat(fields.Float):
    """A finite JSON number (int or float, not bool, not a string) within bounds."""

    def __init__(self, *, minimum: float, maximum: float, **kwargs: Any) -> None:
        kwargs.setdefault("validate", validate.Range(min=minimum, max=maximum))
        super().__init__(allow_nan=False, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("Not a valid number.")
        return super()._deserialize(value, attr, data, **kwargs)


def bounded_int(*, minimum: int, maximum: int, **kwargs: Any) -> fields.Integer:
    """Return an integer field that refuses floats, strings, booleans and out-of-range values."""
    return fields.Integer(strict=True, validate=validate.Range(min=minimum, max=maximum), **kwargs)
