# mk-safetensors.py OUT [--meta JSON] PREFIX... - write a tiny valid .safetensors file
# with one 2-element F32 tensor named PREFIX+"w" per prefix (tests: checkpoint layouts).
import json, struct, sys
out = sys.argv[1]; args = sys.argv[2:]; meta = None
if args and args[0] == '--meta':
    meta = json.loads(args[1]); args = args[2:]
h = {}
for i, p in enumerate(args):
    h[p + 'w'] = {'dtype': 'F32', 'shape': [2], 'data_offsets': [8 * i, 8 * i + 8]}
if meta: h['__metadata__'] = meta
b = json.dumps(h).encode()
with open(out, 'wb') as f:
    f.write(struct.pack('<Q', len(b))); f.write(b); f.write(b'\0' * 8 * len(args))
