from pydantic import BaseModel
class Root(BaseModel):
    child: 'Root | None' = None
    kids: list['Root'] = []
