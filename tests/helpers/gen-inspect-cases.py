# gen-inspect-cases.py OUT COUNT [SEED] - write COUNT generated checkpoints
# (directories case-0000 ...) for compare-inspect.sh: tensor names of many
# families (llama, qwen2/3, gemma, mixtral, qwen2_moe, deepseek MLA, gpt2,
# gpt_neox, falcon, t5, DiT, LoRA) and odd ones (a literal '#', names of 500
# bytes and more, repeated wpe, escaped names, several layer words), layers
# in order or shuffled, spread over 1-8 shards, with or without an index,
# some with a broken index (a tensor missing, on the wrong shard, extra) or
# a name twice; LTX DiT names, whole or not. Headers only: the data is
# sparse (truncate). Deterministic for a seed.
import json, os, random, struct, sys

out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)

DT = {'BF16': 2, 'F16': 2, 'F32': 4, 'I8': 1}


def llama(L, extra):
    names = ['model.embed_tokens.weight', 'model.norm.weight']
    if rng.random() < 0.5:
        names.append('lm_head.weight')
    for i in range(L):
        p = 'model.layers.%d.' % i
        names += [p + 'self_attn.%s_proj.weight' % x for x in 'qkvo']
        names += [p + 'mlp.%s_proj.weight' % x for x in ('gate', 'up', 'down')]
        names += [p + 'input_layernorm.weight', p + 'post_attention_layernorm.weight']
        if 'qbias' in extra:
            names += [p + 'self_attn.%s_proj.bias' % x for x in 'qkv']
        if 'qnorm' in extra:
            names += [p + 'self_attn.q_norm.weight', p + 'self_attn.k_norm.weight']
        if 'prefn' in extra:
            names += [p + 'pre_feedforward_layernorm.weight']
        if 'moe' in extra:
            for e in range(rng.randint(1, 4)):
                names += [p + 'mlp.experts.%d.%s_proj.weight' % (e, x) for x in ('gate', 'up', 'down')]
            if rng.random() < 0.5:
                names += [p + 'mlp.shared_expert.gate_proj.weight']
        if 'mla' in extra:
            names += [p + 'self_attn.' + x for x in ('q_a_proj.weight', 'q_a_layernorm.weight',
                                                     'q_b_proj.weight', 'kv_a_proj_with_mqa.weight',
                                                     'kv_a_layernorm.weight', 'kv_b_proj.weight')]
        if 'mixtral' in extra:
            for e in range(rng.randint(1, 3)):
                names += [p + 'block_sparse_moe.experts.%d.w%d.weight' % (e, k) for k in (1, 2, 3)]
            names += [p + 'block_sparse_moe.gate.weight']
        if 'lora' in extra:
            for x in 'qv':
                names += [p + 'self_attn.%s_proj.lora_A.weight' % x,
                          p + 'self_attn.%s_proj.lora_B.weight' % x]
    if 'lora' in extra:
        names = ['base_model.model.' + n for n in names]
    return names


def gpt2(L):
    names = ['transformer.wte.weight', 'transformer.wpe.weight', 'transformer.ln_f.weight']
    for i in range(L):
        p = 'transformer.h.%d.' % i
        names += [p + x for x in ('attn.c_attn.weight', 'attn.c_proj.weight', 'mlp.c_fc.weight',
                                  'mlp.c_proj.weight', 'ln_1.weight', 'ln_2.weight')]
    return names


def neox(L):
    names = ['gpt_neox.embed_in.weight', 'embed_out.weight', 'gpt_neox.final_layer_norm.weight']
    for i in range(L):
        p = 'gpt_neox.layers.%d.' % i
        names += [p + x for x in ('attention.query_key_value.weight', 'attention.dense.weight',
                                  'mlp.dense_h_to_4h.weight', 'mlp.dense_4h_to_h.weight',
                                  'input_layernorm.weight')]
    return names


def falcon(L):
    names = ['transformer.word_embeddings.weight', 'lm_head.weight']
    for i in range(L):
        p = 'transformer.h.%d.' % i
        names += [p + x for x in ('self_attention.query_key_value.weight',
                                  'self_attention.dense.weight', 'mlp.dense_h_to_4h.weight')]
    return names


def t5(L):
    names = ['shared.weight',
             'encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight',
             'decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight']
    for side in ('encoder', 'decoder'):
        for i in range(L):
            p = '%s.block.%d.layer.' % (side, i)
            names += [p + '0.SelfAttention.%s.weight' % x for x in 'qkvo']
            names += [p + '1.DenseReluDense.wi.weight', p + '1.DenseReluDense.wo.weight',
                      p + '0.layer_norm.weight']
    return names


def dit(L):
    names = ['pos_embed.proj.weight']
    for i in range(L):
        p = 'transformer_blocks.%d.' % i
        names += [p + x for x in ('attn1.to_q.weight', 'attn1.to_k.weight', 'attn1.to_out.0.weight',
                                  'ff.net.0.proj.weight', 'norm1.linear.weight')]
    return names


def odd(L):
    names = []
    for i in range(L):
        names += ['x.layers.%d.wpe.weight' % i, 'a.h.%d.h.%d.mlp.fc1.weight' % (i, i + 1),
                  'blk.layer.%d.attention.dense_4h_to_h.weight' % i,
                  'y.single_transformer_blocks.%d.attn.to_v.weight' % i,
                  'z.block.%d.experts.%d.w1.weight' % (i, i % 3)]
    names += ['x.layers.#.wpe.weight', 'model.layers.#.self_attn.q_proj.weight',
              'model.layers.01.self_attn.q_proj.weight', 'model.layers.1000000.mlp.up_proj.weight',
              'model.layers.7x.mlp.up_proj.weight', 'layers.3', 'layers.3.', '.layers.2.x',
              'output.weight', 'h.0.wpe.weight', 'decoder.layers.4.self_attn.q_proj.weight',
              'model.layers.2.self_attn.q\u00e9_proj.weight',
              'model.layers.5.' + 'q' * rng.choice((480, 490, 520)) + '.weight',
              'model.layers.6.' + 'q' * rng.choice((480, 490, 520)) + '.weight']
    return names


def ltx(L):
    pre = rng.choice(('', 'model.diffusion_model.', 'x.'))
    names = [pre + 'adaln_single.linear.weight', pre + 'proj_out.weight']
    names.append(rng.choice((pre + 'patchify_proj.weight', 'blocks.3.patchify_proj.weight',
                             'xpatchify_proj.weight', pre + 'patchify_proj.bias')))
    for i in range(L):
        p = pre + 'transformer_blocks.%d.' % i
        names += [p + x for x in ('attn1.to_q.weight', 'attn1.to_k.weight', 'attn2.to_q.weight',
                                  'ff.net.0.proj.weight', 'scale_shift_table')]
    return names


def shape_of(name, hidden):
    r = rng.random()
    if 'norm' in name or name.endswith('bias') or r < 0.1:
        return [rng.choice((hidden, 16, 8))]
    if r < 0.15:
        return [2, rng.choice((4, 8)), 3]
    return [rng.choice((hidden, 2 * hidden, 48, 64, 96, 12, 20)), rng.choice((hidden, 32, 64, 24))]


def write_shard(path, tensors, meta):
    h = {}
    if meta is not None:
        h['__metadata__'] = meta
    off = 0
    for name, dt, shape in tensors:
        n = DT[dt]
        for d in shape:
            n *= d
        h[name] = {'dtype': dt, 'shape': shape, 'data_offsets': [off, off + n]}
        off += n
    # most writers: no whitespace (the reader's shortcut); else json's spaces
    seps = (',', ':') if rng.random() < 0.7 else (', ', ': ')
    b = json.dumps(h, ensure_ascii=rng.random() < 0.5, separators=seps).encode()
    b += b' ' * rng.choice((0, 0, 3))
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(b)))
        f.write(b)
        f.truncate(8 + len(b) + off)


def case(d):
    L = rng.randint(1, 12)
    kind = rng.choice(('llama', 'qwen2', 'qwen3', 'gemma', 'moe', 'mla', 'mixtral', 'lora', 'gpt2',
                       'neox', 'falcon', 't5', 'dit', 'odd', 'mix', 'ltx'))
    extra = {'qwen2': {'qbias'}, 'qwen3': {'qnorm'}, 'gemma': {'prefn', 'qnorm'},
             'moe': {'moe', 'qnorm'}, 'mla': {'mla', 'moe'}, 'mixtral': {'mixtral'},
             'lora': {'lora'}}.get(kind, set())
    if kind in ('gpt2', 'neox', 'falcon', 't5', 'dit', 'odd', 'ltx'):
        names = {'gpt2': gpt2, 'neox': neox, 'falcon': falcon, 't5': t5, 'dit': dit,
                 'odd': odd, 'ltx': ltx}[kind](L)
    elif kind == 'mix':
        names = list(dict.fromkeys(llama(L, {'qnorm'}) + odd(L) + gpt2(L)))
    else:
        names = llama(L, extra)
    if rng.random() < 0.4:
        rng.shuffle(names)
    elif rng.random() < 0.3:
        names.reverse()
    hidden = rng.choice((32, 64, 128))
    dt = rng.choice(tuple(DT))
    tensors = [(n, dt if rng.random() < 0.9 else rng.choice(tuple(DT)), shape_of(n, hidden))
               for n in names]
    nsh = rng.choice((1, 1, 2, 3, 4, 5, 8))
    nsh = min(nsh, len(tensors))
    if rng.random() < 0.5:  # contiguous runs per shard
        cuts = sorted(rng.sample(range(1, len(tensors)), nsh - 1)) if nsh > 1 else []
        parts, a = [], 0
        for c in cuts + [len(tensors)]:
            parts.append(tensors[a:c])
            a = c
    else:
        parts = [[] for _ in range(nsh)]
        for i, t in enumerate(tensors):
            parts[i % nsh if i < nsh else rng.randrange(nsh)].append(t)
    os.makedirs(d)
    files = ['model-%05d-of-%05d.safetensors' % (i + 1, nsh) for i in range(nsh)]
    if nsh == 1 and rng.random() < 0.5:
        files = ['model.safetensors']
    meta = {'format': 'pt'} if rng.random() < 0.7 else None
    broken = rng.random() < 0.15
    twice = broken and nsh > 1 and rng.random() < 0.3
    if twice:  # one name in two shards
        parts[-1].append(parts[0][0])
    for f, p in zip(files, parts):
        write_shard(os.path.join(d, f), p, meta)
    if len(files) > 1 or rng.random() < 0.3:
        wm = {}
        for f, p in zip(files, parts):
            for t in p:
                wm.setdefault(t[0], f)
        if broken and not twice:
            k = rng.choice(list(wm))
            r = rng.random()
            if r < 0.3:
                del wm[k]
            elif r < 0.6:
                wm[k] = files[(files.index(wm[k]) + 1) % len(files)]
            else:
                wm['model.layers.999.extra.weight'] = files[0]
        items = list(wm.items())
        if rng.random() < 0.3:
            rng.shuffle(items)
        idx = {'metadata': {'total_size': 0}, 'weight_map': dict(items)}
        with open(os.path.join(d, 'model.safetensors.index.json'), 'w') as f:
            json.dump(idx, f, ensure_ascii=rng.random() < 0.5)


for i in range(count):
    case(os.path.join(out, 'case-%04d' % i))
