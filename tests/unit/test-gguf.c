/* test-gguf.c - the GGUF reader's pieces that the end-to-end tests do not
 * reach: ggml block sizes against ggml's block structs, the "need more"
 * answer to a buffer shorter than the header, header stubs, and the
 * llama.cpp placement of layers and KV cache. */
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/estimate/llamacpp.h"
#include "vramfit/model/gguf.h"

static void test_types(void)
{
	/* elements, bytes: from the block structs (a half is 2 bytes) */
	CHECK_INT(vf_ggml_type_block(12), 256);
	CHECK_INT(vf_ggml_type_bytes(12), 2 + 2 + 12 + 128); /* Q4_K: d, dmin, scales, qs */
	CHECK_INT(vf_ggml_type_bytes(14), 128 + 64 + 16 + 2); /* Q6_K: ql, qh, scales, d */
	CHECK_INT(vf_ggml_type_bytes(8), 2 + 32);             /* Q8_0 */
	CHECK_INT(vf_ggml_type_bytes(39), 1 + 16);            /* MXFP4: e8m0, 32 nibbles */
	CHECK_INT(vf_ggml_type_bytes(23), 2 + 2 + 4 + 128);   /* IQ4_XS */
	CHECK_STR(vf_ggml_type_name(30), "BF16");
	CHECK(vf_ggml_type_name(31) == NULL); /* Q4_0_4_4: removed */
	CHECK(vf_ggml_type_name(42) == NULL);
	CHECK(vf_ggml_type_name(-1) == NULL);
	CHECK_INT(vf_ggml_type_block(4), 0);
}

/* A header with one F32 tensor "w" of 8 elements. */
static size_t tiny(unsigned char *b)
{
	size_t o = 0;
#define PUT(v, n) do { uint64_t x_ = (uint64_t)(v); for (int i_ = 0; i_ < (n); i_++) b[o++] = (unsigned char)(x_ >> (8 * i_)); } while (0)
	memcpy(b, "GGUF", 4);
	o = 4;
	PUT(3, 4);      /* version */
	PUT(1, 8);      /* tensors */
	PUT(1, 8);      /* key-values */
	PUT(20, 8);
	memcpy(b + o, "general.architecture", 20);
	o += 20;
	PUT(8, 4);      /* string */
	PUT(5, 8);
	memcpy(b + o, "llama", 5);
	o += 5;
	PUT(1, 8);
	b[o++] = 'w';
	PUT(1, 4);      /* dims */
	PUT(8, 8);
	PUT(0, 4);      /* F32 */
	PUT(0, 8);      /* offset */
#undef PUT
	size_t data = (o + 31) / 32 * 32;
	memset(b + o, 0, data - o + 32);
	return data + 32;
}

static void test_parse_and_need_more(void)
{
	unsigned char b[256];
	size_t n = tiny(b);
	struct vf_gguf g;
	struct vf_error err = {0};
	CHECK_INT(vf_gguf_parse(b, n, n, "t.gguf", &g, &err), VF_OK);
	CHECK_INT(g.params, 8);
	CHECK_INT(g.data_bytes, 32);
	CHECK_STR(g.architecture, "llama");
	vf_gguf_release(&g);
	/* the first 40 bytes of a longer file: more is needed, not an error */
	CHECK_INT(vf_gguf_parse(b, 40, n, "t.gguf", &g, &err), VF_ENOTFOUND);
	vf_gguf_release(&g);
	/* the same 40 bytes as the whole file: truncated */
	CHECK_INT(vf_gguf_parse(b, 40, 40, "t.gguf", &g, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "t.gguf: truncated");
	vf_gguf_release(&g);
	/* the data section one byte short */
	CHECK_INT(vf_gguf_parse(b, n - 1, n - 1, "t.gguf", &g, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "the tensors end at byte");
	vf_gguf_release(&g);
}

static void test_stub(void)
{
	unsigned char b[256], s[300];
	size_t n = tiny(b);
	size_t header = n - 32;
	memcpy(s, VF_GGUF_STUB_MAGIC, 8);
	for (int i = 0; i < 8; i++)
		s[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
	memcpy(s + 16, b, header);
	char path[] = "/tmp/vf-gguf-stub.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, s, 16 + header) == (ssize_t)(16 + header));
	close(fd);
	struct vf_gguf g;
	struct vf_error err = {0};
	CHECK_INT(vf_gguf_read(path, &g, &err), VF_OK);
	CHECK_INT(g.params, 8);
	CHECK_INT(g.file_bytes, n);
	vf_gguf_release(&g);
	/* a stub cut inside the header */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, s, 40) == 40);
	close(fd);
	CHECK_INT(vf_gguf_read(path, &g, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "header stub cut short");
	vf_gguf_release(&g);
	unlink(path);
}

static void test_llamacpp_layers(void)
{
	/* 4 layers of one 100-byte tensor each, an embedding and an output */
	struct vf_gguf_tensor t[6] = {
		{.name = "token_embd.weight", .bytes = 1000}, {.name = "blk.0.attn_q.weight", .bytes = 100},
		{.name = "blk.1.attn_q.weight", .bytes = 100}, {.name = "blk.2.attn_q.weight", .bytes = 100},
		{.name = "blk.3.attn_q.weight", .bytes = 100}, {.name = "output.weight", .bytes = 500},
	};
	struct vf_gguf g = {.path = "m.gguf", .ntensors = 6, .tensors = t};
	struct vf_arch a;
	vf_arch_init(&a);
	a.layers = 4;
	a.heads = 4;
	a.kv_heads = 2;
	a.hidden = 64;
	a.head_dim = 16;
	a.vocab = 100;
	a.known = VF_ARCH_F_LAYERS | VF_ARCH_F_HEADS | VF_ARCH_F_HIDDEN;
	struct vf_llamacpp_setup s = {.ctx = 300, .n_gpu_layers = -1};
	struct vf_llamacpp_estimate e;
	struct vf_error err = {0};
	CHECK_INT(vf_llamacpp_estimate(&g, &a, &s, &e, &err), VF_OK);
	CHECK_INT(e.gpu_layers, 4);
	CHECK(e.output_on_gpu);
	CHECK_INT(e.weights_gpu, 900);
	CHECK_INT(e.weights_cpu, 1000); /* the embedding stays in host memory */
	CHECK_INT(e.kv_cells, 512);
	CHECK_INT(e.kv_gpu, 4 * 512 * 2 * 16 * 2 * 2);
	/* -ngl 2: the output layer and layer 3 */
	s.n_gpu_layers = 2;
	CHECK_INT(vf_llamacpp_estimate(&g, &a, &s, &e, &err), VF_OK);
	CHECK_INT(e.gpu_layers, 1);
	CHECK_INT(e.weights_gpu, 600);
	CHECK_INT(e.kv_cpu, 3 * 512 * 2 * 16 * 2 * 2);
	/* -ngl 0: nothing on the GPU */
	s.n_gpu_layers = 0;
	CHECK_INT(vf_llamacpp_estimate(&g, &a, &s, &e, &err), VF_OK);
	CHECK_INT(e.weights_gpu, 0);
	CHECK_INT(e.total_gpu, 0);
	a.known = 0;
	CHECK_INT(vf_llamacpp_estimate(&g, &a, &s, &e, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "m.gguf");
}

int main(void)
{
	RUN(test_types);
	RUN(test_parse_and_need_more);
	RUN(test_stub);
	RUN(test_llamacpp_layers);
	return vf_test_done();
}
