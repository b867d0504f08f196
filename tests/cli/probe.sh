#!/usr/bin/env bash
# probe.sh - `vramfit probe` and `vramfit gpus` end to end: the acceptance
# cases of issue 2 (H200 fixture through the nvidia-smi stand-in, simulated
# GPUs and their tiers, the fake NVML, hostile nvidia-smi output).
. "$(dirname "$0")/lib.sh"
SMI="$VF_SOURCE_DIR/tests/helpers/fake-nvidia-smi"
NVML="$VF_BUILD_DIR/helpers/libfakenvml.so"
NVML1="$VF_BUILD_DIR/helpers/libfakenvmlv1.so"
H200="csv:$VF_SHARED_DIR/fixtures/nvidia-smi/h200-02.txt"
export XDG_CONFIG_HOME="$TMP/config"   # the embedded catalog, whatever is in ~/.config
unset VRAMFIT_DATA_DIR CUDA_VISIBLE_DEVICES VF_FAKE_NVML VF_FAKE_SMI || true
export VRAMFIT_NVIDIA_SMI="$SMI"
EN=$'\xe2\x80\x93'  # en dash

test_case "H200 fixture behind VRAMFIT_NVIDIA_SMI, NVML off"
VRAMFIT_NVML_LIB=off VF_FAKE_SMI="$H200" run probe --json
expect_rc 0
expect_json 'j["source"] == "nvidia-smi"'
expect_json 'len(j["gpus"]) == 1'
expect_json 'j["gpus"][0] == {"index": 0, "uuid": "GPU-a7c75cc4-551d-aa3d-7f71-5c1970c087af", "name": "NVIDIA H200", "catalog_id": "h200", "memory_total_mib": 143771, "memory_used_mib": 0, "memory_free_mib": 143156, "nominal_gb": 141, "compute_capability": "9.0"}'
expect_json 'j["driver_version"] == "580.159.04"'
expect_json 'j["tier"]["name"] == "80GB+ tier" and j["tier"]["per_gpu_gb"] == 141 and j["tier"]["gpu_count"] == 1'
expect_json 'j["tier"]["gated"] is False and j["tier"]["config"] == "t2v_lora.yaml" and isinstance(j["tier"]["note"], str)'
VRAMFIT_NVML_LIB=off VF_FAKE_SMI="$H200" run probe
expect_rc 0
expect_out_re '^0 +NVIDIA H200 +h200 +143771 MiB +141 GB +143156 MiB +9\.0$'
expect_out 'Source: nvidia-smi, driver 580.159.04.'
expect_out '80GB+ tier: the GPU, NVIDIA H200 (143771 MiB), counts as 141 GB (80 GB and up); start from t2v_lora.yaml.'

test_case "--gpu rtx-5090"
run probe --gpu rtx-5090 --json
expect_rc 0
expect_json 'j["source"] == "simulated" and j["gpus"][0]["memory_total_mib"] == 32607'
expect_json 'j["tier"]["name"] == "32GB tier" and j["tier"]["config"] == "t2v_lora_low_vram.yaml"'
run probe --gpu rtx-5090
expect_out '32GB tier: the GPU, NVIDIA GeForce RTX 5090 (32607 MiB), counts as 32 GB'

test_case "--gpu rtx-4090 is gated"
run probe --gpu rtx-4090 --json
expect_rc 0
expect_json 'j["tier"]["gated"] is True and j["tier"]["per_gpu_gb"] == 24'
expect_json '"This GPU has 24 GB" in j["tier"]["gate_message"] and "(a) abort" in j["tier"]["gate_message"] and "(b) try anyway" in j["tier"]["gate_message"]'
run probe --gpu rtx-4090
expect_rc 0
expect_out 'This GPU has 24 GB; the LTX-2 trainer requires a minimum of 32 GB'
expect_out 'packages/ltx-trainer/docs/quick-start.md'
expect_out '(a) abort'
expect_out '(b) try anyway with the low-VRAM config (t2v_lora_low_vram.yaml)'
expect_out '--accept-risk'
expect_no_out 'GB tier:'

test_case "--gpu h100-80gb --gpu rtx-6000-ada"
run probe --gpu h100-80gb --gpu rtx-6000-ada --json
expect_rc 0
expect_json 'j["tier"]["name"] == "40'"$EN"'60GB tier" and j["tier"]["per_gpu_gb"] == 48 and j["tier"]["gpu_count"] == 2'
expect_json '[g["catalog_id"] for g in j["gpus"]] == ["h100-80gb", "rtx-6000-ada"]'
run probe --gpu h100-80gb --gpu rtx-6000-ada
expect_out "40${EN}60GB tier: the smallest of the 2 GPUs, NVIDIA RTX 6000 Ada Generation (49140 MiB)"

test_case "--gpu mycard=65536: gap rule"
run probe --gpu mycard=65536 --json
expect_rc 0
expect_json 'j["tier"]["name"] == "40'"$EN"'60GB tier" and j["tier"]["gap"] is True and j["tier"]["per_gpu_gb"] == 64'
expect_json '"autotune decides the rest" in j["tier"]["note"] and "64 GB lies between" in j["tier"]["note"]'
expect_json 'j["gpus"][0]["name"] == "mycard" and j["gpus"][0]["catalog_id"] is None and j["gpus"][0]["uuid"] is None and j["gpus"][0]["compute_capability"] is None'
run probe --gpu mycard=65536
expect_out 'between tiers, so it takes the lower one'
expect_out 'autotune decides the rest'

test_case "--gpu h100-80gb:8"
run probe --gpu h100-80gb:8 --json
expect_rc 0
expect_json 'len(j["gpus"]) == 8 and [g["index"] for g in j["gpus"]] == list(range(8))'
expect_json 'j["tier"]["name"] == "80GB+ tier" and j["tier"]["gpu_count"] == 8'
run probe --gpu h100-80gb:8
expect_out '80GB+ tier: the smallest of the 8 GPUs'

test_case "--gpu forms and mistakes"
run probe --gpu=h200 --mode i2v --json
expect_rc 0
expect_json 'j["tier"]["config"] == "i2v_lora.yaml" and j["tier"]["mode"] == "i2v"'
run probe --gpu nosuch
expect_rc 2
expect_err "vramfit: error: --gpu nosuch: unknown GPU id 'nosuch'"
expect_err_lines 1
run probe --gpu h100
expect_rc 2
expect_err 'did you mean h100-'
run probe --gpu h100-80gb:0
expect_rc 2
run probe --gpu card=lots
expect_rc 2
run probe --gpu
expect_rc 2
run probe --bogus
expect_rc 2
run probe --gpu h200 --mode 'v2v/../x'
expect_rc 2
expect_err "invalid mode name 'v2v/../x'"
run probe --gpu h200 --trainer nosuch
expect_rc 1
expect_err "trainer profile 'nosuch' has no tiers part"
expect_err_lines 1
check '[ -z "$out" ]'

test_case "no GPU"
VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi run probe --json
expect_rc 0
expect_json 'j["source"] == "none" and j["gpus"] == [] and j["tier"] is None and j["driver_version"] is None'
VRAMFIT_NVML_LIB=off VRAMFIT_NVIDIA_SMI=/nonexistent/nvidia-smi run probe
expect_rc 0
expect_out 'No NVIDIA GPU found.'
expect_out '--gpu SPEC'
VRAMFIT_NVML_LIB=off VF_FAKE_SMI=no-driver run probe
expect_rc 0
expect_out 'driver is not loaded'
VRAMFIT_NVML_LIB=off VF_FAKE_SMI=no-devices run probe --json
expect_rc 0
expect_json 'j["gpus"] == [] and any("no NVIDIA GPU" in n for n in j["notes"])'

test_case "CUDA_VISIBLE_DEVICES"
CUDA_VISIBLE_DEVICES=2,0 VRAMFIT_NVML_LIB=off VF_FAKE_SMI="$H200:4" run probe --json
expect_rc 0
expect_json '[g["index"] for g in j["gpus"]] == [2, 0]'
expect_json 'any("shows 2 of 4 GPUs" in n for n in j["notes"])'
CUDA_VISIBLE_DEVICES=1,bogus,2 VRAMFIT_NVML_LIB=off VF_FAKE_SMI="$H200:4" run probe --json
expect_json '[g["index"] for g in j["gpus"]] == [1]'
CUDA_VISIBLE_DEVICES= VRAMFIT_NVML_LIB=off VF_FAKE_SMI="$H200:4" run probe --json
expect_rc 0
expect_json 'j["gpus"] == [] and j["source"] == "none"'

test_case "fake NVML"
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_SMI=exit:9 run probe --json
expect_rc 0
expect_json 'j["source"] == "nvml" and j["gpus"][0]["catalog_id"] == "h200" and j["driver_version"] == "580.159.04"'
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_NVML='gpus=8;dev=NVIDIA H100 80GB HBM3:81559' run probe --json
expect_json 'len(j["gpus"]) == 8 and j["tier"]["name"] == "80GB+ tier" and j["gpus"][0]["catalog_id"] == "h100-80gb"'
VRAMFIT_NVML_LIB="$NVML1" VF_FAKE_NVML='dev=NVIDIA GeForce RTX 5090:32607' run probe --json
expect_json 'j["source"] == "nvml" and j["gpus"][0]["uuid"] is None and j["gpus"][0]["compute_capability"] is None and j["tier"]["name"] == "32GB tier"'
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_NVML='gpus=0' run probe --json
expect_json 'j["gpus"] == [] and j["source"] == "none"'
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_NVML='gpus=2;fail=nvmlDeviceGetHandleByIndex_v2@0:4' run probe
expect_rc 0
expect_out 'GPU 0: skipped, no permission'
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_NVML='fail=nvmlInit_v2:18' VF_FAKE_SMI=mismatch run probe
expect_rc 1
expect_err 'version mismatch'
expect_err_lines 1
VRAMFIT_NVML_LIB="$NVML" VF_FAKE_NVML='fail=nvmlInit_v2:9' VF_FAKE_SMI=no-driver run probe --json
expect_rc 0
expect_json 'j["gpus"] == [] and any("driver is not loaded" in n for n in j["notes"])'
VRAMFIT_NVML_LIB=/nonexistent/libnvidia-ml.so.1 VF_FAKE_SMI="$H200" run probe --json
expect_json 'j["source"] == "nvidia-smi"'

test_case "hostile nvidia-smi output: one line, no crash, no hang"
for mode in empty blank truncated garbage bigline exit:3 mismatch nvml-unknown; do
  VRAMFIT_NVML_LIB=off VF_FAKE_SMI=$mode run probe
  T_NAME="hostile $mode"
  expect_rc 1
  expect_err 'vramfit: error: '
  expect_err_lines 1
done
T_NAME="hostile hang"
# the message proves the 1 s timeout fired and the kill worked (a hang would
# be stopped by ctest's timeout); no wall-time assertion (busy machines)
VRAMFIT_SMI_TIMEOUT=1 VRAMFIT_NVML_LIB=off VF_FAKE_SMI=hang run probe
expect_rc 1
expect_err 'did not finish within 1 s and was killed'
expect_err_lines 1

test_case "vramfit gpus"
run gpus --json
expect_rc 0
expect_json 'len(j["gpus"]) >= 30 and "gpus.json" in j["source"]'
expect_json 'all(g["memory_mib"] > 0 and g["nominal_gb"] > 0 and g["fp16_tflops"] > 0 and g["bandwidth_gbs"] > 0 for g in j["gpus"])'
expect_json '{"h100-80gb", "h200", "rtx-5090", "rtx-4090", "rtx-a6000", "rtx-6000-ada", "a100-40gb", "a100-80gb", "l40s", "b200", "v100-32gb", "t4"} <= {g["id"] for g in j["gpus"]}'
expect_json 'next(g for g in j["gpus"] if g["id"] == "v100-16gb")["bf16_tflops"] is None'
run gpus
expect_rc 0
expect_out_re '^h100-80gb \* +NVIDIA H100 80GB HBM3'
expect_out 'MEM GB/s'
expect_out_re '^h200 \* .* 4800 +900 NVLink +9\.0 +\$3\.59$'
run gpus --common --json
expect_json 'set(g["id"] for g in j["gpus"]) == {"rtx-3090", "rtx-4090", "rtx-5090", "l40s", "a100-40gb", "a100-80gb", "h100-80gb", "h200"}'
run gpus --bogus
expect_rc 2

test_case "catalog override"
mkdir -p "$TMP/config/vramfit"
cat >"$TMP/config/vramfit/gpus.json" <<'JSON'
{"gpus": [{"id": "my-gpu", "name": "My GPU", "memory_mib": 98304, "nominal_gb": 96,
           "fp16_tflops": 500, "price_usd_hour": 1.25}]}
JSON
run gpus --json
expect_json 'j["gpus"][0]["id"] == "my-gpu" and j["gpus"][0]["price_usd_hour"] == 1.25 and j["source"].endswith("vramfit/gpus.json")'
run probe --gpu my-gpu --json
expect_json 'j["tier"]["name"] == "80GB+ tier" and j["tier"]["per_gpu_gb"] == 96'
echo '{"gpus": [{"id": "x"}]}' >"$TMP/config/vramfit/gpus.json"
run gpus
expect_rc 1
expect_err 'gpus.json: gpus[0] (x): field name: expected a string'
expect_err_lines 1
rm -rf "$TMP/config/vramfit"

test_case "probe --slurm: site-chosen gres types, --gres-map, --exact (stand-in scontrol and srun on PATH)"
mkdir -p "$TMP/slurmbin"
cat >"$TMP/slurmbin/scontrol" <<'SH'
#!/bin/sh
echo "NodeName=g1 CPUTot=64 Gres=gpu:h100:2(S:0-1) Partitions=train RealMemory=512000 State=IDLE"
echo "NodeName=g2 CPUTot=32 Gres=gpu:gpu80:4 Partitions=odd RealMemory=256000 State=IDLE"
echo "NodeName=g3 CPUTot=32 Gres=gpu:a100_80gb:4 Partitions=amp RealMemory=256000 State=IDLE"
echo "NodeName=g4 CPUTot=16 Gres=gpu:RTX3090:2 Partitions=small RealMemory=64000 State=IDLE"
echo "NodeName=g5 CPUTot=16 Gres=gpu:h200:2 Partitions=mixed RealMemory=64000 State=IDLE"
echo "NodeName=g6 CPUTot=16 Gres=gpu:rtx_3090:8 Partitions=mixed RealMemory=64000 State=IDLE"
SH
export SRUN_LOG="$TMP/srun.log"
cat >"$TMP/slurmbin/srun" <<SH
#!/bin/sh
echo "\$*" >>'$SRUN_LOG'
SH
cat >>"$TMP/slurmbin/srun" <<'SH'
case "$1" in
  --partition=odd|--partition=mixed) echo "NVIDIA H200, 143771 MiB" ;;
  *) echo "srun: error: Unable to allocate resources" >&2; exit 1 ;;
esac
SH
chmod +x "$TMP/slurmbin/scontrol" "$TMP/slurmbin/srun"
PATH="$TMP/slurmbin:$PATH" run probe --slurm
expect_rc 0
expect_out_re '^train +1 +2 h100 +80 GiB +500 GiB +80GB\+ tier$'
expect_out_re '^amp +1 +4 a100_80gb +80 GiB .*80GB\+ tier$'
expect_out_re '^small +1 +2 RTX3090 +24 GiB '
expect_out "partition odd: gres type 'gpu80' names no GPU of the catalog"
expect_out_re '^mixed +2 +2 rtx_3090 +24 GiB '
PATH="$TMP/slurmbin:$PATH" run probe --slurm --json
expect_json '[p["tier"] for p in j["partitions"][:4]] == ["80GB+ tier", None, "80GB+ tier", j["partitions"][3]["tier"]]'
# nodes of several types: the smallest GPU decides, not the node with the fewest GPUs
expect_json 'j["partitions"][4]["name"] == "mixed" and j["partitions"][4]["gpu_catalog_id"] == "rtx-3090" and j["partitions"][4]["tier"] != "80GB+ tier"'
expect_json 'any("partition mixed: its nodes have several GPU types (h200,rtx_3090); the tier is that of the smallest GPU" in n for n in j["notes"])'
expect_json 'j["partitions"][0]["gpu_catalog_id"] == "h100-80gb" and j["partitions"][0]["gpu_memory_mib"] == 81559'
expect_json 'j["partitions"][1]["gpu_catalog_id"] is None and j["partitions"][1]["gpu_type_source"] is None'
expect_json 'j["partitions"][3]["gpu_catalog_id"] == "rtx-3090"'
expect_json 'any("gpu80" in n and "--gres-map" in n for n in j["notes"])'
PATH="$TMP/slurmbin:$PATH" run probe --slurm --json --gres-map GPU80=h100-80gb
expect_json 'j["partitions"][1]["gpu_catalog_id"] == "h100-80gb" and j["partitions"][1]["gpu_type_source"] == "gres-map" and j["partitions"][1]["tier"] == "80GB+ tier"'
expect_json 'not any("gpu80" in n for n in j["notes"])'
[ ! -e "$SRUN_LOG" ] && _ok || _bad "srun ran without --exact"
PATH="$TMP/slurmbin:$PATH" run probe --slurm --json --exact
expect_rc 0
expect_json 'j["partitions"][4]["gpu_catalog_id"] == "rtx-3090" and any("partition mixed: --exact: the node srun reached has NVIDIA H200 (143771 MiB), but its gres type rtx_3090 is a smaller GPU" in n for n in j["notes"])'
expect_json 'j["partitions"][1]["gpu_type_source"] == "srun nvidia-smi" and j["partitions"][1]["gpu_memory_mib"] == 143771 and j["partitions"][1]["gpu_catalog_id"] == "h200"'
expect_json 'j["partitions"][0]["gpu_type_source"] == "catalog name" and any("partition train: --exact" in n and "Unable to allocate" in n for n in j["notes"])'
PATH="$TMP/slurmbin:$PATH" run probe --slurm --exact
expect_out_re '^mixed +2 +2 rtx_3090 +24 GiB '
grep -q -- '--partition=odd .*--gres=gpu:1 .*nvidia-smi --query-gpu=name,memory.total --format=csv,noheader' "$SRUN_LOG" && _ok || _bad "srun was not asked for one GPU of odd"
run probe --gres-map gpu80=h100-80gb
expect_rc 2
expect_err '--gres-map: only with --slurm'
PATH="$TMP/slurmbin:$PATH" run probe --slurm --gres-map gpu80=h100
expect_rc 2
expect_err "--gres-map 'gpu80=h100': 'h100' is not a GPU id of the catalog"
expect_err_lines 1
unset SRUN_LOG

test_case "help"
run probe --help
expect_rc 0
expect_out 'usage: vramfit probe'
run help gpus
expect_out 'usage: vramfit gpus'

test_case "--mode NAME: probe names its config file without a checkout to check it, and says so"
run probe --gpu h200 --mode x2v --json; expect_rc 0
expect_json 'j["tier"]["config"] == "x2v_lora.yaml" and "mode x2v not checked here" in j["tier"]["note"]'
run probe --gpu h200 --mode x2v; expect_rc 0
expect_out "mode x2v not checked here"
run probe --gpu h200 --json; expect_rc 0
expect_json '"not checked" not in j["tier"]["note"]'

test_case "an nvidia-smi row reading 0 MiB of memory is not the catalog's 141 GB card: no tier, said so"
sed 's/143771 MiB, 0 MiB, 143156 MiB/0 MiB, 0 MiB, 0 MiB/' "$VF_SHARED_DIR/fixtures/nvidia-smi/h200-02.txt" >"$TMP/smi-zero.txt"
VRAMFIT_NVML_LIB=off VF_FAKE_SMI="csv:$TMP/smi-zero.txt" run probe
expect_rc 1
expect_err "GPU 0 (NVIDIA H200): memory size unknown, so no tier can be decided"
expect_no_out "141 GB"

finish
