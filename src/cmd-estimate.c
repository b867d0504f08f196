/* cmd-estimate.c - `vramfit estimate MODEL [setup flags] [--gpu SPEC]...
 * [--json]`: peak memory (breakdown by term, peak allocated, peak on
 * device), whether it fits each GPU, headroom, the largest micro-batch and
 * the step time; every assumption listed. Also `--check-groundtruth FILE`:
 * the estimator against measured runs (lib/estimate/groundtruth.c, the code the
 * unit test uses). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vramfit/estimate/estimate.h"
#include "vramfit/gpu/gpu.h"
#include "vramfit/estimate/groundtruth.h"
#include "vramfit/base/json.h"
#include "vramfit/model/model.h"
#include "vramfit/model/models.h"
#include "vramfit/estimate/runcost.h"
#include "vramfit/estimate/setup.h"

#define MAX_GPUS 64
#define MAX_ASSUME 40

static const char usage[] =
	"usage: vramfit estimate MODEL [setup flags] [--gpu SPEC]... [--tokens T | --steps S]\n"
	"                        [--price USD] [--json]\n"
	"       vramfit estimate --params N [setup flags] [--gpu SPEC]... [--json]\n"
	"       vramfit estimate --check-groundtruth FILE [--json]\n"
	"\n"
	"Peak GPU memory and step time of a training or inference run, before any\n"
	"GPU time is spent: a breakdown by term (weights, gradients, optimizer states\n"
	"and temporaries, autocast copies, activations, logits, KV cache, CUDA context,\n"
	"allocator reserve), the peak allocated and the peak on the device (what\n"
	"nvidia-smi would show), then per GPU: fits or not, headroom, the largest\n"
	"micro-batch that fits, step time. Every default used is listed.\n"
	"\n"
	"MODEL is a catalog id (llama2-7b, ltx-2-19b, ...), a config.json, a model or\n"
	"adapter directory or a .safetensors file; --params N alone estimates a generic\n"
	"llama-like transformer of N parameters.\n"
	"\n"
	"GPUs: --gpu ID | ID:N | NAME=MiB (repeatable; `vramfit gpus` lists the ids);\n"
	"without --gpu the GPUs of this machine, and with none the catalog's common cards.\n"
	"\n" VF_SETUP_FLAGS_HELP
	"\n"
	"Other:\n"
	"  --json                     the JSON contract (README: vramfit estimate)\n"
	"  --check-groundtruth FILE   compare with measured runs (calibration.jsonl format)\n"
	"  --tokens T | --steps S     whole run per GPU: steps, hours and cost (1e9, 22B),\n"
	"                             with data-parallel communication for --gpus N\n"
	"  --price USD                $/GPU-hour instead of the catalog's\n"
	"\n"
	"Exit status: 0 estimated (whether or not it fits), 1 failure, 2 usage error.\n";

struct assume {
	char items[MAX_ASSUME][480];
	int n;
};

static void assume(struct assume *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void assume(struct assume *a, const char *fmt, ...)
{
	if (a->n >= MAX_ASSUME)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->items[a->n++], sizeof a->items[0], fmt, ap);
	va_end(ap);
}

/* One GPU row: a catalog spec (or one made from NAME=MiB) and a count. */
struct gpu_row {
	struct vf_gpu_spec spec;
	int count;
	struct vf_estimate est;
	bool fits;
	int64_t headroom;
	int64_t max_batch;
};

static const char *remedy(enum vf_term t, const struct vf_setup *s)
{
	switch (t) {
	case VF_TERM_ACTIVATIONS:
		return s->grad_ckpt ? "a smaller --batch or --seq" : "--grad-ckpt, or a smaller --batch or --seq";
	case VF_TERM_OPTIMIZER:
		return "--optimizer adamw8bit, --shard zero1/zero2 over several GPUs, or --mode lora";
	case VF_TERM_OPTIMIZER_TEMP:
		return "--optimizer-impl fused (no foreach temporary)";
	case VF_TERM_WEIGHTS:
		return s->mode == VF_MODE_FULL ? "--mode lora with --quant int8/nf4, or --shard fsdp"
					       : "--quant int8 or nf4, or a smaller model";
	case VF_TERM_GRADIENTS:
		return "--mode lora, or --shard zero2/fsdp over several GPUs";
	case VF_TERM_AUTOCAST_CACHE:
		return "--precision bf16 (no fp32 master weights to cast)";
	case VF_TERM_LOGITS:
		return "a smaller --batch or --seq (the loss holds fp32 logits)";
	case VF_TERM_KV_CACHE:
		return "a smaller --batch or --seq";
	default:
		return "a smaller setup";
	}
}

static void setup_assumptions(const struct vf_setup *s, bool dit, bool images, bool t5, bool multi,
			      struct assume *a)
{
	unsigned g = s->given;
	char t[128];
	if (!(g & VF_SETUP_G_MODE))
		assume(a, "mode %s (--mode)", vf_mode_name(s->mode));
	if (!(g & VF_SETUP_G_PRECISION))
		assume(a, "precision %s%s (--precision)", vf_precision_name(s->precision),
		       s->precision == VF_PREC_AMP ? ": fp32 weights under bf16 autocast" : "");
	if (s->mode != VF_MODE_INFER) {
		if (!(g & VF_SETUP_G_OPTIMIZER))
			assume(a, "optimizer %s (--optimizer)", vf_optimizer_name(s->optimizer));
		if (!(g & VF_SETUP_G_OPTIMIZER_IMPL) &&
		    (s->optimizer == VF_OPT_ADAMW || s->optimizer == VF_OPT_LION))
			assume(a, "optimizer implementation %s, PyTorch's default on CUDA (--optimizer-impl)",
			       vf_optimizer_impl_name(s->optimizer_impl));
		if (!(g & VF_SETUP_G_GRAD_CKPT))
			assume(a, "gradient checkpointing %s (--grad-ckpt)", s->grad_ckpt ? "on" : "off");
		if (!(g & VF_SETUP_G_GRAD_ACCUM))
			assume(a, "gradient accumulation %" PRId64 " (--grad-accum)", s->grad_accum);
	}
	if (!(g & VF_SETUP_G_BATCH))
		assume(a, "micro-batch %" PRId64 " per GPU (--batch)", s->batch);
	if (!dit && !images && !(g & VF_SETUP_G_SEQ))
		assume(a, "%" PRId64 " tokens per sample (--seq)", s->seq);
	if (t5 && !(g & VF_SETUP_G_TARGET_SEQ))
		assume(a, "decoder length %" PRId64 " (--target-seq)", s->target_seq ? s->target_seq : s->seq);
	if (s->mode == VF_MODE_LORA) {
		if (!(g & VF_SETUP_G_LORA_RANK))
			assume(a, "LoRA rank %d (--lora-rank)", s->lora_rank);
		if (!(g & VF_SETUP_G_LORA_TARGETS))
			assume(a, "LoRA targets %s (--lora-targets)",
			       vf_lora_targets_format(s->lora_targets, t, sizeof t));
		assume(a, "LoRA adapters kept in fp32 (peft's default)");
	}
	if (!(g & VF_SETUP_G_QUANT) && s->mode != VF_MODE_FULL)
		assume(a, "base weights not quantized (--quant)");
	if (!dit && !(g & VF_SETUP_G_ATTENTION))
		assume(a, "attention %s: no s x s score matrices (--attention)", vf_attention_name(s->attention));
	if (!(g & VF_SETUP_G_GPUS) && !multi)
		assume(a, "%d GPU per run (--gpus N --shard ...)", s->gpus);
	if (s->mode == VF_MODE_INFER)
		assume(a, "inference: one forward over the whole sequence with the KV cache (use_cache=True)");
	if (dit) {
		if (!(g & VF_SETUP_G_VIDEO))
			assume(a, "video %dx%dx%d (--video WxHxF)", s->video_width, s->video_height,
			       s->video_frames);
		if (!(g & VF_SETUP_G_AUDIO))
			assume(a, "audio stream %s (--no-audio)", s->audio ? "generated" : "off");
		if (!(g & VF_SETUP_G_TEXT_ENCODER))
			assume(a, "text encoder loaded in %s for the validation prompts (--text-encoder)",
			       vf_text_encoder_name(s->text_encoder));
	}
}

static void estimate_assumptions(const struct vf_estimate *e, const struct vf_setup *s,
				 const struct vf_gpu_spec *gpu, struct assume *a)
{
	if (e->assumed & VF_ASSUME_CONTEXT_DEFAULT) {
		char b[32];
		assume(a, "CUDA context %s for %s (527 MiB measured with PyTorch 2.11 on an H200; --context-mib)",
		       vf_fmt_bytes(b, sizeof b, (double)e->context_bytes),
		       gpu && gpu->generation[0] ? gpu->generation : "this GPU");
	}
	if (e->assumed & VF_ASSUME_GPU_RATE_UNKNOWN)
		assume(a, "no dense tensor rate known for %s: no step time", gpu ? gpu->id : "the GPU");
	if (s->quant != VF_QUANT_NONE)
		assume(a, "quantized base: linear weights at %s with block scales, embeddings and norms in "
			  "bf16; one linear dequantized at a time",
		       vf_quant_name(s->quant));
	assume(a, "PyTorch caching allocator without expandable segments; peak = steady-state step "
		  "(optimizer states held from the previous step)");
	assume(a, "step time: dense bf16 rate x utilisation fitted on H200 measurements (an estimate)");
}

static cJSON *gt_json(const struct vf_gt_report *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *rows = cJSON_AddArrayToObject(o, "records");
	for (size_t i = 0; i < r->n; i++) {
		const struct vf_gt_row *w = &r->rows[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "id", w->id);
		cJSON_AddStringToObject(j, "status", w->status);
		cJSON_AddNumberToObject(j, "peak_alloc", (double)w->meas_alloc);
		cJSON_AddNumberToObject(j, "peak_allocated_bytes", (double)w->pred_alloc);
		cJSON_AddNumberToObject(j, "peak_alloc_error", w->err_alloc);
		cJSON_AddNumberToObject(j, "peak_measured", (double)w->meas_peak);
		cJSON_AddNumberToObject(j, "peak_bytes", (double)w->pred_peak);
		cJSON_AddNumberToObject(j, "peak_error", w->err_peak);
		if (w->meas_step > 0)
			cJSON_AddNumberToObject(j, "step_median_s", w->meas_step);
		else
			cJSON_AddNullToObject(j, "step_median_s");
		if (!isnan(w->err_step)) {
			cJSON_AddNumberToObject(j, "step_seconds", w->pred_step);
			cJSON_AddNumberToObject(j, "step_error", w->err_step);
		} else {
			cJSON_AddNullToObject(j, "step_seconds");
			cJSON_AddNullToObject(j, "step_error");
		}
		cJSON_AddStringToObject(j, "peak_phase", vf_phase_name(w->phase));
		cJSON_AddStringToObject(j, "dominant_term", vf_term_name(w->dominant));
		cJSON_AddItemToArray(rows, j);
	}
	cJSON *s = cJSON_AddObjectToObject(o, "summary");
	cJSON_AddNumberToObject(s, "records", (double)r->scored);
	cJSON_AddNumberToObject(s, "context_bytes", (double)r->context_bytes);
	cJSON_AddNumberToObject(s, "peak_alloc_median_abs_error", r->med_alloc);
	cJSON_AddNumberToObject(s, "peak_alloc_max_abs_error", r->max_alloc);
	cJSON_AddNumberToObject(s, "peak_median_abs_error", r->med_peak);
	cJSON_AddNumberToObject(s, "peak_max_abs_error", r->max_peak);
	cJSON_AddNumberToObject(s, "step_median_abs_error", r->med_step);
	cJSON_AddNumberToObject(s, "step_max_abs_error", r->max_step);
	cJSON_AddNumberToObject(s, "oom_records", (double)r->n_oom);
	cJSON_AddNumberToObject(s, "oom_predicted", (double)r->n_oom_predicted);
	cJSON_AddBoolToObject(s, "within_bounds",
			      r->med_alloc <= 0.05 && r->max_alloc <= 0.12 && r->med_peak <= 0.05 &&
				      r->max_peak <= 0.12 && r->med_step <= 0.20);
	return o;
}

static int check_groundtruth(const char *path, bool json)
{
	struct vf_gt_report r;
	struct vf_error err = {0};
	if (vf_groundtruth_check(path, &r, &err))
		return vf_cli_fail_err(&err);
	if (json) {
		cJSON *o = gt_json(&r);
		vf_cli_print_json(o);
		cJSON_Delete(o);
		vf_gt_report_release(&r);
		return VF_EXIT_OK;
	}
	const char *hdr[] = {"record",  "peak alloc", "measured", "error", "peak (device)",
			     "measured", "error",      "step",     "measured", "error", "phase"};
	struct vf_table t;
	vf_table_init(&t, 11, hdr);
	for (int c = 1; c < 10; c++)
		vf_table_set_right(&t, c, true);
	for (size_t i = 0; i < r.n; i++) {
		const struct vf_gt_row *w = &r.rows[i];
		char c[10][40];
		vf_fmt_bytes(c[0], sizeof c[0], (double)w->pred_alloc);
		vf_fmt_bytes(c[1], sizeof c[1], (double)w->meas_alloc);
		snprintf(c[2], sizeof c[2], "%+.1f%%", 100 * w->err_alloc);
		vf_fmt_bytes(c[3], sizeof c[3], (double)w->pred_peak);
		vf_fmt_bytes(c[4], sizeof c[4], (double)w->meas_peak);
		snprintf(c[5], sizeof c[5], "%+.1f%%", 100 * w->err_peak);
		vf_fmt_seconds(c[6], sizeof c[6], w->pred_step);
		vf_fmt_seconds(c[7], sizeof c[7], w->meas_step);
		if (isnan(w->err_step))
			snprintf(c[8], sizeof c[8], "-");
		else
			snprintf(c[8], sizeof c[8], "%+.1f%%", 100 * w->err_step);
		snprintf(c[9], sizeof c[9], "%s%s", vf_phase_name(w->phase), w->scored ? "" : " (oom)");
		vf_table_addf(&t, w->id, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	bool ok = r.med_alloc <= 0.05 && r.max_alloc <= 0.12 && r.med_peak <= 0.05 &&
		  r.max_peak <= 0.12 && r.med_step <= 0.20;
	printf("\n%zu records on an H200 (CUDA context %.0f MiB)\n", r.scored,
	       (double)r.context_bytes / (1 << 20));
	printf("peak allocated  |error| median %5.1f%%  max %5.1f%%   (bounds 5%% / 12%%)\n",
	       100 * r.med_alloc, 100 * r.max_alloc);
	printf("peak on device  |error| median %5.1f%%  max %5.1f%%   (bounds 5%% / 12%%)\n",
	       100 * r.med_peak, 100 * r.max_peak);
	printf("step time       |error| median %5.1f%%  max %5.1f%%   (bound 20%% median)\n",
	       100 * r.med_step, 100 * r.max_step);
	if (r.n_oom)
		printf("out-of-memory records: %zu, predicted not to fit: %zu\n", r.n_oom, r.n_oom_predicted);
	printf("%s\n", ok ? "within the accuracy bounds" : "OUTSIDE the accuracy bounds");
	vf_gt_report_release(&r);
	return VF_EXIT_OK;
}

/* The GPUs to report: --gpu specs, else probed, else the common cards. */
static vf_status collect_gpus(char **specs, int nspecs, struct gpu_row *rows, int *nrows,
			      const char **source, struct vf_error *err)
{
	*nrows = 0;
	struct vf_gpu_set set;
	vf_gpu_set_init(&set);
	vf_status st = VF_OK;
	if (nspecs) {
		for (int i = 0; i < nspecs && !st; i++)
			st = vf_gpu_set_add_spec(&set, specs[i], err);
		*source = "given";
	} else {
		struct vf_error perr = {0};
		if (vf_gpu_probe(&set, &perr) != VF_OK)
			set.count = 0; /* probing failed: fall back to the catalog */
		*source = "probed";
	}
	if (st) {
		vf_gpu_set_release(&set);
		return st;
	}
	for (size_t i = 0; i < set.count && *nrows < MAX_GPUS; i++) {
		const struct vf_gpu *g = &set.gpus[i];
		const struct vf_gpu_spec *c = g->catalog_id[0] ? vf_gpu_catalog_find(g->catalog_id) : NULL;
		struct vf_gpu_spec spec;
		if (c) {
			spec = *c;
			if (g->memory_total_mib > 0)
				spec.memory_mib = g->memory_total_mib;
		} else {
			memset(&spec, 0, sizeof spec);
			snprintf(spec.id, sizeof spec.id, "%.31s", g->name);
			snprintf(spec.name, sizeof spec.name, "%s", g->name);
			spec.memory_mib = g->memory_total_mib;
			spec.bf16_tflops = spec.fp16_tflops = spec.fp32_tflops = -1;
			spec.bandwidth_gbs = -1;
			spec.price_usd_hour = -1;
		}
		/* identical GPUs are one row */
		int k;
		for (k = 0; k < *nrows; k++)
			if (strcmp(rows[k].spec.id, spec.id) == 0 && rows[k].spec.memory_mib == spec.memory_mib)
				break;
		if (k < *nrows) {
			rows[k].count++;
			continue;
		}
		memset(&rows[*nrows], 0, sizeof rows[0]);
		rows[*nrows].spec = spec;
		rows[*nrows].count = 1;
		(*nrows)++;
	}
	vf_gpu_set_release(&set);
	if (*nrows == 0) {
		size_t n = 0;
		const struct vf_gpu_spec *cat = vf_gpu_catalog(&n, err);
		if (!cat)
			return err->code ? err->code : VF_ERR;
		for (size_t i = 0; i < n && *nrows < MAX_GPUS; i++)
			if (cat[i].common) {
				memset(&rows[*nrows], 0, sizeof rows[0]);
				rows[*nrows].spec = cat[i];
				rows[*nrows].count = 1;
				(*nrows)++;
			}
		*source = "common";
	}
	return VF_OK;
}

struct target {
	bool dit;
	bool vision;            /* a CLIP / ViT / VLM config (vit.c) */
	struct vf_vision vis;
	int image_size, frames; /* a diffusers DiT's default sample; 0 = LTX-2's */
	struct vf_arch arch;
	struct vf_dit d;
	char id[128];
};

/* Fill what a partial architecture (inferred from tensors) lacks with
 * llama-like defaults, each listed as an assumption. */
static void complete_arch(struct vf_arch *a, struct assume *as)
{
	if (!(a->known & VF_ARCH_F_HEADS) || a->heads <= 0) {
		a->heads = a->hidden >= 128 ? a->hidden / 128 : 1;
		a->known |= VF_ARCH_F_HEADS;
		assume(as, "%" PRId64 " attention heads (not in the model files)", a->heads);
	}
	if (!(a->known & VF_ARCH_F_KV_HEADS) || a->kv_heads <= 0) {
		a->kv_heads = a->heads;
		a->known |= VF_ARCH_F_KV_HEADS;
	}
	if (!(a->known & VF_ARCH_F_HEAD_DIM) || a->head_dim <= 0) {
		a->head_dim = a->hidden / a->heads > 0 ? a->hidden / a->heads : 1;
		a->known |= VF_ARCH_F_HEAD_DIM;
	}
	if (!(a->known & VF_ARCH_F_FFN) || a->ffn < 0) {
		a->ffn = a->gated_mlp ? (a->hidden * 8 / 3) : 4 * a->hidden;
		a->known |= VF_ARCH_F_FFN;
		assume(as, "MLP width %" PRId64 " (not in the model files)", a->ffn);
	}
	if (!(a->known & VF_ARCH_F_VOCAB) || a->vocab < 0) {
		a->vocab = 32000;
		a->known |= VF_ARCH_F_VOCAB;
		assume(as, "vocabulary 32000 (not in the model files)");
	}
	if (!(a->known & VF_ARCH_F_TIED)) {
		a->tied_embeddings = false;
		a->known |= VF_ARCH_F_TIED;
	}
}

/* An LTX DiT file: its layout from its own config (or tensors), its
 * parameters from the header; what the transformer file cannot say from
 * the catalog's ltx-2-19b entry, each listed as an assumption. */
static vf_status ltx_target(const struct vf_model *m, struct target *tg, struct assume *as,
			    struct vf_error *err)
{
	vf_status st = vf_models_load(err);
	if (st)
		return st;
	const struct vf_model_entry *def = vf_models_find("ltx-2-19b");
	if ((st = vf_dit_from_ltx(&m->ltx, m->params, def ? def->raw : NULL, &tg->d, err)))
		return st;
	tg->dit = true;
	tg->d.from_file = true;
	assume(as, "LTX video DiT from the file's %s; parameters from its header",
	       strcmp(m->ltx.source, "metadata") == 0 ? "transformer config (__metadata__)"
						      : "tensor names and shapes");
	if (m->ltx.assumed[0])
		assume(as, "not in the file: %s", m->ltx.assumed);
	if (m->ltx.unknown[0])
		assume(as, "not understood: %s; the layout (activations, LoRA) is approximate", m->ltx.unknown);
	if (vf_ltx_params(&m->ltx) != m->params)
		assume(as, "the layout counts %" PRId64 " parameters, the header %" PRId64
			   ": activations and LoRA are approximate", vf_ltx_params(&m->ltx), m->params);
	const cJSON *list = def ? cJSON_GetObjectItemCaseSensitive(def->raw, "assumptions") : NULL;
	const cJSON *it;
	int i = 0;
	cJSON_ArrayForEach(it, list)
	if (cJSON_IsString(it) && i++ > 0) /* the first is the catalog's own layout */
		assume(as, "%s (catalog defaults)", it->valuestring);
	return VF_OK;
}

/* A diffusers pipeline: its "transformer" component when that is a DiT
 * (the part that trains); else the model itself. */
static const struct vf_model *dit_part(const struct vf_model *m)
{
	for (size_t i = 0; i < m->ncomponents; i++)
		if (strcmp(m->components[i]->name, "transformer") == 0 &&
		    (m->components[i]->has_vision || m->components[i]->has_ltx))
			return m->components[i];
	return m;
}

/* A vision or video model's config.json (or its files): diffusion
 * transformers are estimated as DiTs; the others are counted by inspect
 * but their training is not modelled here. */
static vf_status vision_target(const struct vf_model *m, struct target *tg, struct assume *as,
			       struct vf_error *err)
{
	const struct vf_vision *v = &m->vision;
	if (v->unknown[0])
		assume(as, "not understood: %s; the count is approximate", v->unknown);
	if (v->assumed[0])
		assume(as, "not in the config: %s", v->assumed);
	if (strcmp(v->kind, "dit") != 0) {
		tg->vision = true;
		tg->vis = *v;
		tg->vis.params = m->params;
		tg->image_size = (int)v->image_size;
		if (strcmp(v->kind, "vlm") == 0)
			assume(as, "%s VLM, stage 2 (fine-tuning): the language model trained as --mode says over "
				   "text + %" PRId64 " image tokens, the vision tower frozen (bf16, no autograd), the "
				   "projector trained; stage 1 (projector only) needs less (frozen language model)",
			       v->family, v->image_tokens);
		else
			assume(as, "%s contrastive training of %s; images of %" PRId64 " px in the config (%" PRId64
				   " tokens; --video WxHx1 for another size)%s; activations by mechanism (not measured "
				   "on vision runs)",
			       v->family, v->nparts > 1 ? "both towers" : "one tower", v->image_size, v->image_tokens,
			       v->nparts > 1 ? " and full-length captions; batch-squared similarity logits" : "");
		return VF_OK;
	}
	const char *about;
	vf_status st = vf_dit_from_vision(v, m->params, &tg->d, &about, err);
	if (st)
		return st;
	tg->dit = true;
	tg->image_size = (int)v->image_size;
	tg->frames = (int)v->frames;
	assume(as, "%s diffusion transformer from its config.json: %" PRId64 " blocks of %" PRId64
		   ", parameters counted from the layout%s",
	       v->family, v->dit_layers, v->parts[0].hidden,
	       m->files > 0 ? " (the header's count used)" : "");
	if (about[0])
		assume(as, "%s", about);
	assume(as, "activations per token: the DiT block mechanism of LTX-2 without its audio stream "
		   "(self-attention, text cross-attention, GELU FFN)");
	return VF_OK;
}

static void run_one(const struct target *tg, const struct vf_setup *s, const struct vf_gpu_spec *g,
		    struct vf_estimate *e)
{
	if (tg->vision && strcmp(tg->vis.kind, "vlm") == 0)
		vf_estimate_vlm(&tg->vis, s, g, e);
	else if (tg->vision)
		vf_estimate_vit(&tg->vis, s, g, e);
	else if (tg->dit)
		vf_estimate_dit(&tg->d, s, g, e);
	else
		vf_estimate_run(&tg->arch, s, g, e);
}

static int64_t max_batch(const struct target *tg, const struct vf_setup *s, const struct vf_gpu_spec *g)
{
	if (tg->vision)
		return vf_estimate_vision_max_batch(&tg->vis, s, g, 0);
	return tg->dit ? vf_estimate_dit_max_batch(&tg->d, s, g, 0)
		       : vf_estimate_max_batch(&tg->arch, s, g, 0);
}

static void print_human(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
			int nrows, const char *gsource, const struct vf_estimate *e0,
			const struct assume *a)
{
	char b1[64], b2[64], b3[64], b4[64];
	FILE *o = stdout;
	const char *bold = vf_cli_sgr(o, "1"), *red = vf_cli_sgr(o, "31"), *green = vf_cli_sgr(o, "32"),
		   *off = vf_cli_sgr(o, "0");
	fprintf(o, "%sModel%s  %s: %s parameters, %s trainable\n", bold, off, tg->id,
		vf_fmt_params(b1, sizeof b1, e0->params), vf_fmt_params(b2, sizeof b2, e0->trainable_params));
	char setup[512];
	size_t n = 0;
	n += (size_t)snprintf(setup + n, sizeof setup - n, "%s", vf_mode_name(s->mode));
	if (s->mode == VF_MODE_LORA && tg->dit)
		n += (size_t)snprintf(setup + n, sizeof setup - n, " r%d alpha %g on %s%s%s%s", s->lora_rank,
				      s->lora_alpha, s->lora_targets & VF_LORA_Q ? "to_q " : "",
				      s->lora_targets & VF_LORA_K ? "to_k " : "", s->lora_targets & VF_LORA_V ? "to_v " : "",
				      s->lora_targets & VF_LORA_O ? "to_out.0" : "");
	else if (s->mode == VF_MODE_LORA)
		n += (size_t)snprintf(setup + n, sizeof setup - n, " r%d alpha %g on %s", s->lora_rank,
				      s->lora_alpha, vf_lora_targets_format(s->lora_targets, b3, sizeof b3));
	n += (size_t)snprintf(setup + n, sizeof setup - n, ", %s", vf_precision_name(s->precision));
	if (s->quant != VF_QUANT_NONE)
		n += (size_t)snprintf(setup + n, sizeof setup - n, ", %s base", vf_quant_name(s->quant));
	if (s->mode != VF_MODE_INFER)
		n += (size_t)snprintf(setup + n, sizeof setup - n, ", %s (%s)", vf_optimizer_name(s->optimizer),
				      vf_optimizer_impl_name(s->optimizer_impl));
	if (tg->dit)
		n += (size_t)snprintf(setup + n, sizeof setup - n,
				      ", batch %" PRId64 " x %dx%dx%d video (%" PRId64 " video + %" PRId64
				      " audio tokens)",
				      s->batch, s->video_width, s->video_height, s->video_frames,
				      vf_dit_video_tokens(&tg->d, s->video_width, s->video_height, s->video_frames),
				      s->audio ? vf_dit_audio_tokens(&tg->d, s->video_frames) : 0);
	else if (tg->vision && strcmp(tg->vis.kind, "vlm") == 0)
		n += (size_t)snprintf(setup + n, sizeof setup - n,
				      ", batch %" PRId64 " x (%" PRId64 " text + %" PRId64 " image tokens)", s->batch,
				      s->seq, vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	else if (tg->vision)
		n += (size_t)snprintf(setup + n, sizeof setup - n,
				      ", batch %" PRId64 " x %dx%d images (%" PRId64 " tokens each)", s->batch,
				      s->video_width, s->video_height,
				      vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	else
		n += (size_t)snprintf(setup + n, sizeof setup - n, ", batch %" PRId64 " x %" PRId64 " tokens",
				      s->batch, s->seq);
	if (s->grad_accum > 1)
		n += (size_t)snprintf(setup + n, sizeof setup - n, ", accumulation %" PRId64, s->grad_accum);
	if (s->mode != VF_MODE_INFER)
		n += (size_t)snprintf(setup + n, sizeof setup - n, ", checkpointing %s", s->grad_ckpt ? "on" : "off");
	if (s->gpus > 1 && n < sizeof setup)
		snprintf(setup + n, sizeof setup - n, ", %d GPUs %s", s->gpus, vf_shard_name(s->shard));
	fprintf(o, "%sSetup%s  %s\n\n", bold, off, setup);

	fprintf(o, "%sMemory at the peak%s (%s phase%s%s)\n", bold, off, vf_phase_name(e0->peak_phase),
		nrows ? ", on " : "", nrows ? rows[0].spec.id : "");
	const char *hdr[] = {"term", "size", "% of peak"};
	struct vf_table t;
	vf_table_init(&t, 3, hdr);
	vf_table_set_right(&t, 1, true);
	vf_table_set_right(&t, 2, true);
	static const char *const label[VF_TERM_COUNT] = {
		"weights",      "gradients",   "optimizer states", "optimizer temporaries",
		"autocast copies", "activations", "logits and loss",  "KV cache",
		"CUDA context", "allocator reserve"};
	double peak = (double)e0->peak_bytes;
	for (int i = 0; i < VF_TERM_COUNT; i++) {
		int64_t v = vf_estimate_term(e0, (enum vf_term)i);
		if (v <= 0 && i != VF_TERM_WEIGHTS)
			continue;
		if (i == VF_TERM_CONTEXT) {
			vf_table_addf(&t, "peak allocated", vf_fmt_bytes(b1, sizeof b1, (double)e0->peak_allocated_bytes),
				      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * e0->peak_allocated_bytes / peak), b2));
		}
		vf_table_addf(&t, label[i], vf_fmt_bytes(b1, sizeof b1, (double)v),
			      (snprintf(b2, sizeof b2, "%.1f%%", 100.0 * v / peak), b2));
	}
	vf_table_addf(&t, "peak on device", vf_fmt_bytes(b1, sizeof b1, peak), "100.0%");
	vf_table_print(&t, o);
	vf_table_release(&t);
	if (e0->optimizer_full > e0->optimizer_bytes || e0->gradients_full > e0->gradients_bytes)
		fprintf(o, "(held outside the peak phase: gradients %s, optimizer temporaries %s)\n",
			vf_fmt_bytes(b1, sizeof b1, (double)e0->gradients_full),
			vf_fmt_bytes(b2, sizeof b2, (double)e0->optimizer_temp_full));

	fprintf(o, "\n%sGPUs%s (%s)\n", bold, off,
		strcmp(gsource, "given") == 0 ? "as given" : strcmp(gsource, "probed") == 0 ? "this machine" : "common cards: none given or found");
	const char *gh[] = {"GPU", "VRAM", "fits", "headroom", "max batch", "step", "tokens/s", "MFU"};
	vf_table_init(&t, 8, gh);
	for (int c = 1; c < 8; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		char id[64], mb[32], tps[32], mfu[32];
		if (r->count > 1)
			snprintf(id, sizeof id, "%s x%d", r->spec.id, r->count);
		else
			snprintf(id, sizeof id, "%s", r->spec.id);
		snprintf(mb, sizeof mb, "%" PRId64, r->max_batch);
		if (r->est.step_seconds > 0) {
			snprintf(tps, sizeof tps, "%.0f", r->est.tokens_per_second);
			snprintf(mfu, sizeof mfu, "%.0f%%", 100 * r->est.mfu);
		} else {
			snprintf(tps, sizeof tps, "-");
			snprintf(mfu, sizeof mfu, "-");
		}
		char fits[32];
		snprintf(fits, sizeof fits, "%s%s%s", r->fits ? green : red, r->fits ? "yes" : "no", off);
		vf_table_addf(&t, id, vf_fmt_bytes(b1, sizeof b1, (double)vf_estimate_gpu_bytes(&r->spec)), fits,
			      vf_fmt_bytes(b2, sizeof b2, (double)r->headroom), mb,
			      vf_fmt_seconds(b3, sizeof b3, r->est.step_seconds), tps, mfu);
	}
	vf_table_print(&t, o);
	vf_table_release(&t);
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		if (r->fits)
			continue;
		int64_t term = vf_estimate_term(&r->est, r->est.dominant);
		fprintf(o, "%s: does not fit: needs %s of %s; %s (%s, %.0f%% of the peak, %s phase) breaks it: try %s\n",
			r->spec.id, vf_fmt_bytes(b1, sizeof b1, (double)r->est.peak_bytes),
			vf_fmt_bytes(b2, sizeof b2, (double)vf_estimate_gpu_bytes(&r->spec)),
			vf_term_name(r->est.dominant), vf_fmt_bytes(b4, sizeof b4, (double)term),
			100.0 * term / (double)r->est.peak_bytes, vf_phase_name(r->est.peak_phase),
			remedy(r->est.dominant, s));
	}
	fprintf(o, "\n%sAssumptions%s\n", bold, off);
	for (int i = 0; i < a->n; i++)
		fprintf(o, "  - %s\n", a->items[i]);
}

static cJSON *to_json(const struct target *tg, const struct vf_setup *s, const struct gpu_row *rows,
		      int nrows, const struct vf_estimate *e0, const struct assume *a)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *m = cJSON_AddObjectToObject(o, "model");
	cJSON_AddStringToObject(m, "id", tg->id);
	cJSON_AddStringToObject(m, "kind", tg->vision ? tg->vis.kind : tg->dit ? "dit" : "llm");
	if (tg->vision) {
		cJSON_AddStringToObject(m, "family", tg->vis.family);
		cJSON_AddNumberToObject(m, "image_tokens",
					(double)vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0));
	}
	cJSON_AddNumberToObject(m, "params", (double)e0->params);
	cJSON_AddNumberToObject(m, "trainable_params", (double)e0->trainable_params);
	if (tg->dit) {
		/* per sample: latent tokens of the video and audio streams */
		cJSON_AddStringToObject(m, "source", tg->d.from_file ? "file" : "catalog");
		cJSON_AddNumberToObject(m, "layers", (double)tg->d.layers);
		cJSON_AddNumberToObject(m, "video_hidden", (double)tg->d.video_hidden);
		cJSON_AddNumberToObject(m, "audio_hidden", (double)tg->d.audio_hidden);
		cJSON_AddNumberToObject(m, "video_tokens", (double)vf_dit_video_tokens(&tg->d, s->video_width,
										      s->video_height, s->video_frames));
		cJSON_AddNumberToObject(m, "audio_tokens",
					s->audio ? (double)vf_dit_audio_tokens(&tg->d, s->video_frames) : 0);
	}
	cJSON *sj = vf_setup_to_json(s);
	cJSON_ReplaceItemInObjectCaseSensitive(sj, "context_mib",
					       cJSON_CreateNumber((double)(e0->context_bytes >> 20)));
	if (tg->dit && s->mode == VF_MODE_LORA) {
		/* the diffusers module names of the DiT's attention projections */
		char t[64] = "";
		static const char *const names[] = {"to_q", "to_k", "to_v", "to_out.0"};
		static const unsigned bits[] = {VF_LORA_Q, VF_LORA_K, VF_LORA_V, VF_LORA_O};
		for (int i = 0; i < 4; i++)
			if (s->lora_targets & bits[i]) {
				size_t n = strlen(t);
				snprintf(t + n, sizeof t - n, "%s%s", n ? "," : "", names[i]);
			}
		cJSON_ReplaceItemInObjectCaseSensitive(sj, "lora_targets", cJSON_CreateString(t));
	}
	cJSON_AddItemToObject(o, "setup", sj);
	cJSON_AddItemToObject(o, "memory", vf_estimate_memory_json(e0));
	cJSON *gs = cJSON_AddArrayToObject(o, "gpus");
	for (int i = 0; i < nrows; i++) {
		const struct gpu_row *r = &rows[i];
		cJSON *g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "id", r->spec.id);
		cJSON_AddNumberToObject(g, "count", r->count);
		cJSON_AddNumberToObject(g, "vram_bytes", (double)vf_estimate_gpu_bytes(&r->spec));
		cJSON_AddBoolToObject(g, "fits", r->fits);
		cJSON_AddNumberToObject(g, "headroom_bytes", (double)r->headroom);
		cJSON_AddNumberToObject(g, "max_batch", (double)r->max_batch);
		cJSON_AddNumberToObject(g, "peak_bytes", (double)r->est.peak_bytes);
		if (!r->fits)
			cJSON_AddStringToObject(g, "breaking_term", vf_term_name(r->est.dominant));
		if (r->est.step_seconds > 0) {
			cJSON_AddNumberToObject(g, "step_seconds", r->est.step_seconds);
			cJSON_AddNumberToObject(g, "tokens_per_second", r->est.tokens_per_second);
		} else {
			cJSON_AddNullToObject(g, "step_seconds");
			cJSON_AddNullToObject(g, "tokens_per_second");
		}
		cJSON_AddItemToArray(gs, g);
	}
	cJSON_AddItemToObject(o, "time", vf_estimate_time_json(e0));
	cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
	for (int i = 0; i < a->n; i++)
		cJSON_AddItemToArray(as, cJSON_CreateString(a->items[i]));
	return o;
}

/* --- whole run (--tokens / --steps / --price; lib/estimate/runcost.c) --------------- */

struct whole {
	double tokens;
	int64_t steps;
	double price; /* < 0: catalog */
};

static bool whole_run(const struct whole *w, const struct vf_setup *s, const struct gpu_row *r,
		      struct vf_run *run, struct vf_comm *comm)
{
	double step = vf_runcost_step_seconds(&r->est, s, &r->spec, comm);
	struct vf_run_in in = {
		.tokens = w->tokens,
		.steps = w->steps,
		.tokens_per_step = r->est.tokens_per_step,
		.step_seconds = step,
		.gpus = s->gpus,
		.price_usd_hour = w->price >= 0 ? w->price : r->spec.price_usd_hour,
	};
	struct vf_error err = {0};
	return r->fits && vf_runcost_run(&in, run, &err) == VF_OK;
}

static void whole_run_json(cJSON *o, const struct whole *w, const struct vf_setup *s,
			   const struct gpu_row *rows, int nrows)
{
	cJSON *rq = cJSON_AddObjectToObject(o, "run");
	if (w->tokens > 0)
		cJSON_AddNumberToObject(rq, "tokens", w->tokens);
	else
		cJSON_AddNullToObject(rq, "tokens");
	if (w->steps > 0)
		cJSON_AddNumberToObject(rq, "steps", (double)w->steps);
	else
		cJSON_AddNullToObject(rq, "steps");
	cJSON *gs = cJSON_GetObjectItemCaseSensitive(o, "gpus");
	for (int i = 0; i < nrows; i++) {
		cJSON *g = cJSON_GetArrayItem(gs, i);
		struct vf_run run;
		struct vf_comm comm;
		if (!g)
			break;
		if (!whole_run(w, s, &rows[i], &run, &comm)) {
			cJSON_AddNullToObject(g, "run");
			continue;
		}
		cJSON *x = cJSON_AddObjectToObject(g, "run");
		cJSON_AddNumberToObject(x, "steps", (double)run.steps);
		cJSON_AddNumberToObject(x, "tokens", run.tokens);
		cJSON_AddNumberToObject(x, "step_seconds", run.seconds / (double)run.steps);
		cJSON_AddNumberToObject(x, "comm_seconds", comm.exposed_seconds);
		cJSON_AddNumberToObject(x, "hours", run.hours);
		cJSON_AddNumberToObject(x, "gpu_hours", run.gpu_hours);
		if (run.cost_usd >= 0)
			cJSON_AddNumberToObject(x, "cost_usd", run.cost_usd);
		else
			cJSON_AddNullToObject(x, "cost_usd");
	}
	cJSON *as = cJSON_GetObjectItemCaseSensitive(o, "assumptions");
	for (const char *const *p = vf_runcost_assumptions(); *p && as; p++)
		cJSON_AddItemToArray(as, cJSON_CreateString(*p));
}

static void whole_run_print(const struct whole *w, const struct vf_setup *s,
			    const struct gpu_row *rows, int nrows)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	if (w->tokens > 0)
		printf("\nWhole run (%.3g tokens, %d GPU%s %s)\n", w->tokens, s->gpus,
		       s->gpus > 1 ? "s" : "", s->gpus > 1 ? vf_shard_name(s->shard) : "");
	else
		printf("\nWhole run (%lld steps, %d GPU%s %s)\n", (long long)w->steps, s->gpus,
		       s->gpus > 1 ? "s" : "", s->gpus > 1 ? vf_shard_name(s->shard) : "");
	const char *hdr[] = {"GPU", "steps", "step + comm", "time", "GPU-hours", "cost"};
	struct vf_table t;
	vf_table_init(&t, 6, hdr);
	for (int c = 1; c < 6; c++)
		vf_table_set_right(&t, c, true);
	for (int i = 0; i < nrows; i++) {
		struct vf_run run;
		struct vf_comm comm;
		if (!whole_run(w, s, &rows[i], &run, &comm)) {
			vf_table_addf(&t, rows[i].spec.id, "-", rows[i].fits ? "-" : "does not fit", "-", "-",
				      "-");
			continue;
		}
		char st[32];
		snprintf(st, sizeof st, "%lld", (long long)run.steps);
		char sc[64];
		snprintf(sc, sizeof sc, "%s + %s", vf_fmt_seconds(b1, sizeof b1, run.seconds / run.steps - comm.exposed_seconds),
			 vf_fmt_seconds(b2, sizeof b2, comm.exposed_seconds));
		snprintf(b4, sizeof b4, "%.1f", run.gpu_hours);
		if (run.cost_usd >= 0)
			snprintf(b5, sizeof b5, "$%.2f", run.cost_usd);
		else
			snprintf(b5, sizeof b5, "-");
		vf_table_addf(&t, rows[i].spec.id, st, sc, vf_fmt_seconds(b3, sizeof b3, run.seconds), b4,
			      b5);
	}
	vf_table_print(&t, stdout);
	vf_table_release(&t);
	printf("(cost = $/GPU-hour x GPUs x hours, %s; communication as in `vramfit help fit`)\n",
	       w->price >= 0 ? "--price" : "catalog prices");
}

/* The setup defaults of a DiT (LoRA on the attention projections, bf16,
 * checkpointing, the model's own sample or the LTX-2 trainer's video) and
 * of a vision model (its image size; a VLM's text length). */
static void dit_vision_defaults(const struct target *tg, struct vf_setup *s, struct assume *as)
{
	if (tg->dit) {
		if (!(s->given & VF_SETUP_G_MODE))
			s->mode = VF_MODE_LORA;
		if (!(s->given & VF_SETUP_G_PRECISION))
			s->precision = VF_PREC_BF16;
		if (!(s->given & VF_SETUP_G_LORA_TARGETS))
			s->lora_targets = VF_LORA_Q | VF_LORA_K | VF_LORA_V | VF_LORA_O;
		if (!(s->given & VF_SETUP_G_GRAD_CKPT))
			s->grad_ckpt = true;
		if (!(s->given & VF_SETUP_G_VIDEO) && tg->image_size > 0) {
			s->video_width = s->video_height = tg->image_size;
			s->video_frames = tg->frames > 0 ? tg->frames : 1;
		} else if (!(s->given & VF_SETUP_G_VIDEO)) {
			s->video_width = 960;
			s->video_height = 544;
			s->video_frames = 89;
		}
	} else if (tg->vision) {
		if (!(s->given & VF_SETUP_G_VIDEO)) {
			s->video_width = s->video_height = tg->image_size;
			s->video_frames = 1;
		}
		if (strcmp(tg->vis.kind, "vlm") == 0 && !(s->given & VF_SETUP_G_SEQ)) {
			int64_t img = vf_vision_tokens(&tg->vis, s->video_width, s->video_height, 0);
			s->seq = img < 2048 - 64 ? 2048 - img : 64;
			assume(as, "%" PRId64 " text tokens per sample: a 2048-token context with the image (--seq)",
			       s->seq);
		}
	}
}

static int run(int argc, char **argv)
{
	if (vf_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return VF_EXIT_OK;
	}
	struct vf_setup s;
	vf_setup_defaults(&s);
	struct vf_error err = {0};
	bool json = false;
	const char *model = NULL, *gt = NULL, *params = NULL;
	char *specs[MAX_GPUS];
	int nspecs = 0;
	struct whole w = {.tokens = 0, .steps = 0, .price = -1};
	for (int i = 1; i < argc;) {
		bool matched = false;
		if (vf_setup_parse_flag(&s, argc, argv, &i, &matched, &err))
			return vf_cli_usage("estimate", "%s", err.msg);
		if (matched)
			continue;
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			json = true;
			i++;
		} else if (strcmp(a, "--gpu") == 0 || strncmp(a, "--gpu=", 6) == 0) {
			const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[i + 1] : NULL);
			if (!v)
				return vf_cli_usage("estimate", "--gpu: expected a GPU id (vramfit gpus)");
			if (nspecs >= MAX_GPUS)
				return vf_cli_usage("estimate", "--gpu: at most %d", MAX_GPUS);
			specs[nspecs++] = (char *)v;
			i += a[5] == '=' ? 1 : 2;
		} else if (strcmp(a, "--tokens") == 0 || strcmp(a, "--steps") == 0 ||
			   strcmp(a, "--price") == 0) {
			double v;
			if (i + 1 >= argc)
				return vf_cli_usage("estimate", "%s: expected a value", a);
			const char *val = argv[i + 1];
			if (a[2] == 'p') {
				if (!vf_cli_number(val, 0, 1e6, false, &w.price))
					return vf_cli_usage("estimate", "--price %s: expected dollars per GPU-hour", val);
			} else if (!vf_runcost_parse_count(val, &v) || (a[2] == 's' && v != floor(v))) {
				return vf_cli_usage("estimate", "%s %s: expected a positive count (1e9, 22B)", a, val);
			} else if (a[2] == 't') {
				w.tokens = v;
			} else {
				w.steps = (int64_t)v;
			}
			i += 2;
		} else if (strcmp(a, "--params") == 0 || strcmp(a, "--check-groundtruth") == 0) {
			if (i + 1 >= argc)
				return vf_cli_usage("estimate", "%s: expected a value", a);
			if (a[2] == 'p')
				params = argv[i + 1];
			else
				gt = argv[i + 1];
			i += 2;
		} else if (a[0] == '-' && a[1]) {
			return vf_cli_usage("estimate", "unknown option '%s'", a);
		} else {
			if (model)
				return vf_cli_usage("estimate", "one MODEL only (got '%s' and '%s')", model, a);
			model = a;
			i++;
		}
	}
	if (gt)
		return check_groundtruth(gt, json);
	if (!model && !params)
		return vf_cli_usage("estimate", "expected a MODEL or --params N");
	if (model && params)
		return vf_cli_usage("estimate", "give a MODEL or --params N, not both");
	if (w.tokens > 0 && w.steps > 0)
		return vf_cli_usage("estimate", "give --tokens or --steps, not both");

	struct assume as = {0};
	struct target tg;
	memset(&tg, 0, sizeof tg);
	bool t5 = false;
	if (params) {
		double p;
		if (!vf_runcost_parse_count(params, &p) || p < 1e5 || p > 1e14)
			return vf_cli_usage("estimate", "--params: expected a parameter count (7e9, 7B, 350M), got '%s'",
					    params);
		vf_estimate_generic_arch((int64_t)p, &tg.arch);
		snprintf(tg.id, sizeof tg.id, "generic-%s", params);
		assume(&as, "a generic llama-like transformer: hidden %" PRId64 ", %" PRId64
			    " layers, SwiGLU MLP %" PRId64 ", vocabulary 32000",
		       tg.arch.hidden, tg.arch.layers, tg.arch.ffn);
	} else {
		struct vf_model *m = NULL;
		if (vf_model_load(model, &m, &err))
			return vf_cli_fail_err(&err);
		snprintf(tg.id, sizeof tg.id, "%s", m->entry ? m->entry->id : model);
		if (m->entry && strcmp(m->entry->kind, "dit") == 0) {
			char what[200];
			snprintf(what, sizeof what, "%s: model %s", m->entry->file, m->entry->id);
			vf_status st = vf_dit_from_json(m->entry->raw, what, &tg.d, &err);
			if (st) {
				vf_model_free(m);
				return vf_cli_fail_err(&err);
			}
			tg.dit = true;
			const cJSON *list = cJSON_GetObjectItemCaseSensitive(m->entry->raw, "assumptions");
			const cJSON *it;
			cJSON_ArrayForEach(it, list)
			if (cJSON_IsString(it))
				assume(&as, "%s (catalog)", it->valuestring);
		} else if (dit_part(m)->has_vision) {
			if (dit_part(m) != m)
				assume(&as, "the pipeline's transformer component (%s)", dit_part(m)->path);
			if (vision_target(dit_part(m), &tg, &as, &err)) {
				vf_model_free(m);
				return vf_cli_fail_err(&err);
			}
		} else if (dit_part(m)->has_ltx) {
			if (dit_part(m) != m)
				assume(&as, "the pipeline's transformer component (%s)", dit_part(m)->path);
			if (ltx_target(dit_part(m), &tg, &as, &err)) {
				vf_model_free(m);
				return vf_cli_fail_err(&err);
			}
		} else if (m->has_adapter && !(m->has_arch && (m->arch.known & VF_ARCH_F_HIDDEN) &&
						(m->arch.known & VF_ARCH_F_VOCAB))) {
			vf_model_free(m);
			return vf_cli_fail("%s: a LoRA adapter without its base model's config: estimate the "
					   "base model (a catalog id or its config.json) with --mode lora "
					   "--lora-rank R --lora-targets LIST",
					   model);
		} else if (m->has_arch && (m->arch.known & VF_ARCH_F_HIDDEN) &&
			   (m->arch.known & VF_ARCH_F_LAYERS)) {
			tg.arch = m->arch;
			complete_arch(&tg.arch, &as);
			t5 = strcmp(m->arch.family, "t5") == 0;
			if (!(m->arch.known & VF_ARCH_F_FAMILY))
				assume(&as, "architecture family unknown: llama-like layers");
			if (m->has_adapter && !(s.given & VF_SETUP_G_MODE)) {
				s.mode = VF_MODE_LORA;
				s.given |= VF_SETUP_G_MODE;
				assume(&as, "a PEFT adapter: --mode lora with its rank and targets");
				if (m->adapter.rank > 0 && !(s.given & VF_SETUP_G_LORA_RANK)) {
					s.lora_rank = (int)m->adapter.rank;
					s.given |= VF_SETUP_G_LORA_RANK;
				}
			}
		} else if (m->params > 0) {
			vf_estimate_generic_arch(m->params, &tg.arch);
			assume(&as, "no architecture found: a generic llama-like transformer of %" PRId64 " parameters",
			       m->params);
		} else {
			vf_model_free(m);
			return vf_cli_fail("%s: no architecture or parameter count to estimate from", model);
		}
		vf_model_free(m);
	}
	if (tg.dit || tg.vision)
		dit_vision_defaults(&tg, &s, &as);
	else if (s.given & (VF_SETUP_G_VIDEO | VF_SETUP_G_TEXT_ENCODER))
		return vf_cli_usage("estimate", "--video and --text-encoder apply to video DiTs (e.g. ltx-2-19b)");
	if (t5 && !s.target_seq)
		s.target_seq = s.seq;
	if (vf_setup_finish(&s, &err))
		return vf_cli_usage("estimate", "%s", err.msg);

	struct gpu_row *rows = calloc(MAX_GPUS, sizeof *rows);
	if (!rows)
		return vf_cli_fail("out of memory");
	int nrows = 0;
	const char *gsource = "";
	if (collect_gpus(specs, nspecs, rows, &nrows, &gsource, &err)) {
		free(rows);
		return err.code == VF_EUSAGE ? vf_cli_usage("estimate", "%s", err.msg) : vf_cli_fail_err(&err);
	}
	bool multi = false;
	for (int i = 0; i < nrows; i++) {
		struct gpu_row *r = &rows[i];
		/* several GPUs of a kind and no --gpus: the run uses them all
		 * (data parallel unless --shard says otherwise) */
		struct vf_setup rs = s;
		if (r->count > 1 && !(s.given & VF_SETUP_G_GPUS)) {
			rs.gpus = r->count;
			if (!(s.given & VF_SETUP_G_SHARD))
				rs.shard = VF_SHARD_DDP;
			multi = true;
		}
		run_one(&tg, &rs, &r->spec, &r->est);
		r->fits = vf_estimate_fits(&r->est, &r->spec, &r->headroom);
		r->max_batch = max_batch(&tg, &rs, &r->spec);
	}
	if (multi)
		assume(&as, "GPUs of one kind given as ID:N run one data-parallel job over all N (--gpus, --shard)");
	struct vf_estimate e0;
	if (nrows)
		e0 = rows[0].est;
	else
		run_one(&tg, &s, NULL, &e0);
	setup_assumptions(&s, tg.dit, tg.vision && strcmp(tg.vis.kind, "vlm") != 0, t5, multi, &as);
	estimate_assumptions(&e0, &s, nrows ? &rows[0].spec : NULL, &as);
	if (json) {
		cJSON *o = to_json(&tg, &s, rows, nrows, &e0, &as);
		if (w.tokens > 0 || w.steps > 0)
			whole_run_json(o, &w, &s, rows, nrows);
		vf_cli_print_json(o);
		cJSON_Delete(o);
	} else {
		print_human(&tg, &s, rows, nrows, gsource, &e0, &as);
		if (w.tokens > 0 || w.steps > 0)
			whole_run_print(&w, &s, rows, nrows);
	}
	free(rows);
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_estimate = {
	.name = "estimate",
	.summary = "peak memory and step time of a run; whether it fits each GPU",
	.usage = usage,
	.run = run,
};
