"""Test fixture written for vramfit (not the trainer's code): a config
schema shaped like the LTX-2 trainer's src/ltx_trainer/config.py, so that
vramfit's static reader is tested on nested pydantic models, inheritance,
Literal values, optional and union types, lists and tuples, bounds,
discriminated unions (by field and by Tag), aliases across modules and
validators, without the real trainer."""

from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from ltx_trainer.quant import QuantKind
from ltx_trainer.strategies import (
    FlexibleStrategy,
    PairedStrategy,
    SimpleStrategy,
    StrictModel as _Strict,
)


class Base(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FirstFrame(Base):
    """Validation: condition on an image."""

    type: Literal["first_frame"] = "first_frame"
    image_path: str | Path | None = None
    image_or_video: str | None = None


class Reference(Base):
    type: Literal["reference"] = "reference"
    video: str | None = None
    audio: str | None = None
    downscale_factor: int = Field(default=1, ge=1)
    include_in_output: bool = False


ValCond = Annotated[
    Union[
        FirstFrame,
        Reference,
    ],
    Field(discriminator="type"),
]


class Sample(Base):
    prompt: str
    conditions: list[ValCond] = Field(default_factory=list)
    video_dims: tuple[int, int, int] | None = None
    seed: int | None = None


class ModelSection(Base):
    model_path: str | Path = Field(..., description="unified checkpoint or split transformer")
    text_encoder_path: str | Path | None = None
    video_vae_path: str | Path | None = None
    audio_vae_path: str | Path | None = None
    training_mode: Literal["lora", "full"] = "lora"
    load_checkpoint: str | Path | None = None

    @field_validator("model_path")
    @classmethod
    def not_a_url(cls, v):
        if str(v).startswith("http"):
            raise ValueError("no URLs")
        return v


class LoraSection(Base):
    rank: int = Field(default=32, ge=1)
    alpha: float = Field(default=32, ge=0)
    dropout: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
    )
    target_modules: list[str] = ["to_k", "to_q", "to_v", "to_out.0"]


def _pick(v: Any) -> str:
    return v.get("name", "simple") if isinstance(v, dict) else v.name


Strategy = Annotated[
    Annotated[SimpleStrategy, Tag("simple")]
    | Annotated[PairedStrategy, Tag("paired")]
    | Annotated[FlexibleStrategy, Tag("flexible")],
    Discriminator(_pick),
]


class OptimSection(Base):
    learning_rate: float = 1e-4
    steps: int = Field(default=2000, gt=0)
    batch_size: int = Field(default=1, ge=1)
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    max_grad_norm: float = Field(default=1.0, ge=0)
    optimizer_type: Literal["adamw", "adamw8bit"] = "adamw"
    scheduler_type: Literal["constant", "linear", "cosine", "cosine_with_restarts", "polynomial"] = "linear"
    scheduler_params: dict = Field(default_factory=dict)
    enable_gradient_checkpointing: bool = False


class AccelSection(Base):
    mixed_precision_mode: Literal["no", "fp16", "bf16"] | None = "bf16"
    quantization: QuantKind | None = None
    load_text_encoder_in_8bit: bool = False
    offload_optimizer_during_validation: bool = False


class DataSection(Base):
    preprocessed_data_root: str = Field(description="where preprocessing wrote its output")
    num_dataloader_workers: int = Field(default=2, ge=0)


class ValidationSection(Base):
    samples: list[Sample] = Field(default_factory=list)
    negative_prompt: str = ""
    video_dims: tuple[int, int, int] = (960, 544, 89)
    frame_rate: float = Field(default=25.0, gt=0)
    seed: int = 42
    inference_steps: int = Field(default=30, gt=0)
    interval: int | None = Field(default=100, gt=0)
    video_cfg_scale: float = Field(default=3.0, ge=1.0)
    audio_cfg_scale: float = Field(default=7.0, ge=1.0)
    stg_blocks: list[int] | None = None
    generate_audio: bool = True
    skip_initial_validation: bool = False

    @model_validator(mode="before")
    @classmethod
    def old_names(cls, data: Any) -> Any:
        """Older configs spelled guidance differently: map them."""
        if isinstance(data, dict) and "guidance_scale" in data:
            data["video_cfg_scale"] = data.pop("guidance_scale")
        for old in ("stg_scale", "stg_mode"):
            data.pop(old, None)
        return data


class CheckpointSection(Base):
    interval: int | None = Field(default=None, gt=0)
    keep_last_n: int = Field(default=1, ge=-1)
    precision: Literal["bfloat16", "float32"] = "bfloat16"


class FlowSection(Base):
    timestep_sampling_mode: Literal["shifted_logit_normal", "uniform"] = "shifted_logit_normal"
    timestep_sampling_params: dict = {}


class HubSection(_Strict):
    push_to_hub: bool = False
    hub_model_id: str | None = None


class WandbSection(Base):
    enabled: bool = False
    project: str = "ltx-2-trainer"
    entity: str | None = None
    tags: list[str] = []
    log_validation_videos: bool = True


class LtxTrainerConfig(Base):
    """The whole run configuration."""

    model: ModelSection = Field(default_factory=ModelSection)
    lora: LoraSection | None = None
    training_strategy: Strategy = Field(default_factory=SimpleStrategy)
    optimization: OptimSection = Field(default_factory=OptimSection)
    acceleration: AccelSection = Field(default_factory=AccelSection)
    data: DataSection
    validation: ValidationSection = Field(default_factory=ValidationSection)
    checkpoints: CheckpointSection = Field(default_factory=CheckpointSection)
    flow_matching: FlowSection = Field(default_factory=FlowSection)
    hub: HubSection = Field(default_factory=HubSection)
    wandb: WandbSection = Field(default_factory=WandbSection)
    seed: int = 42
    output_dir: str = "outputs"

    @model_validator(mode="after")
    def lora_needs_block(self) -> "LtxTrainerConfig":
        if self.model.training_mode == "lora" and self.lora is None:
            raise ValueError("lora block required")
        return self
