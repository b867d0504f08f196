/* test-kbitreplay.c - the allocator replay of k-bit LoRA (QLoRA: peft over
 * a bitsandbytes nf4 or int8 base, the hf stack; and LoRA over an fp32
 * base under amp, whose frozen head is copied alike) holds every tensor the
 * analytic step counts: its allocated peak reaches the step's analytic
 * allocated peak (no fallback to it), and the tensors peft's
 * prepare_model_for_kbit_training adds (the norms, embedding and lm_head
 * cast to fp32, and the head's bf16 autocast copy kept for its backward)
 * are in it at their sizes, derived here by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "catalog.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/model/models.h"

/* A finished hf-stack LoRA setup over a quantized base. */
static struct vf_setup kbit_setup(enum vf_quant q, int64_t batch, int64_t seq, bool ckpt)
{
	struct vf_setup s;
	struct vf_error err = {0};
	vf_setup_defaults(&s);
	s.mode = VF_MODE_LORA;
	s.quant = q;
	s.batch = batch;
	s.seq = seq;
	s.grad_ckpt = ckpt;
	s.given |= VF_SETUP_G_MODE | VF_SETUP_G_QUANT | VF_SETUP_G_BATCH | VF_SETUP_G_SEQ |
		   VF_SETUP_G_GRAD_CKPT;
	if (vf_setup_finish(&s, &err) != VF_OK)
		fprintf(stderr, "  %s\n", err.msg);
	return s;
}

/* Replayed with no GPU (no capacity): the replay's own allocated peak. */
static bool replay(const char *model, const struct vf_setup *s, struct vf_estimate *e)
{
	const struct vf_arch *a = catalog_arch(model);
	struct vf_error err = {0};
	if (!a || vf_estimate_simulate(a, s, NULL, NULL, e, NULL, &err) != VF_OK) {
		fprintf(stderr, "  %s: %s\n", model, a ? err.msg : "not in the catalog");
		return false;
	}
	return true;
}

/* The replay's allocated peak reaches the analytic one and exceeds it by
 * at most 2% (what the replay holds beyond the analytic phases: blocks
 * rounded to 512 bytes, remainders under 1 MiB left unsplit in large
 * blocks, which count as allocated; nf4's 9 MiB weights leave many):
 * no fallback to the analytic peak. */
static void test_kbit_lora_replay_covers_peak(void)
{
	static const struct {
		const char *model;
		enum vf_quant q;
		int64_t batch, seq;
		bool ckpt;
	} c[] = {
		{"llama3-8b", VF_QUANT_NF4, 4, 2048, false},
		{"llama3-8b", VF_QUANT_NF4, 1, 2048, true},
		{"llama3-8b", VF_QUANT_INT8, 2, 1024, false},
		{"qwen2.5-0.5b", VF_QUANT_NF4, 4, 512, false},
		{"qwen2.5-0.5b", VF_QUANT_INT8, 2, 1024, true},
		{"mistral-7b", VF_QUANT_NF4, 2, 1024, true},
		/* no k-bit base: an fp32 base under amp LoRA, whose frozen fp32
		 * head is copied to bf16 at its call the same way */
		{"llama3-8b", VF_QUANT_NONE, 2, 1024, false},
		{"gpt2", VF_QUANT_NONE, 4, 512, true},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct vf_setup s = kbit_setup(c[i].q, c[i].batch, c[i].seq, c[i].ckpt);
		if (c[i].q == VF_QUANT_NONE) {
			struct vf_error err = {0};
			s.precision = VF_PREC_AMP;
			s.given |= VF_SETUP_G_PRECISION;
			CHECK(vf_setup_finish(&s, &err) == VF_OK);
		}
		struct vf_estimate e;
		if (!replay(c[i].model, &s, &e)) {
			CHECK(0);
			continue;
		}
		double an = (double)e.step_peak_allocated_bytes, sim = (double)e.sim_allocated_bytes;
		bool ok = e.simulated && !e.sim_short && sim >= an && sim <= an * 1.02;
		if (!ok)
			fprintf(stderr, "  %s %s b%lld s%lld ckpt %d: replay %.0f, analytic %.0f (%+.3f%%)\n",
				c[i].model, c[i].q == VF_QUANT_NF4 ? "nf4" : c[i].q ? "int8" : "amp", (long long)c[i].batch,
				(long long)c[i].seq, c[i].ckpt, sim, an, 100 * (sim / an - 1));
		CHECK(ok);
	}
}

/* A block's size as the caching allocator counts it: 512-byte multiples. */
static double r512(double bytes)
{
	return ceil(bytes / 512) * 512;
}

/* peft's k-bit preparation, by hand: the parameters outside the linears
 * (the embedding with the linears' biases, two norms per layer, the final
 * norm, an untied head) go from 2 to 4 bytes, the embedding's output (the
 * residual stream it starts, N x h, the first layer's input) with them,
 * and the head's bf16 copy (V x h x 2) lives from its call to its
 * backward, through the loss where the peak is (the layers save their
 * inputs' casts and norms' fp32 copies as before): the replay's allocated
 * peak grows by that, each tensor
 * rounded to the allocator's 512 bytes, give or take 2 MiB (a large block
 * taken from the cache is split only when over 1 MiB would remain; the
 * remainder left in it counts as allocated, and the two layouts differ). */
static void test_kbit_fp32_rest_in_replay(void)
{
	static const struct {
		const char *model;
		double V, h, layers, bias, untied;
	} c[] = {
		{"llama3-8b", 128256, 4096, 32, 0, 1},
		/* q, k and v biases: 896 + 2 x 128 per layer */
		{"qwen2.5-0.5b", 151936, 896, 24, 24 * (896 + 2 * 128), 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct vf_setup s = kbit_setup(VF_QUANT_NF4, 2, 512, false);
		REQUIRE(s.kbit_fp32_rest); /* the hf stack's default */
		struct vf_estimate fp32, bf16;
		REQUIRE(replay(c[i].model, &s, &fp32));
		s.kbit_fp32_rest = false;
		REQUIRE(replay(c[i].model, &s, &bf16));
		CHECK(fp32.peak_phase == VF_PHASE_LOSS && bf16.peak_phase == VF_PHASE_LOSS);
		double V = c[i].V, h = c[i].h;
		double emb = V * h + c[i].bias;
		double want = r512(4 * emb) - r512(2 * emb);
		want += (2 * c[i].layers + 1) * (r512(4 * h) - r512(2 * h)); /* norms */
		want += c[i].untied * (r512(4 * V * h) - r512(2 * V * h));   /* lm_head */
		want += r512(2 * V * h);                                      /* its bf16 copy */
		want += r512(4 * 2 * 512 * h) - r512(2 * 2 * 512 * h);        /* the fp32 stream */
		double got = (double)(fp32.sim_allocated_bytes - bf16.sim_allocated_bytes);
		if (!(fabs(got - want) < 2.0 * 1048576))
			fprintf(stderr, "  %s: the replay grew by %.0f bytes, by hand %.0f\n", c[i].model,
				got, want);
		CHECK(fabs(got - want) < 2.0 * 1048576);
	}
}

int main(void)
{
	RUN(test_kbit_lora_replay_covers_peak);
	RUN(test_kbit_fp32_rest_in_replay);
	return vf_test_done();
}
