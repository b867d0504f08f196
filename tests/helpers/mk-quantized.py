# mk-quantized.py SRC_DIR OUT_DIR METHOD - write a quantized checkpoint
# (tests: quantization_config): SRC_DIR's tensors (a model folder, one file
# or sharded) with every attention and MLP linear weight stored as METHOD
# stores it, the rest in F16, tensor data zeros; config.json with its
# quantization_config. Prints {"params", "quantized", "quantized_bytes"}.
#   gptq  qweight int32 [in*4/32, out], qzeros int32 [in/g, out*4/32],
#         scales f16 [in/g, out], g_idx int32 [in]          (4 bits, g = 8)
#   awq   qweight int32 [in, out*4/32], qzeros, scales        (4 bits, g = 8)
#   bnb4  weight uint8 [out*in/2, 1], .absmax f32 [out*in/64],
#         .quant_map f32 [16], .quant_state.bitsandbytes__nf4 uint8 [64]
#   bnb8  weight int8 [out, in], SCB f32 [out], weight_format uint8 []
#   fp8   weight F8_E4M3 [out, in], weight_scale f32 [], input_scale f32 []
import glob
import json
import os
import struct
import sys

src, out, method = sys.argv[1:4]
tensors = {}
for f in sorted(glob.glob(os.path.join(src, '*.safetensors'))):
    raw = open(f, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    for k, v in json.loads(raw[8:8 + n]).items():
        if k != '__metadata__':
            tensors[k] = v['shape']
cfg = json.load(open(os.path.join(src, 'config.json')))
SIZE = {'F16': 2, 'F32': 4, 'I32': 4, 'U8': 1, 'I8': 1, 'F8_E4M3': 1}
LINEAR = ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj')
G = 8
outt = []  # (name, dtype, shape)
summary = {'params': 0, 'quantized': 0, 'quantized_bytes': 0}


def add(name, dt, shape, q=False):
    outt.append((name, dt, shape))
    if q:
        n = 1
        for d in shape:
            n *= d
        summary['quantized_bytes'] += n * SIZE[dt]


for name, shape in tensors.items():
    numel = 1
    for d in shape:
        numel *= d
    summary['params'] += numel
    base = name[:-len('.weight')]
    if not (name.endswith('.weight') and base.split('.')[-1] in LINEAR):
        add(name, 'F16', shape)
        continue
    summary['quantized'] += numel
    o, i = shape
    if method == 'gptq':
        add(base + '.qweight', 'I32', [i * 4 // 32, o], True)
        add(base + '.qzeros', 'I32', [i // G, o * 4 // 32], True)
        add(base + '.scales', 'F16', [i // G, o], True)
        add(base + '.g_idx', 'I32', [i], True)
    elif method == 'awq':
        add(base + '.qweight', 'I32', [i, o * 4 // 32], True)
        add(base + '.qzeros', 'I32', [i // G, o * 4 // 32], True)
        add(base + '.scales', 'F16', [i // G, o], True)
    elif method == 'bnb4':
        add(name, 'U8', [o * i // 2, 1], True)
        add(name + '.absmax', 'F32', [o * i // 64], True)
        add(name + '.quant_map', 'F32', [16], True)
        add(name + '.quant_state.bitsandbytes__nf4', 'U8', [64], True)
    elif method == 'bnb8':
        add(name, 'I8', [o, i], True)
        add(base + '.SCB', 'F32', [o], True)
        add(base + '.weight_format', 'U8', [], True)
    elif method == 'fp8':
        add(name, 'F8_E4M3', [o, i], True)
        add(base + '.weight_scale', 'F32', [], True)
        add(base + '.input_scale', 'F32', [], True)

hdr = {}
off = 0
for name, dt, shape in outt:
    n = 1
    for d in shape:
        n *= d
    hdr[name] = {'dtype': dt, 'shape': shape, 'data_offsets': [off, off + n * SIZE[dt]]}
    off += n * SIZE[dt]
b = json.dumps(hdr).encode()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, 'model.safetensors'), 'wb') as f:
    f.write(struct.pack('<Q', len(b)) + b)
    f.truncate(8 + len(b) + off)
cfg['quantization_config'] = {
    'gptq': {'quant_method': 'gptq', 'bits': 4, 'group_size': G, 'desc_act': False},
    'awq': {'quant_method': 'awq', 'bits': 4, 'group_size': G, 'version': 'gemm'},
    'bnb4': {'quant_method': 'bitsandbytes', 'load_in_4bit': True,
             'bnb_4bit_quant_type': 'nf4', 'bnb_4bit_compute_dtype': 'bfloat16'},
    'bnb8': {'quant_method': 'bitsandbytes', 'load_in_8bit': True},
    'fp8': {'quant_method': 'fp8', 'activation_scheme': 'dynamic'},
    'hqq': {'quant_method': 'hqq', 'nbits': 4},
}[method if method in ('gptq', 'awq', 'bnb4', 'bnb8', 'fp8') else 'hqq']
json.dump(cfg, open(os.path.join(out, 'config.json'), 'w'), indent=1)
print(json.dumps(summary))
