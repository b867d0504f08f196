from pydantic import BaseModel, ConfigDict, conint
from somewhere_else import Mystery
class Root(BaseModel):
    model_config = ConfigDict(extra='forbid')
    a: conint(ge=1) = 1
    b: Mystery | None = None
    c: 'Dict[str, Weird[int]]' = {}
    d: dict[str, int] = {}
class Loose(Mystery):
    x: int = 1
