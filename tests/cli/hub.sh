# hub.sh - end-to-end: models named by their Hub id (org/name[@revision])
# against a small Hub of our own on 127.0.0.1 (tests/helpers/mini-hub.py,
# started and stopped here): headers only by range requests (its request
# log proves it), vramfit's cache answering with the server gone, a
# generated Hugging Face cache under HF_HUB_OFFLINE=1 without a request,
# one line for each failure (gated, 404, 429, timeout, truncated, oversized,
# a range ignored, no network, no libcurl); forgiving model and GPU names.
# Nothing here reaches outside the machine.
. "$(dirname "$0")/lib.sh"
FX=$VF_SHARED_DIR/fixtures/models
HUB=$TMP/hubroot
export XDG_CACHE_HOME=$TMP/xdg HF_HOME=$TMP/hf HF_HUB_DISABLE_TELEMETRY=1
unset HF_HUB_CACHE HF_TOKEN HF_TOKEN_PATH HF_HUB_OFFLINE HF_ENDPOINT
mkdir -p "$HUB/acme" "$HF_HOME"

# the repositories: copies of the sharded fixture under names that choose
# the server's behaviour, and one whose header claims 200 MB
for r in tiny-llama cfg-only-llama partial-llama gated-llama slow-llama truncated-llama ratelimit-llama norange-llama; do
  mkdir -p "$HUB/acme/$r" && cp "$FX/small-llama-bf16-sharded"/* "$HUB/acme/$r/"
done
# a diffusers-style repository: model_index.json and component folders
mkdir -p "$HUB/acme/tiny-pipe/transformer" "$HUB/acme/tiny-pipe/text_encoder" "$HUB/acme/tiny-pipe/scheduler"
cp "$FX/small-llama-bf16-sharded"/* "$HUB/acme/tiny-pipe/transformer/"
cp "$FX/tiny-llama-bf16"/* "$HUB/acme/tiny-pipe/text_encoder/"
echo '{"_class_name": "S"}' >"$HUB/acme/tiny-pipe/scheduler/scheduler_config.json"
echo '{"_class_name": "TestPipeline", "transformer": ["diffusers", "X"], "text_encoder": ["transformers", "LlamaModel"], "scheduler": ["diffusers", "S"]}' \
  >"$HUB/acme/tiny-pipe/model_index.json"
# a GGUF repository: two quantizations of the fixture tiny llama
mkdir -p "$HUB/acme/tiny-GGUF"
for q in Q8_0 Q4_0; do
  python3 "$VF_SOURCE_DIR/tests/helpers/mk-gguf.py" "$HUB/acme/tiny-GGUF/tiny-$q.gguf" \
    --from-safetensors "$FX/tiny-llama-bf16/model.safetensors" \
    --config "$FX/tiny-llama-bf16/config.json" --types $q --vocab-strings >"$TMP/gguf-$q.json"
done
mkdir -p "$HUB/acme/big-header"
cp "$FX/tiny-llama-bf16/config.json" "$HUB/acme/big-header/"
python3 -c "
import struct,sys
open(sys.argv[1],'wb').write(struct.pack('<Q', 200_000_000) + b'{}' + b'\0' * 64)" \
  "$HUB/acme/big-header/model.safetensors"

# start the hub: it writes its port into a FIFO once listening
LOG=$TMP/hub.log
mkfifo "$TMP/port"
python3 "$VF_SOURCE_DIR/tests/helpers/mini-hub.py" "$HUB" "$TMP/port" "$LOG" &
HUB_PID=$!
trap 'kill $HUB_PID 2>/dev/null; rm -rf "$TMP"' EXIT
# (bounded: a server that dies before listening fails the test, not hangs it)
PORT=$(timeout 60 head -n 1 "$TMP/port" || true)
if [ -z "$PORT" ]; then
  echo "FAIL mini-hub.py did not start" >&2
  exit 1
fi
export HF_ENDPOINT=http://127.0.0.1:$PORT
requests() { [ -f "$LOG" ] && wc -l <"$LOG" || echo 0; }

test_case "inspect org/name from the Hub: the exact count"
run inspect acme/tiny-llama --json
expect_rc 0
expect_json 'j["format"] == "sharded" and j["files"] == 4 and j["tensors"] == 39 and j["params"] == 1840256 and j["bytes"] == 3680512'
expect_json 'j["hub"]["repo"] == "acme/tiny-llama" and j["hub"]["source"] == "hub" and len(j["hub"]["commit"]) == 40'
expect_json 'j["architecture"]["hidden"] == 128 and j["architecture"]["source"] == "config.json"'
expect_json 'j["path"] == "acme/tiny-llama"'

test_case "only headers were fetched: every .safetensors range within 8 + N"
check "python3 - '$LOG' '$FX/small-llama-bf16-sharded' <<'EOF'
import re, struct, sys, os
log, fx = sys.argv[1], sys.argv[2]
hdr = {f: struct.unpack('<Q', open(os.path.join(fx, f), 'rb').read(8))[0]
       for f in os.listdir(fx) if f.endswith('.safetensors')}
seen = {}
for line in open(log):
    m = re.match(r'GET (\S+) range=(\S+) auth=', line)
    path, rng = m.group(1), m.group(2)
    if not path.endswith('.safetensors'):
        continue
    name = path.rsplit('/', 1)[1]
    if rng == '-':
        sys.exit('no range: ' + line)
    a, b = map(int, re.match(r'bytes=(\d+)-(\d+)', rng).groups())
    if b > 8 + hdr[name] - 1:
        sys.exit('beyond the header: ' + line)
    seen.setdefault(name, set()).add((a, b))
ok = all(seen.get(f) == {(0, 7), (8, 8 + n - 1)} for f, n in hdr.items())
sys.exit(0 if ok and len(seen) == 4 else 'not every header: %r' % seen)
EOF"
check "grep -q '^GET /cdn/acme/tiny-llama/model-00001-of-00004.safetensors ' '$LOG'"

test_case "a diffusers repository: model_index.json and each component's headers"
run inspect acme/tiny-pipe --json
expect_rc 0
expect_json 'j["format"] == "diffusers" and j["params"] == 2059200 and j["hub"]["source"] == "hub"'
expect_json 'sorted((c["name"], c["params"]) for c in j["components"]) == [("text_encoder", 218944), ("transformer", 1840256)]'
check "! grep -E 'tiny-pipe.*safetensors range=-' '$LOG'"

test_case "a GGUF repository: one file by its tag (org/name:TAG), its header by ranges"
run inspect acme/tiny-GGUF
expect_rc 1
expect_err "acme/tiny-GGUF: 2 .gguf files (tiny-Q4_0.gguf, tiny-Q8_0.gguf); name one: acme/tiny-GGUF:TAG"
expect_err_lines 1
run inspect acme/tiny-GGUF:q4_0 --json
expect_rc 0
expect_json 'j["format"] == "gguf" and j["params"] == 218944 and j["hub"]["source"] == "hub" and j["hub"]["repo"] == "acme/tiny-GGUF"'
expect_json 'j["bytes"] == __import__("json").load(open("'"$TMP"'/gguf-Q4_0.json"))["bytes"]'
check "! grep -q 'tiny-Q8_0.gguf' '$LOG'"
check "! grep -E 'tiny-Q4_0.gguf range=-' '$LOG'"
HF_HUB_OFFLINE=1 run inspect acme/tiny-GGUF:Q4_0 --json
expect_rc 0
expect_json 'j["params"] == 218944 and j["hub"]["source"] == "vramfit-cache"'
run estimate acme/tiny-GGUF:Q4_0 --gpu rtx4090 --json
expect_rc 0
expect_json 'j["runtime"] == "llama.cpp" and j["params"] == 218944'
run inspect acme/tiny-GGUF:Q5_K
expect_rc 1
expect_err "no .gguf file with 'Q5_K' in its name"

test_case "a revision: the commit, and a branch that does not exist"
run inspect acme/tiny-llama --json
commit=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["hub"]["commit"])')
run inspect "acme/tiny-llama@$commit" --json
expect_rc 0
expect_json 'j["params"] == 1840256 and j["hub"]["revision"] == j["hub"]["commit"]'
run inspect acme/tiny-llama@nope
expect_rc 1
expect_err "not found"
expect_err "RevisionNotFound"
expect_err_lines 1

test_case "gated: one line naming the licence and HF_TOKEN; the token opens it"
run inspect acme/gated-llama
expect_rc 1
expect_err "acme/gated-llama"
expect_err "HTTP 401: gated or private repository: accept the licence on the model page"
expect_err "set HF_TOKEN"
expect_err_lines 1
HF_TOKEN=good-token run inspect acme/gated-llama --json
expect_rc 0
expect_json 'j["params"] == 1840256'
check "grep -q 'gated-llama/resolve/.* auth=yes' '$LOG'"

test_case "the token file huggingface_hub writes"
rm -rf "$XDG_CACHE_HOME"
printf 'good-token\n' >"$HF_HOME/token"
run inspect acme/gated-llama --json
expect_rc 0
expect_json 'j["params"] == 1840256'
rm -f "$HF_HOME/token"

test_case "missing repository: 404"
run inspect acme/no-such-repo
expect_rc 1
expect_err "acme/no-such-repo: model info: not found on http://127.0.0.1:$PORT (HTTP 404: RepoNotFound)"
expect_err_lines 1

test_case "rate limit: 429 with the retry time"
run inspect acme/ratelimit-llama
expect_rc 1
expect_err "rate limited"
expect_err "retry after 17 s"
expect_err_lines 1

test_case "a reply that never comes: timeout"
HF_HUB_DOWNLOAD_TIMEOUT=1 run inspect acme/slow-llama
expect_rc 1
expect_err "within 1 s (timeout"
expect_err_lines 1

test_case "a truncated header reply"
run inspect acme/truncated-llama
expect_rc 1
expect_err "truncated"
expect_err_lines 1

test_case "a server that ignores the range is never read past the header size"
run inspect acme/norange-llama
expect_rc 1
expect_err "vramfit reads headers only"
expect_err_lines 1

test_case "an oversized header: the local file's limit and words"
run inspect acme/big-header
expect_rc 1
expect_err "acme/big-header/model.safetensors: header length 200000000 exceeds the limit of 100000000 bytes"
expect_err_lines 1

test_case "failures leave nothing half-written in the cache"
check "! ls -d '$XDG_CACHE_HOME'/vramfit/hub/*/tmp.* 2>/dev/null | grep -q ."
check "[ ! -d '$XDG_CACHE_HOME/vramfit/hub/models--acme--big-header/snapshots' ]"

test_case "no libcurl: a clear line"
rm -rf "$XDG_CACHE_HOME"
VRAMFIT_LIBCURL=libcurl-absent.so.4 run inspect acme/tiny-llama
expect_rc 1
expect_err "fetching from the Hub needs libcurl"
expect_err_lines 1

test_case "a generated Hugging Face cache, HF_HUB_OFFLINE=1: no request"
HFC=$HF_HOME/hub/models--acme--cached
sha=0123456789abcdef0123456789abcdef01234567
mkdir -p "$HFC/blobs" "$HFC/refs" "$HFC/snapshots/$sha"
for f in config.json model.safetensors; do
  b=$(sha256sum "$FX/tiny-llama-bf16/$f" | cut -c1-64)
  cp "$FX/tiny-llama-bf16/$f" "$HFC/blobs/$b"
  ln -s "../../blobs/$b" "$HFC/snapshots/$sha/$f"
done
printf '%s' "$sha" >"$HFC/refs/main"
printf '%s' "$sha" >"$HFC/refs/v1.0"
before=$(requests)
HF_HUB_OFFLINE=1 run inspect acme/cached --json
expect_rc 0
expect_json 'j["format"] == "hf-dir" and j["params"] == 218944 and j["bytes"] == 437888'
expect_json 'j["hub"]["source"] == "hf-cache" and j["hub"]["commit"] == "0123456789abcdef0123456789abcdef01234567"'
HF_HUB_OFFLINE=1 run inspect acme/cached@v1.0 --json
expect_rc 0
expect_json 'j["params"] == 218944 and j["hub"]["revision"] == "v1.0"'
run inspect "acme/cached@$sha" --json
expect_rc 0
expect_json 'j["params"] == 218944'
check "[ $(requests) -eq $before ]"
HF_HUB_CACHE=$HF_HOME/hub HF_HOME=$TMP/elsewhere HF_HUB_OFFLINE=1 run inspect acme/cached --json
expect_rc 0
expect_json 'j["params"] == 218944'
HF_HUB_OFFLINE=1 run inspect acme/cached@v2.0
expect_rc 1
expect_err "acme/cached@v2.0: not in the Hugging Face cache"
expect_err "HF_HUB_OFFLINE"
expect_err_lines 1

test_case "an HF cache snapshot with configs only: the Hub for the headers; offline, the configs"
HFC2=$HF_HOME/hub/models--acme--cfg-only-llama
mkdir -p "$HFC2/refs" "$HFC2/snapshots/$sha"
cp "$FX/small-llama-bf16-sharded/config.json" "$HFC2/snapshots/$sha/"
printf '%s' "$sha" >"$HFC2/refs/main"
HF_HUB_OFFLINE=1 run inspect acme/cfg-only-llama --json
expect_rc 0
expect_json 'j["format"] == "config" and j["hub"]["source"] == "hf-cache" and j["files"] is None'
run inspect acme/cfg-only-llama --json
expect_rc 0
expect_json 'j["format"] == "sharded" and j["params"] == 1840256 and j["hub"]["source"] == "hub"'

test_case "a partial download in the HF cache (a shard missing): the Hub's headers; offline, the missing shard named"
HFC3=$HF_HOME/hub/models--acme--partial-llama
mkdir -p "$HFC3/refs" "$HFC3/snapshots/$sha"
cp "$FX/small-llama-bf16-sharded"/{config.json,model.safetensors.index.json,model-00001-of-00004.safetensors} "$HFC3/snapshots/$sha/"
printf '%s' "$sha" >"$HFC3/refs/main"
HF_HUB_OFFLINE=1 run inspect acme/partial-llama
expect_rc 1
expect_err "names shard model-00002-of-00004.safetensors, which does not exist"
expect_err_lines 1
run inspect acme/partial-llama --json
expect_rc 0
expect_json 'j["params"] == 1840256 and j["files"] == 4 and j["hub"]["source"] == "hub"'

test_case "fetched once, then answered from vramfit's cache with the server gone"
run inspect acme/tiny-llama --json
expect_rc 0
expect_json 'j["hub"]["source"] == "hub"'
kill "$HUB_PID"
wait "$HUB_PID" 2>/dev/null
run inspect acme/tiny-llama --json
expect_rc 0
expect_json 'j["params"] == 1840256 and j["files"] == 4 and j["hub"]["source"] == "vramfit-cache"'
HF_HUB_OFFLINE=1 run inspect acme/tiny-llama --json
expect_rc 0
expect_json 'j["params"] == 1840256'
run estimate acme/tiny-llama --gpu rtx4090 --json
expect_rc 0

test_case "no network while not offline: one line"
run inspect acme/other
expect_rc 1
expect_err "acme/other: cannot reach http://127.0.0.1:$PORT"
expect_err "HF_HUB_OFFLINE=1"
expect_err_lines 1

test_case "catalog models by their Hub id and spellings"
for name in Llama-3.1-8B llama-3.1-8b meta-llama/Llama-3.1-8B "Llama 3.1 8B"; do
  run inspect "$name" --json
  expect_rc 0
  expect_json 'j["id"] == "llama3.1-8b" and j["params"] == 8030261248'
done
run estimate Llama-3.1-8B --mode lora --gpu rtx4090 --json
expect_rc 0
run inspect lama-3.1-8b
expect_rc 1
expect_err "did you mean llama3.1-8b?"
expect_err_lines 1

test_case "GPUs by their marketing names"
for g in rtx4090 "RTX 4090" "NVIDIA GeForce RTX 4090" rtx-4090; do
  run estimate llama3.1-8b --mode lora --gpu "$g" --json
  expect_rc 0
  expect_out '"rtx-4090"'
done
run estimate llama3.1-8b --mode lora --gpu "H100 SXM" --json
expect_rc 0
expect_out '"h100-80gb"'
run estimate llama3.1-8b --gpu rtx-4009
expect_rc 2
expect_err "did you mean rtx-4090?"
run estimate llama3.1-8b --gpu a100
expect_rc 2
expect_err "did you mean a100-40gb, a100-pcie-40gb, a100-80gb, a100-pcie-80gb?"

finish
