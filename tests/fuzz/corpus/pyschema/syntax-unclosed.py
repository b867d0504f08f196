from pydantic import BaseModel
class Root(BaseModel):
    x: int = Field(
        default=1,
