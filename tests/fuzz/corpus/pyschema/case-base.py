from pydantic import BaseModel, ConfigDict, Field
from typing import Literal
class B(BaseModel):
    model_config = ConfigDict(extra="forbid")
class Val(B):
    """docstring with a: colon"""
    seed: int = 42  # a comment
    steps: int = Field(default=30, gt=0,
                       description="multi-line")
    @property
    def nothing(self) -> int:
        x: int = 3
        return x
class Root(B):
    validation: Val = Field(default_factory=Val)
    mode: Literal['a', 'b'] = 'a'
