"""Test fixture written for vramfit (not the trainer's code): strategy
configuration models in a module of their own, reached through imports."""

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StrategyBase(StrictModel):
    name: Literal["simple", "paired", "flexible"] = Field(description="which strategy")


class CleanFrameCond(StrictModel):
    type: Literal["first_frame"] = "first_frame"
    probability: float = Field(default=1.0, ge=0.0, le=1.0)


class PairedCond(StrictModel):
    type: Literal["reference"] = "reference"
    latents_dir: str = Field(..., description="reference latents")
    probability: float = Field(1.0, ge=0.0, le=1.0)


class MaskedCond(StrictModel):
    type: Literal["mask"] = "mask"
    mask_dir: str


TrainCond = Annotated[Union[CleanFrameCond, PairedCond, MaskedCond], Field(discriminator="type")]


class Stream(StrictModel):
    is_generated: bool
    latents_dir: str = "latents"
    conditions: list[TrainCond] = Field(default_factory=list)


class SimpleStrategy(StrategyBase):
    name: Literal["simple"] = "simple"
    with_audio: bool = False


class PairedStrategy(StrategyBase):
    name: Literal["paired"] = "paired"
    reference_latents_dir: str = "reference_latents"


class FlexibleStrategy(StrategyBase):
    name: Literal["flexible"] = "flexible"
    first_frame_conditioning_p: float = Field(default=0.0, ge=0, le=1)
    video: Stream | None = None
    audio: "Optional[Stream]" = None

    @model_validator(mode="after")
    def something_generated(self) -> "FlexibleStrategy":
        return self
