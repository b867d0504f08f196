"""Test fixture written for vramfit: one pydantic v2 model with the features
vramfit reads statically (constrained types, annotated_types markers, Enum by
value, aliases, populate_by_name, a tagged union, a multi-line annotation, a
before field validator). cases.tsv holds pydantic 2.13.4's verdict on each
edit; tests/cli/pydantic.sh re-derives it when pydantic is installed."""
from enum import Enum
from typing import Annotated, Literal, Optional, Union
from annotated_types import Gt, Len
from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, PositiveInt, StrictInt, conint,
                      confloat, constr, field_validator, model_validator)
class Q(str, Enum):
    INT8 = "int8-quanto"
    FP8 = "fp8-quanto"
class A(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["a"] = "a"
class B(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["b"] = "b"
    n: int = 0
class C(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["c"] = "c"
class Root(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    rank: conint(ge=1, le=256) = 32
    lr: confloat(gt=0) = 1e-4
    name: constr(min_length=2) = "ab"
    steps: PositiveInt = 10
    workers: Annotated[int, Field(ge=0)] = 2
    frames: Annotated[int, Gt(8)] = 9
    dims: Annotated[list[int], Len(3, 3)] = [1, 2, 3]
    seed: StrictInt = 1
    flag: bool = False
    quant: Optional[Q] = None
    out: str = Field(default="o", alias="output_dir")
    data: str = Field(default="d", validation_alias=AliasChoices("data_root", "root"))
    cond: Union[A, B, C] = Field(default_factory=A, discriminator="type")
    scale: (
        float
        | None
    ) = None
    tag: str = ""
    @field_validator("tag", mode="before")
    @classmethod
    def up(cls, v):
        return str(v)
