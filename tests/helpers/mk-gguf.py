# mk-gguf.py OUT [options] - write a GGUF v3 file (tests: vramfit's GGUF
# reader), tensor data as zeros (a sparse file: large models cost no disk),
# and print what it wrote as JSON: {"params", "bytes", "types": {name:
# [params, bytes]}, "header_bytes"}.
#   --from-safetensors FILE --config CONFIG.json
#       a llama-family checkpoint's tensors under llama.cpp's names and
#       shapes (HF [out, in] -> ggml [in, out]), its hyper-parameters as
#       llama.* keys
#   --llama H,L,HEADS,KV,FFN,VOCAB,TIED   the same from sizes alone
#   --tensors NAME:D0xD1,...  these tensors instead of the llama layout
#   --types Q8_0,Q4_0,...   2-D weights cycle through these where their rows
#       are a whole number of blocks (else F16); norms stay F32
#   --vocab-strings         write tokenizer.ggml.tokens (one string a token)
#   --alignment N           general.alignment
#   --bad KIND              corrupt one thing: offset, type, dims, dup-name,
#                           dup-key, truncate, removed-type, bool, version1
import json
import struct
import sys

# ggml type: (id, elements per block, bytes per block) - from ggml's block
# structs (ggml-common.h)
GGML = {
    'F32': (0, 1, 4), 'F16': (1, 1, 2), 'Q4_0': (2, 32, 18), 'Q4_1': (3, 32, 20),
    'Q5_0': (6, 32, 22), 'Q5_1': (7, 32, 24), 'Q8_0': (8, 32, 34), 'Q8_1': (9, 32, 36),
    'Q2_K': (10, 256, 84), 'Q3_K': (11, 256, 110), 'Q4_K': (12, 256, 144),
    'Q5_K': (13, 256, 176), 'Q6_K': (14, 256, 210), 'Q8_K': (15, 256, 292),
    'IQ2_XXS': (16, 256, 66), 'IQ2_XS': (17, 256, 74), 'IQ3_XXS': (18, 256, 98),
    'IQ1_S': (19, 256, 50), 'IQ4_NL': (20, 32, 18), 'IQ3_S': (21, 256, 110),
    'IQ2_S': (22, 256, 82), 'IQ4_XS': (23, 256, 136), 'I8': (24, 1, 1), 'I16': (25, 1, 2),
    'I32': (26, 1, 4), 'I64': (27, 1, 8), 'F64': (28, 1, 8), 'IQ1_M': (29, 256, 56),
    'BF16': (30, 1, 2), 'TQ1_0': (34, 256, 54), 'TQ2_0': (35, 256, 66),
    'MXFP4': (39, 32, 17), 'NVFP4': (40, 64, 36), 'Q1_0': (41, 128, 18),
}

args = sys.argv[1:]
out = args.pop(0)
opt = {}
while args:
    k = args.pop(0)
    opt[k] = True if k in ('--vocab-strings',) else args.pop(0)

HF_TO_GGUF = [
    ('model.embed_tokens.weight', 'token_embd.weight'),
    ('model.norm.weight', 'output_norm.weight'),
    ('lm_head.weight', 'output.weight'),
]
LAYER = {
    'input_layernorm.weight': 'attn_norm.weight',
    'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.k_proj.weight': 'attn_k.weight',
    'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.o_proj.weight': 'attn_output.weight',
    'post_attention_layernorm.weight': 'ffn_norm.weight',
    'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight',
    'mlp.down_proj.weight': 'ffn_down.weight',
}


def gguf_name(hf):
    for a, b in HF_TO_GGUF:
        if hf == a:
            return b
    p = hf.split('.')
    if hf.startswith('model.layers.'):
        return 'blk.%s.%s' % (p[2], LAYER['.'.join(p[3:])])
    raise SystemExit('no llama.cpp name for ' + hf)


tensors = []  # (name, ggml dims)
if '--tensors' in opt:
    H, L, heads, kv, ffn, vocab = 0, 0, 0, 0, 0, 0
    ctx = 0
    for spec in opt['--tensors'].split(','):
        name, dims = spec.split(':')
        tensors.append((name, [int(x) for x in dims.split('x')]))
elif '--from-safetensors' in opt:
    raw = open(opt['--from-safetensors'], 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    for k, v in hdr.items():
        if k != '__metadata__':
            tensors.append((gguf_name(k), list(reversed(v['shape']))))
    cfg = json.load(open(opt['--config']))
    H, L = cfg['hidden_size'], cfg['num_hidden_layers']
    heads, kv = cfg['num_attention_heads'], cfg.get('num_key_value_heads', cfg['num_attention_heads'])
    ffn, vocab = cfg['intermediate_size'], cfg['vocab_size']
    ctx = cfg.get('max_position_embeddings', 2048)
else:
    H, L, heads, kv, ffn, vocab, tied = [int(x) for x in opt['--llama'].split(',')]
    ctx = 131072
    hd = H // heads
    tensors.append(('token_embd.weight', [H, vocab]))
    for i in range(L):
        b = 'blk.%d.' % i
        tensors += [(b + 'attn_norm.weight', [H]), (b + 'attn_q.weight', [H, heads * hd]),
                    (b + 'attn_k.weight', [H, kv * hd]), (b + 'attn_v.weight', [H, kv * hd]),
                    (b + 'attn_output.weight', [heads * hd, H]), (b + 'ffn_norm.weight', [H]),
                    (b + 'ffn_gate.weight', [H, ffn]), (b + 'ffn_up.weight', [H, ffn]),
                    (b + 'ffn_down.weight', [ffn, H])]
    tensors.append(('output_norm.weight', [H]))
    if not tied:
        tensors.append(('output.weight', [H, vocab]))

cycle = opt.get('--types', 'Q8_0').split(',')
typed = []
k = 0
for name, dims in tensors:
    if len(dims) == 1:
        t = 'F32'
    else:
        t = cycle[k % len(cycle)]
        k += 1
        if dims[0] % GGML[t][1]:
            t = 'F16'
    typed.append([name, dims, t])

bad = opt.get('--bad')
align = int(opt.get('--alignment', 32))


def s(x):
    b = x.encode()
    return struct.pack('<Q', len(b)) + b


def kv_u32(k, v): return s(k) + struct.pack('<II', 4, v)
def kv_f32(k, v): return s(k) + struct.pack('<If', 6, v)
def kv_str(k, v): return s(k) + struct.pack('<I', 8) + s(v)


kvs = [kv_str('general.architecture', 'llama'), kv_str('general.name', 'tiny llama'),
       kv_u32('llama.block_count', L), kv_u32('llama.context_length', ctx),
       kv_u32('llama.embedding_length', H), kv_u32('llama.feed_forward_length', ffn),
       kv_u32('llama.attention.head_count', heads), kv_u32('llama.attention.head_count_kv', kv),
       kv_f32('llama.rope.freq_base', 10000.0),
       kv_f32('llama.attention.layer_norm_rms_epsilon', 1e-5),
       kv_str('tokenizer.ggml.model', 'llama'), kv_u32('general.quantization_version', 2)]
if '--alignment' in opt:
    kvs.append(kv_u32('general.alignment', align))
if '--vocab-strings' in opt:
    kvs.append(s('tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, vocab) +
               b''.join(s('t%d' % i) for i in range(vocab)))
    kvs.append(s('tokenizer.ggml.scores') + struct.pack('<IIQ', 9, 6, vocab) + b'\0' * 4 * vocab)
if bad == 'dup-key':
    kvs.append(kv_u32('llama.block_count', L))
if bad == 'bool':
    kvs.append(s('general.flag') + struct.pack('<IB', 7, 2))
if bad == 'dup-name':
    typed[1][0] = typed[0][0]
if bad == 'type':
    typed[0][2] = 'X'
if bad == 'removed-type':
    typed[0][2] = 'R'

infos = b''
off = 0
summary = {'params': 0, 'bytes': 0, 'types': {}}
for i, (name, dims, t) in enumerate(typed):
    tid, blk, bb = GGML.get(t, (99 if t == 'X' else 31, 1, 2))
    numel = 1
    for d in dims:
        numel *= d
    nbytes = numel // blk * bb
    d = dims + [7] * (5 - len(dims)) if (bad == 'dims' and i == 0) else dims
    o = off + (align if (bad == 'offset' and i == 2) else 0)
    infos += s(name) + struct.pack('<I', len(d)) + b''.join(struct.pack('<Q', x) for x in d)
    infos += struct.pack('<IQ', tid, o)
    summary['params'] += numel
    summary['bytes'] += nbytes
    p = summary['types'].setdefault(t, [0, 0])
    p[0] += numel
    p[1] += nbytes
    off += (nbytes + align - 1) // align * align

head = b'GGUF' + struct.pack('<IQQ', 1 if bad == 'version1' else 3, len(typed), len(kvs))
head += b''.join(kvs) + infos
header_bytes = (len(head) + align - 1) // align * align
total = header_bytes + off
with open(out, 'wb') as f:
    f.write(head)
    f.truncate(total - 1 if bad == 'truncate' else total)
summary['header_bytes'] = header_bytes
print(json.dumps(summary))
