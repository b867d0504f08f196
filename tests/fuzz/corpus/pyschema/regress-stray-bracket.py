from pydantic import BaseModel, Field

class Stray(BaseModel):
    steps: int = Field(default=1, ge=1)]
    rank: list[int]]] = []
]
class After(BaseModel):
    name: str = "x"
