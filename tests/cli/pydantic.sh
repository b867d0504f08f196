#!/usr/bin/env bash
# pydantic.sh - `check` says what the trainer's pydantic will say (issue 22):
# realistic edits of a copy of the fixture trainer (tests/fixtures/ltx-trainer)
# and of its shipped config, each with a static expectation; where python3 has
# pydantic 2 and PyYAML, each verdict is also compared with the fixture config
# class's own (LtxTrainerConfig.model_validate(yaml.safe_load(...))), and
# check is run a second time with its python3 runner on (lib/trainer/
# pycheck.c: the trainer's config class as the judge), whose verdict must be
# exactly pydantic's. Then the runner's own cases: validators that decide,
# a config.py that does not parse, no python3, no pydantic.
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
except ImportError:
    print("noimport")  # torch & co. are not here: the edit states its verdict
PY
}

# edit NAME EXPECT SED_ON_CONFIG_PY YAML_SED [PY_EXPECT]: a fresh copy, the
# base config with real paths, the edits; vramfit's static verdict must be
# EXPECT (and pydantic's, unless PY_EXPECT says pydantic differs: a validator
# decides). Where python3 has pydantic 2, check with its runner on must say
# the trainer's class answered and give pydantic's verdict (its output kept
# in $PYOUT; $out is the static run's).
edit() {
  local name="$1" expect="$2" pysed="$3" ysed="$4" pyexpect="${5:-$2}" tr="$TMP/tr" cfg="$TMP/c.yaml"
  test_case "$name"
  rm -rf "$tr"; cp -r "$TD" "$tr"
  [ -z "$pysed" ] || sed -i "$pysed" "$tr/src/ltx_trainer/config.py"
  sed -e "s#^\(  model_path:\).*#\1 \"$TMP/m/ltx-2.safetensors\"#" \
      -e "s#^\(  text_encoder_path:\).*#\1 \"$TMP/m/gemma\"#" \
      -e "s#^\(  preprocessed_data_root:\).*#\1 \"$TMP/data\"#" "$TD/configs/t2v_lora.yaml" >"$cfg"
  [ -z "$ysed" ] || sed -i "$ysed" "$cfg"
  PYOUT=""
  if [ "$HAVE_PY" = 1 ]; then
    local want; want=$(py_verdict "$tr" "$cfg")
    [ "$want" != noimport ] || [ -z "${5:-}" ] || want=$pyexpect
    check "[ '$pyexpect' = '$want' ]"
    VRAMFIT_NO_PYTHON=0 run check --config "$cfg" --trainer-dir "$tr"
    PYOUT=$out
    local pygot=pass; [ "$rc" -eq 0 ] || pygot=fail
    check "[ '$pygot' = '$want' ]"
    if [ "$pysed" = "${pysed#*Field(default=32, ge=1/}" ]; then # config.py parses
      expect_out "keys and values checked by the trainer's config class (LtxTrainerConfig) with python3 "
      expect_no_out "not checked:" # the class ran every validator
      check "[ -z \"\$(find '$tr' -name __pycache__)\" ]" # nothing written into the checkout
    fi
  fi
  run check --config "$cfg" --trainer-dir "$tr"
  local got=pass; [ "$rc" -eq 0 ] || got=fail
  check "[ $got = $expect ]"
  expect_out "keys and values checked statically"
}
expect_pyout() { [ "$HAVE_PY" = 0 ] || { printf '%s' "$PYOUT" | grep -qF -- "$1" && _ok || _bad "python run's stdout lacks: $1"; }; }

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

expect_pyout "src/ltx_trainer/config.py:"
expect_pyout "keys and values checked statically"

test_case "a field validator is never silent: not checked, naming it"
edit "model_path's validator" pass "" ""
expect_out "model.model_path: not checked: ModelSection.not_a_url (src/ltx_trainer/config.py:"

# --- the trainer's config class as the judge (python3 with pydantic 2) --------
FULLFLEX='s/^    def lora_needs_block(self) -> "LtxTrainerConfig":/    def full_needs_simple(self) -> "LtxTrainerConfig":\n        if self.model.training_mode == "full" and self.training_strategy.name == "flexible":\n            raise ValueError("full training with the flexible strategy is not supported")\n        return self\n\n    @model_validator(mode="after")\n&/'
edit "a model_validator(mode=\"after\") that raises on a combination: not checked statically, a failure by the class" \
  pass "$FULLFLEX" 's/^  training_mode: "lora"/  training_mode: "full"/' fail
expect_out "(config): not checked: LtxTrainerConfig.full_needs_simple (src/ltx_trainer/config.py:"
expect_pyout "(config): Value error, full training with the flexible strategy is not supported (pydantic: value_error)"
edit "the same validator on a combination it accepts" pass "$FULLFLEX" "" pass
THOUSANDS='s/^    enable_gradient_checkpointing: bool = False$/&\n\n    @field_validator("steps", mode="before")\n    @classmethod\n    def thousands(cls, v):\n        if isinstance(v, str) and v.endswith("k"):\n            return int(v[:-1]) * 1000\n        return v/'
edit "a field_validator(mode=\"before\") that converts a string is accepted" pass "$THOUSANDS" 's/^  steps: 2000/  steps: 2k/'
expect_out "optimization.steps: not checked: OptimSection.thousands (src/ltx_trainer/config.py:"
edit "the same validator on a string it cannot convert" pass "$THOUSANDS" 's/^  steps: 2000/  steps: lots/' fail
expect_pyout "optimization.steps: Input should be a valid integer, unable to parse string as an integer (pydantic: int_parsing)"
edit "an unknown key two levels down, through the strategy union" fail "" 's/^    latents_dir: "latents"/    latents_dri: "latents"/'
expect_pyout "training_strategy.video.latents_dri: Extra inputs are not permitted (pydantic: extra_forbidden at training_strategy.flexible.video.latents_dri)"
HEAVY='s/^from ltx_trainer.quant import QuantKind$/&\nimport torch\nfrom torch import nn\nimport diffusers.models.autoencoders as _ae\nfrom transformers import AutoModel\nfrom no_such_package.sub import Thing\n\n\nclass _Net(nn.Module):\n    dtype = torch.bfloat16\n\n    @torch.no_grad()\n    def f(self):\n        return Thing(AutoModel)/'
edit "heavy imports (torch, diffusers, transformers, a package not installed) are stubbed: the class still answers" \
  fail "$HEAVY" 's/^  steps: 2000/  steps: 1e3/' fail
expect_pyout "optimization.steps: Input should be a valid integer"

edit "a required key missing is named" fail "" '/^  preprocessed_data_root:/d'
expect_pyout "data.preprocessed_data_root: Field required (pydantic: missing)"

# the tests below use the last edit: data.preprocessed_data_root missing
test_case "with python3: --json says who answered; --no-python turns it off"
if [ "$HAVE_PY" = 1 ]; then
  VRAMFIT_NO_PYTHON=0 run check --config "$TMP/c.yaml" --trainer-dir "$TMP/tr" --json
  expect_json 'j["trainer"]["checked_by"] == "python" and j["trainer"]["checked_by_text"].startswith("checked by the trainer") and j["trainer"]["python_note"] == ""'
  VRAMFIT_NO_PYTHON=0 run check --config "$TMP/c.yaml" --trainer-dir "$TMP/tr" --json --no-python
  expect_json 'j["trainer"]["checked_by"] == "static" and j["trainer"]["python_note"] == "turned off (--no-python)"'
  test_case "the runner writes only its own temporary directory, and removes it"
  mkdir -p "$TMP/pytmp"
  TMPDIR="$TMP/pytmp" VRAMFIT_NO_PYTHON=0 run check --config "$TMP/c.yaml" --trainer-dir "$TMP/tr"
  expect_out "checked by the trainer's config class"
  check '[ -z "$(ls -A "$TMP/pytmp")" ] && [ -z "$(find "$TMP/tr" -newer "$TMP/c.yaml" -print -quit)" ]'
fi

test_case "no python3 on PATH: the static answer, with a note"
mkdir -p "$TMP/nopy"
rc=0 # vramfit alone runs with that PATH (run's own tools need the usual one)
PATH="$TMP/nopy" VRAMFIT_NO_PYTHON=0 "$VRAMFIT" check --config "$TMP/c.yaml" --trainer-dir "$TMP/tr" >"$TMP/out" 2>"$TMP/err" || rc=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
expect_out "keys and values checked statically (vramfit's reader of the schema) (python3: cannot run 'python3'"
expect_out "data.preprocessed_data_root: missing"
test_case "a python3 without pydantic 2: the static answer, naming why"
printf '#!/bin/sh\nprintf "VF-NOPYDANTIC\\tcannot import pydantic\\n"\nexit 5\n' >"$TMP/nopy/python-bare"
chmod +x "$TMP/nopy/python-bare"
VRAMFIT_PYTHON="$TMP/nopy/python-bare" VRAMFIT_NO_PYTHON=0 run check --config "$TMP/c.yaml" --trainer-dir "$TMP/tr" --json
expect_json 'j["trainer"]["checked_by"] == "static" and j["trainer"]["python_note"].endswith("exited 5: cannot import pydantic")'

[ "$HAVE_PY" = 1 ] || echo "note: no pydantic 2 with PyYAML in python3: static expectations only" >&2
finish
