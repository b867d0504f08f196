#!/usr/bin/env bash
# pydantic.sh - `check` says what the trainer's pydantic will say (issue 22):
# realistic edits of a copy of the fixture trainer (tests/fixtures/ltx-trainer)
# and of its shipped config, each with a static expectation; where python3 has
# pydantic 2 and PyYAML, each verdict is also compared with the fixture config
# class's own (LtxTrainerConfig.model_validate(yaml.safe_load(...))).
. "$(dirname "$0")/lib.sh"

TD="$VF_SOURCE_DIR/tests/fixtures/ltx-trainer"
unset LTX_TRAINER_DIR LTX_TRAININGS_DIR LTX_MODELS_DIR
mkdir -p "$TMP/m/gemma"
: >"$TMP/m/ltx-2.safetensors"
HAVE_PY=0
python3 -c 'import pydantic, yaml, sys; sys.exit(0 if pydantic.VERSION.startswith("2") else 1)' 2>/dev/null && HAVE_PY=1

# verdict TRAINER_DIR CONFIG: "pass" or "fail" as pydantic sees it
py_verdict() {
  python3 - "$1/src" "$2" <<'PY'
import sys, yaml
sys.path.insert(0, sys.argv[1])
from pydantic import ValidationError
try:
    from ltx_trainer.config import LtxTrainerConfig
    with open(sys.argv[2]) as f:
        LtxTrainerConfig.model_validate(yaml.safe_load(f))
    print("pass")
except (ValidationError, SyntaxError):
    print("fail")
PY
}

# edit NAME EXPECT SED_ON_CONFIG_PY YAML_SED: a fresh copy, the base config
# with real paths, the edits; vramfit's verdict must be EXPECT (and pydantic's)
edit() {
  local name="$1" expect="$2" pysed="$3" ysed="$4" tr="$TMP/tr" cfg="$TMP/c.yaml"
  test_case "$name"
  rm -rf "$tr"; cp -r "$TD" "$tr"
  [ -z "$pysed" ] || sed -i "$pysed" "$tr/src/ltx_trainer/config.py"
  sed -e "s#^\(  model_path:\).*#\1 \"$TMP/m/ltx-2.safetensors\"#" \
      -e "s#^\(  text_encoder_path:\).*#\1 \"$TMP/m/gemma\"#" \
      -e "s#^\(  preprocessed_data_root:\).*#\1 \"$TMP/data\"#" "$TD/configs/t2v_lora.yaml" >"$cfg"
  [ -z "$ysed" ] || sed -i "$ysed" "$cfg"
  run check --config "$cfg" --trainer-dir "$tr"
  local got=pass; [ "$rc" -eq 0 ] || got=fail
  check "[ $got = $expect ]"
  if [ "$HAVE_PY" = 1 ]; then
    local want; want=$(py_verdict "$tr" "$cfg")
    check "[ '$got' = '$want' ]"
  fi
}

edit "the shipped config passes" pass "" ""
edit "conint(...) in config.py: a sibling key is not failed" pass \
  's/^    rank: int = Field(default=32, ge=1)/    rank: conint(ge=1) = 32/; s/^from pydantic import BaseModel,/from pydantic import conint, BaseModel,/' ""
edit "conint(ge=1): rank 0 fails" fail \
  's/^    rank: int = Field(default=32, ge=1)/    rank: conint(ge=1) = 32/; s/^from pydantic import BaseModel,/from pydantic import conint, BaseModel,/' \
  's/^  rank: 32/  rank: 0/'
expect_out "lora.rank: 0 is below the minimum: must be >= 1"
edit "Annotated[int, Field(ge=1)]: batch_size 0 fails" fail \
  's/^    batch_size: int = Field(default=1, ge=1)/    batch_size: Annotated[int, Field(ge=1)] = 1/' 's/^  batch_size: 1/  batch_size: 0/'
edit "booleans as pydantic reads them: \"yes\"" pass "" 's/^  enable_gradient_checkpointing: true/  enable_gradient_checkpointing: "yes"/'
edit "booleans: on" pass "" 's/^  enable_gradient_checkpointing: true/  enable_gradient_checkpointing: on/'
edit "booleans: y (a string to YAML, true to pydantic)" pass "" 's/^  enable_gradient_checkpointing: true/  enable_gradient_checkpointing: y/'
edit "YAML 1.1 integers: 0x7d0" pass "" 's/^  steps: 2000/  steps: 0x7d0/'
edit "steps: 1e3 is a string to YAML and not an int to pydantic" fail "" 's/^  steps: 2000/  steps: 1e3/'
expect_out "optimization.steps: expected int, found the string '1e3'"
edit "steps: \"2000.0\" is an int to pydantic" pass "" 's/^  steps: 2000/  steps: "2000.0"/'
edit "merge keys: checkpoints from an anchor" pass "" 's/^checkpoints:/checkpoints:\n  <<: {keep_last_n: 2}/'
edit "merge keys: a merged key the schema forbids" fail "" 's/^checkpoints:/checkpoints:\n  <<: {keep_lastn: 2}/'
edit "a str Enum given its value" pass \
  's/^    quantization: QuantKind | None = None/    quantization: Quant | None = None/; s/^class Base(BaseModel):/from enum import Enum\nclass Quant(str, Enum):\n    INT8 = "int8-quanto"\n    FP8 = "fp8-quanto"\n\n\nclass Base(BaseModel):/' \
  's/^  quantization: null/  quantization: int8-quanto/'
edit "a str Enum given a member name" fail \
  's/^    quantization: QuantKind | None = None/    quantization: Quant | None = None/; s/^class Base(BaseModel):/from enum import Enum\nclass Quant(str, Enum):\n    INT8 = "int8-quanto"\n\n\nclass Base(BaseModel):/' \
  's/^  quantization: null/  quantization: INT8/'
edit "Field(alias=...): the alias is the key" pass \
  's/^    seed: int = 42$/    random_seed: int = Field(default=42, alias="seed")/' ""
edit "a multi-line parenthesised annotation is read" fail \
  's/^    seed: int = 42$/    seed: (\n        int\n    ) = 42/' 's/^seed: 42/seed: abc/'
expect_out "seed: expected int"
edit "a discriminator error lists every allowed value" fail "" \
  's/^    latents_dir: "latents"/    latents_dir: "latents"\n    conditions: [{type: first_frme}]/'
expect_out "'first_frme' selects no member of the union (allowed: first_frame, reference, mask)"
edit "config.py that does not parse fails, naming file and line" fail \
  's/^    rank: int = Field(default=32, ge=1)/    rank: int = Field(default=32, ge=1/' ""
expect_out "src/ltx_trainer/config.py:"
expect_out "was never closed"

test_case "a field validator is never silent: not checked, naming it"
edit "model_path's validator" pass "" ""
expect_out "model.model_path: not checked: ModelSection.not_a_url (src/ltx_trainer/config.py:"

[ "$HAVE_PY" = 1 ] || echo "note: no pydantic 2 with PyYAML in python3: static expectations only" >&2
finish
