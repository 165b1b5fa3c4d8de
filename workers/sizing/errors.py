"""Errors the sizing core raises for input a user can get wrong.

The tree:

    SizingError                 anything a user can cause; carries `field` (a dotted path) and `reason`
    +-- SpecError               a value is out of range, missing, or of the wrong form
    |   +-- UnknownNameError    a preset, layer type, GPU slug or operator that does not exist;
    |                           carries `suggestions` (closest valid names)
    +-- ShapeError              a layer's input shape does not fit the layer (names the layer)
    +-- OnnxError               an ONNX file that cannot be read

Every front end (HTTP, CLI, Slack) maps the whole tree to one shape: 422 problem+json with
`errors: {field: [reason]}`, or a one-line CLI message and exit code 2.
"""

from __future__ import annotations


class SizingError(Exception):
    """A problem with the user's input, located by a dotted field path."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class SpecError(SizingError):
    """A value out of range, missing, or of the wrong form."""


class UnknownNameError(SpecError):
    """A name (preset, layer type, GPU slug, operator) that does not exist."""

    def __init__(self, field: str, reason: str, suggestions: tuple[str, ...] = ()) -> None:
        if suggestions:
            reason = f"{reason}; did you mean {', '.join(suggestions)}?"
        super().__init__(field, reason)
        self.suggestions = suggestions


class ShapeError(SizingError):
    """A layer whose input shape does not fit it."""


class OnnxError(SizingError):
    """An ONNX file that cannot be parsed or shape-inferred."""
