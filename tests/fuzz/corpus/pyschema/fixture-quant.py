"""Test fixture written for vramfit: a Literal alias defined in another module."""
from typing import Literal

QuantKind = Literal["int8-quanto", "int4-quanto", "int2-quanto", "fp8-quanto", "fp8uz-quanto"]
