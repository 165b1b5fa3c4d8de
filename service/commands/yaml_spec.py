"""YAML spec files: a safe loader that reads floats as YAML 1.2 does; imported only when a spec is YAML."""

from __future__ import annotations

import re
from typing import Any

import yaml

YAMLError = yaml.YAMLError


class SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader reading floats as YAML 1.2 does: `2e-5` and `1E3` are numbers, not strings.

    PyYAML implements YAML 1.1, whose float pattern needs a dot (`2.0e-5`); JSON and YAML 1.2 do not.
    The resolver is the YAML 1.2 core schema's float pattern (yaml.org/spec/1.2.2, 10.3.2).
    """


SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?
                 |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
                 |[-+]?\.(?:inf|Inf|INF)
                 |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."),
)


def load_yaml(text: str) -> Any:
    """Parse YAML text with SpecLoader (a SafeLoader: no Python objects)."""
    return yaml.load(text, Loader=SpecLoader)  # a SafeLoader
