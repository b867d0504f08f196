from typing import Annotated, Literal, Union
from pydantic import BaseModel, Field
class X(BaseModel):
    model_config = {'extra': 'forbid'}
    kind: Literal['x'] = 'x'
    path: str
class Y(BaseModel):
    kind: Literal['y'] = 'y'
    n: int = Field(..., ge=0)
Either = Annotated[Union[X, Y], Field(discriminator='kind')]
class Root(BaseModel):
    items: list[Either] = []
    dims: tuple[int, int] = (1, 2)
    tags: tuple[str, ...] = ()
