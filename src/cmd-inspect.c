/* cmd-inspect.c - `vramfit inspect PATH [--json]`: what a model on disk (or
 * a catalog id) is: files, tensors, exact parameters by dtype and group,
 * architecture, components, adapter. Reads headers only. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/model/model.h"

/* "218,944" */
static const char *fmt_count(char *out, size_t n, int64_t v)
{
	char raw[32];
	snprintf(raw, sizeof raw, "%" PRId64, v < 0 ? -v : v);
	size_t len = strlen(raw), o = 0;
	if (v < 0 && o < n - 1)
		out[o++] = '-';
	for (size_t i = 0; i < len && o < n - 1; i++) {
		if (i && (len - i) % 3 == 0 && o < n - 1)
			out[o++] = ',';
		out[o++] = raw[i];
	}
	out[o] = 0;
	return out;
}

static const char *fmt_size(char *out, size_t n, int64_t b)
{
	if (b >= (int64_t)1 << 30)
		return vf_fmt_bytes(out, n, (double)b);
	if (b >= 1 << 20)
		snprintf(out, n, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(out, n, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(out, n, "%" PRId64 " B", b);
	return out;
}

static void row(struct vf_table *t, const char *k, const char *v)
{
	vf_table_addf(t, k, v);
}

static void print_arch(struct vf_table *t, const struct vf_arch *a)
{
	char line[512];
	size_t o = 0;
	o += (size_t)snprintf(line + o, sizeof line - o, "%s",
			      (a->known & VF_ARCH_F_FAMILY) ? a->family : "unknown family");
	static const struct {
		unsigned bit;
		const char *name;
		size_t off;
	} f[] = {
		{VF_ARCH_F_HIDDEN, "hidden", offsetof(struct vf_arch, hidden)},
		{VF_ARCH_F_LAYERS, "layers", offsetof(struct vf_arch, layers)},
		{VF_ARCH_F_HEADS, "heads", offsetof(struct vf_arch, heads)},
		{VF_ARCH_F_KV_HEADS, "kv_heads", offsetof(struct vf_arch, kv_heads)},
		{VF_ARCH_F_HEAD_DIM, "head_dim", offsetof(struct vf_arch, head_dim)},
		{VF_ARCH_F_FFN, "ffn", offsetof(struct vf_arch, ffn)},
		{VF_ARCH_F_VOCAB, "vocab", offsetof(struct vf_arch, vocab)},
		{VF_ARCH_F_EXPERTS, "experts", offsetof(struct vf_arch, experts)},
		{VF_ARCH_F_MAX_POSITIONS, "max_positions", offsetof(struct vf_arch, max_positions)},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0] && o < sizeof line; i++) {
		int64_t v = *(const int64_t *)((const char *)a + f[i].off);
		if (f[i].bit == VF_ARCH_F_EXPERTS && v == 0)
			continue;
		if (a->known & f[i].bit)
			o += (size_t)snprintf(line + o, sizeof line - o, ", %s %" PRId64 "%s",
					      f[i].name, v, (a->inferred & f[i].bit) ? "*" : "");
		else
			o += (size_t)snprintf(line + o, sizeof line - o, ", %s ?", f[i].name);
	}
	if (o < sizeof line && (a->known & VF_ARCH_F_TIED))
		o += (size_t)snprintf(line + o, sizeof line - o, ", %s%s",
				      a->tied_embeddings ? "tied embeddings" : "untied embeddings",
				      (a->inferred & VF_ARCH_F_TIED) ? "*" : "");
	if (o < sizeof line)
		snprintf(line + o, sizeof line - o, " (from %s%s)", a->source,
			 a->inferred ? "; * inferred" : "");
	row(t, "architecture", line);
}

/* An LTX video DiT: its streams, and whether the layout the config
 * describes counts the parameters the file holds. */
static void print_ltx(struct vf_table *t, const struct vf_model *m)
{
	const struct vf_ltx_arch *a = &m->ltx;
	const struct vf_ltx_parts *pt = &m->ltx_parts;
	/* a unified checkpoint: the transformer is what its prefix holds */
	int64_t params = m->files > 0 && pt->transformer > 0 ? pt->transformer : m->params;
	char line[512], c[64];
	size_t o = (size_t)snprintf(line, sizeof line,
				    "LTX video DiT: %" PRId64 " blocks, video %" PRId64 " (%" PRId64
				    " heads), text cross-attention %" PRId64,
				    a->layers, a->heads * a->head_dim, a->heads, a->cross_dim);
	if (a->audio && o < sizeof line)
		o += (size_t)snprintf(line + o, sizeof line - o, ", audio %" PRId64 " (%" PRId64 " heads)",
				      a->audio_heads * a->audio_head_dim, a->audio_heads);
	if (o < sizeof line)
		snprintf(line + o, sizeof line - o, "%s%s%s (from %s)",
			 a->gated_attention ? ", gated attention" : "",
			 a->cross_attention_adaln ? ", cross-attention AdaLN" : "",
			 a->ff_bias ? "" : ", FFN without bias", a->source);
	row(t, "architecture", line);
	int64_t lp = vf_ltx_params(a);
	snprintf(line, sizeof line, "%s%s", fmt_count(c, sizeof c, lp),
		 params >= 0 && lp != params ? " (differs from the tensors: approximate layout)"
					     : " (equals the tensors)");
	row(t, "layout params", line);
	snprintf(line, sizeof line, "%s (video %" PRId64 " and audio %" PRId64 " blocks of %" PRId64 " and %" PRId64
		 "%s; kept on the GPU in bf16 by the trainer)",
		 fmt_count(c, sizeof c, vf_ltx_connector_params(a)), a->conn_layers, a->audio ? a->audio_conn_layers : 0,
		 a->conn_heads * a->conn_head_dim, a->audio ? a->audio_conn_heads * a->audio_conn_head_dim : 0,
		 a->conn_gated ? ", gated" : "");
	row(t, "connectors", line);
	if (m->files > 0 && pt->transformer != m->params) {
		static const char *const names[] = {"transformer", "video connector", "audio connector",
						    "text projection", "VAE decoder", "VAE encoder",
						    "audio VAE", "vocoder", "other"};
		const int64_t v[] = {pt->transformer, pt->video_connector, pt->audio_connector,
				     pt->text_projection, pt->vae_decoder, pt->vae_encoder,
				     pt->audio_vae, pt->vocoder, pt->other};
		size_t o = 0;
		line[0] = 0;
		for (size_t i = 0; i < sizeof v / sizeof v[0] && o < sizeof line; i++)
			if (v[i] > 0)
				o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %s", o ? ", " : "", names[i],
						      fmt_count(c, sizeof c, v[i]));
		row(t, "components", line);
	}
	if (a->unknown[0]) {
		snprintf(line, sizeof line, "not understood: %s; layout approximate", a->unknown);
		row(t, "warning", line);
	}
	if (a->assumed[0]) {
		snprintf(line, sizeof line, "%s (not in the file)", a->assumed);
		row(t, "assumed", line);
	}
}

/* A ViT / CLIP / VLM / diffusers DiT: its parts, what each stage trains,
 * the tokens of one input. */
static void print_vision(struct vf_table *t, const struct vf_vision *v, int64_t file_params)
{
	char line[512], c[64];
	if (strcmp(v->kind, "dit") == 0)
		snprintf(line, sizeof line,
			 "%s diffusion transformer: %" PRId64 " blocks of %" PRId64 " (%" PRId64
			 " heads); %" PRId64 " tokens per %" PRId64 " px sample%s (1 token per %d px%s)",
			 v->family, v->dit_layers, v->parts[0].hidden, v->parts[0].heads,
			 vf_vision_tokens(v, 0, 0, 0), v->image_size, v->frames > 1 ? " clip" : "",
			 v->spatial_compression, v->temporal_compression > 1 ? ", frames per latent after the first" : "");
	else if (strcmp(v->kind, "speech") == 0 && v->nparts == 2 && strcmp(v->family, "speecht5-tts") == 0)
		snprintf(line, sizeof line,
			 "%s text-to-speech: encoder %" PRId64 " layers over %" PRId64
			 " text tokens, decoder %" PRId64 " layers over %" PRId64 " mel steps",
			 v->family, v->parts[0].layers, v->parts[0].tokens, v->parts[1].layers,
			 v->parts[1].tokens);
	else if (strcmp(v->kind, "speech") == 0 && v->nparts == 2)
		snprintf(line, sizeof line,
			 "%s speech encoder-decoder: encoder %" PRId64 " layers over %" PRId64
			 " audio positions, decoder %" PRId64 " layers over up to %" PRId64 " tokens",
			 v->family, v->parts[0].layers, v->parts[0].tokens, v->parts[1].layers,
			 v->parts[1].tokens);
	else if (strcmp(v->kind, "speech") == 0 && v->nparts == 1)
		snprintf(line, sizeof line, "%s speech encoder: %" PRId64 " layers of %" PRId64 " over %" PRId64
					    " audio frames per sample",
			 v->family, v->parts[0].layers, v->parts[0].hidden, v->parts[0].tokens);
	else if (strcmp(v->kind, "unet") == 0)
		snprintf(line, sizeof line,
			 "%s: %d resolution levels, %" PRId64 " transformer blocks, %" PRId64
			 " tokens per %" PRId64 " px image at the finest level (1 per %d px)",
			 v->family, v->nlevels, v->dit_layers, vf_vision_tokens(v, 0, 0, 0), v->image_size,
			 v->spatial_compression);
	else if (strcmp(v->kind, "vae") == 0 && strstr(v->family, "audio"))
		snprintf(line, sizeof line, "%s: %" PRId64 " latent channels, %dx in time and %dx in mel bins",
			 v->family, v->latent_channels, v->temporal_compression, v->spatial_compression);
	else if (strcmp(v->kind, "vae") == 0)
		snprintf(line, sizeof line, "%s: %" PRId64 " latent channels, %d px per latent pixel", v->family,
			 v->latent_channels, v->spatial_compression);
	else if (strcmp(v->kind, "unknown") == 0)
		snprintf(line, sizeof line, "%s: a diffusers class not understood (no count)", v->family);
	else
		snprintf(line, sizeof line, "%s %s: %" PRId64 " px images, patch %" PRId64 ", %" PRId64
					    " tokens per image%s",
			 v->family, v->kind, v->image_size, v->patch_size, v->image_tokens,
			 v->class_token ? " (class token included)" : "");
	row(t, "architecture", line);
	for (int i = 0; i < v->nparts; i++) {
		const struct vf_vision_part *p = &v->parts[i];
		size_t o = (size_t)snprintf(line, sizeof line, "%s", fmt_count(c, sizeof c, p->params));
		if (p->layers && o < sizeof line)
			o += (size_t)snprintf(line + o, sizeof line - o, ", %" PRId64 " layers x %" PRId64,
					      p->layers, p->hidden);
		if (v->stages == 2 && o < sizeof line)
			snprintf(line + o, sizeof line - o, "; stage 1 %s, stage 2 %s",
				 p->trained[0] ? "trained" : "frozen", p->trained[1] ? "trained" : "frozen");
		row(t, p->name, line);
	}
	if (strcmp(v->kind, "unknown") == 0)
		snprintf(line, sizeof line, "none: not understood");
	else
	snprintf(line, sizeof line, "%s%s", fmt_count(c, sizeof c, v->params),
		 file_params < 0 ? " (counted from the config)"
		 : file_params == v->params ? " (equals the tensors)"
					     : " (differs from the tensors: approximate layout)");
	row(t, "layout params", line);
	if (v->unknown[0]) {
		snprintf(line, sizeof line, "not understood: %s; %s", v->unknown,
			 strcmp(v->kind, "unknown") == 0 ? "not counted" : "count approximate");
		row(t, "warning", line);
	}
	if (v->assumed[0]) {
		snprintf(line, sizeof line, "%s (not in the config)", v->assumed);
		row(t, "assumed", line);
	}
}

/* __metadata__ as "key=value, ..." (values cut at 40 characters). */
static void row_metadata(struct vf_table *tb, const cJSON *metadata)
{
	char line[512];
	size_t o = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, metadata)
	{
		if (o >= sizeof line - 1)
			break;
		const char *s = cJSON_IsString(v) ? v->valuestring : "";
		o += (size_t)snprintf(line + o, sizeof line - o, "%s%s=%.40s%s", o ? ", " : "",
				      v->string, s, strlen(s) > 40 ? "..." : "");
	}
	row(tb, "metadata", line);
}

/* The parameters by group: embedding, attention, mlp, norm, experts, other. */
static void row_groups(struct vf_table *tb, const struct vf_model *m)
{
	char line[512];
	const struct vf_param_groups *g = &m->groups;
	char e[40], at[40], ml[40], no[40], ex[40], ot[40];
	snprintf(line, sizeof line,
		 "embedding %s, attention %s, mlp %s, norm %s, experts %s, other %s (from %s)",
		 fmt_count(e, sizeof e, g->embedding), fmt_count(at, sizeof at, g->attention),
		 fmt_count(ml, sizeof ml, g->mlp), fmt_count(no, sizeof no, g->norm),
		 fmt_count(ex, sizeof ex, g->experts), fmt_count(ot, sizeof ot, g->other),
		 m->groups_source);
	row(tb, "param groups", line);
}

/* A PEFT adapter: rank, alpha, targets, parameters. */
static void row_adapter(struct vf_table *tb, const struct vf_model *m)
{
	char a[128], line[512];
	size_t o = 0;
	o += (size_t)snprintf(line + o, sizeof line - o, "rank ");
	o += (size_t)snprintf(line + o, sizeof line - o,
			      m->adapter.rank >= 0 ? "%" PRId64 : "?", m->adapter.rank);
	if (m->adapter.alpha >= 0)
		o += (size_t)snprintf(line + o, sizeof line - o, ", alpha %g",
				      m->adapter.alpha);
	else
		o += (size_t)snprintf(line + o, sizeof line - o, ", alpha ?");
	o += (size_t)snprintf(line + o, sizeof line - o, ", targets");
	for (size_t i = 0; i < m->adapter.ntargets && o < sizeof line; i++)
		o += (size_t)snprintf(line + o, sizeof line - o, "%s%s", i ? "," : " ",
				      m->adapter.targets[i]);
	if (o < sizeof line)
		snprintf(line + o, sizeof line - o, ", %s params",
			 fmt_count(a, sizeof a, m->adapter.params));
	row(tb, "adapter", line);
}

/* The rows without the empty header row, indented for a component. */
static void print_rows(struct vf_table *t, int indent)
{
	struct vf_table body = *t;
	body.cells = t->cells + 1;
	body.nrow = t->nrow - 1;
	if (indent) {
		for (int r = 0; r < body.nrow; r++) {
			char *k = body.cells[r][0];
			char *nk = malloc(strlen(k) + 3);
			if (!nk)
				continue;
			sprintf(nk, "  %s", k);
			free(k);
			body.cells[r][0] = nk;
		}
	}
	vf_table_print(&body, stdout);
}

/* Rows of the state-space layers and of the parameters a token passes
 * through (MoE). */
static void print_arch_more(struct vf_table *t, const struct vf_arch *a)
{
	char line[512], c[64], d[64];
	if (a->ssm_layers > 0) {
		double st = (double)a->ssm_conv_dim * (double)a->ssm_conv +
			    (double)a->ssm_inner * (double)a->ssm_state;
		snprintf(line, sizeof line,
			 "%s: %" PRId64 " of %" PRId64 " layers (%" PRId64 " attention), inner %" PRId64
			 ", state %" PRId64 ", conv %" PRId64 "%s; recurrent state %s elements per "
			 "sequence",
			 strcmp(a->family, "recurrent_gemma") == 0 ? "RG-LRU"
			 : a->ssm_heads > 0			   ? "Mamba-2"
								   : "Mamba",
			 a->ssm_layers, a->layers,
			 a->attn_layers > 0 ? a->attn_layers : 0, a->ssm_inner, a->ssm_state, a->ssm_conv,
			 a->ssm_heads > 0 ? ", heads" : "",
			 fmt_count(c, sizeof c, (int64_t)(st * (double)a->ssm_layers)));
		if (a->ssm_heads > 0) { /* the heads after "heads" */
			char *h = strstr(line, ", heads");
			char tail[256];
			snprintf(tail, sizeof tail, "%s", h + 7);
			snprintf(h, sizeof line - (size_t)(h - line), ", heads %" PRId64 "%s", a->ssm_heads,
				 tail);
		}
		row(t, "ssm", line);
	}
	if (a->experts > 0) {
		int64_t act = vf_arch_active_params(a);
		if (act >= 0) {
			snprintf(line, sizeof line, "%s (%s) per token: %" PRId64 " of %" PRId64
				 " experts routed",
				 fmt_count(c, sizeof c, act), vf_fmt_params(d, sizeof d, act),
				 a->experts_per_token, a->experts);
			row(t, "active params", line);
		}
	}
}

/* Where a Hub id's files came from. */
static void row_hub(struct vf_table *t, const struct vf_model *m)
{
	char line[4400];
	if (!m->hub_source[0])
		return;
	snprintf(line, sizeof line, "%s%s%s%s%s", m->hub_source, m->hub_commit[0] ? ", commit " : "",
		 m->hub_commit, m->hub_dir[0] ? ", in " : "", m->hub_dir);
	row(t, "from", line);
}

/* Parameters per dtype, or per ggml type with bytes as stored (GGUF). */
static void row_types(struct vf_table *t, const struct vf_model *m)
{
	char a[128], b[128], line[512];
	size_t o = 0;
	line[0] = 0;
	for (int d = 0; m->gguf && d < VF_GGML_TYPES && o < sizeof line; d++)
		if (m->gguf->type_params[d])
			o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %s (%s)", o ? ", " : "",
					      vf_ggml_type_name(d),
					      fmt_count(a, sizeof a, m->gguf->type_params[d]),
					      fmt_size(b, sizeof b, (int64_t)m->gguf->type_bytes[d]));
	for (int d = 0; !m->gguf && d < VF_DT_COUNT && o < sizeof line; d++)
		if (m->dtype_params[d])
			o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %s", o ? ", " : "",
					      vf_dtype_name((enum vf_dtype)d),
					      fmt_count(a, sizeof a, m->dtype_params[d]));
	if (o >= sizeof line - 1) /* a long list: say it goes on */
		memcpy(line + sizeof line - 5, " ...", 5);
	row(t, m->gguf ? "ggml types" : "dtypes", o ? line : "none");
}

/* A quantized checkpoint: what is held quantized, at what bytes a weight. */
static void row_quant(struct vf_table *t, const struct vf_qconfig *q)
{
	char a[128], line[512];
	if (q->understood && q->params < 0) /* a config without weights: nothing counted */
		snprintf(line, sizeof line, "%s %d-bit%s%s (config.json; no weights to count); loads as %s",
			 q->method, q->bits, q->format[0] ? " " : "", q->format,
			 q->base_quant[0] ? q->base_quant : "stored");
	else if (q->understood)
		snprintf(line, sizeof line,
			 "%s %d-bit%s%s: %s parameters held quantized, %.3f bytes each as stored "
			 "(scales and zeros included); loads as %s",
			 q->method, q->bits, q->format[0] ? " " : "", q->format,
			 fmt_count(a, sizeof a, q->quantized), q->bytes_per_weight,
			 q->base_quant[0] ? q->base_quant : "stored");
	else
		snprintf(line, sizeof line, q->params < 0 && !q->quantized
			 ? "%s: not understood; the weights' bytes as stored are not known (approximate)"
			 : "%s: not understood; the count is the headers' elements",
			 q->method);
	row(t, "quantization", line);
}

/* A VLM on a MoE language model: the LM's active part per text token. */
static void print_vlm_active(struct vf_table *t, const struct vf_vision *v)
{
	struct vf_param_groups g;
	if (!v->has_lm || v->lm.experts <= 0 || !vf_arch_param_groups(&v->lm, &g))
		return;
	int64_t act = vf_arch_active_params(&v->lm);
	if (act < 0)
		return;
	char line[512], a[64], b[64], c[64];
	snprintf(line, sizeof line, "%s (%s) per text token in the language model: %" PRId64
		 " of %" PRId64 " experts routed; the towers' %s run per image",
		 fmt_count(a, sizeof a, act), vf_fmt_params(b, sizeof b, act), v->lm.experts_per_token,
		 v->lm.experts, vf_fmt_params(c, sizeof c, v->params - g.total));
	row(t, "active params", line);
}

/* The rows that qualify the count: a VLM's active part on a MoE language
 * model, what is approximate, the MTP modules outside the count. */
static void row_notes(struct vf_table *t, const struct vf_model *m)
{
	char a[128], b[128], line[512];
	if (m->has_vision)
		print_vlm_active(t, &m->vision);
	if (m->has_arch && m->arch.approximate) {
		snprintf(line, sizeof line, "not understood: %s; %s", m->arch.not_understood,
			 m->files >= 0 || m->entry ? "the count is the files', the architecture approximate"
			 : m->params < 0		   ? "no count"
			 : m->count_exact ? "the count is the config's, the weights' bytes as stored unknown"
						   : "count is approximate");
		row(t, "approximate", line);
	}
	if (m->has_arch && m->arch.mtp_layers > 0) {
		int64_t mtp = vf_arch_mtp_params(&m->arch);
		snprintf(line, sizeof line,
			 "%" PRId64 " MTP module(s), %s parameters in the checkpoint, not built by "
			 "transformers: not in the count (count + MTP = %s)",
			 m->arch.mtp_layers, fmt_count(a, sizeof a, mtp),
			 fmt_count(b, sizeof b, m->groups.total + mtp));
		row(t, "mtp", line);
	}
}

static void print_model(const struct vf_model *m, int indent)
{
	struct vf_table t;
	const char *hdr[] = {"", ""};
	vf_table_init(&t, 2, hdr);
	char a[128], b[128], line[512];
	if (m->name[0])
		row(&t, m->entry ? "id" : m->gguf ? "name" : "component", m->name);
	row(&t, "path", m->path);
	row(&t, "format", m->format);
	row_hub(&t, m);
	if (m->files >= 0) {
		if (m->shard_count > 1)
			snprintf(line, sizeof line, "%" PRId64 " (shard %d of %d: this file's tensors only; its folder "
						 "or index inspects the whole model)",
				 m->files, m->shard_index, m->shard_count);
		else
			snprintf(line, sizeof line, "%" PRId64, m->files);
		row(&t, "files", line);
	}
	if (m->tensors >= 0) {
		snprintf(line, sizeof line, "%" PRId64, m->tensors);
		row(&t, "tensors", line);
	}
	if (m->params >= 0) {
		snprintf(line, sizeof line, "%s (%s)", fmt_count(a, sizeof a, m->params),
			 vf_fmt_params(b, sizeof b, m->params));
		row(&t, "params", line);
	}
	if (m->bytes >= 0) {
		snprintf(line, sizeof line, "%s (%s)", fmt_size(a, sizeof a, m->bytes),
			 fmt_count(b, sizeof b, m->bytes));
		row(&t, "bytes", line);
		row_types(&t, m);
	}
	if (m->has_quant)
		row_quant(&t, &m->quant);
	if (m->metadata && cJSON_GetArraySize(m->metadata) > 0)
		row_metadata(&t, m->metadata);
	if (m->has_vision)
		print_vision(&t, &m->vision, m->files > 0 ? m->params : -1);
	else if (m->has_ltx)
		print_ltx(&t, m);
	else if (m->has_arch)
		print_arch(&t, &m->arch);
	if (m->has_arch && !m->has_vision && !m->has_ltx)
		print_arch_more(&t, &m->arch);
	row_notes(&t, m);
	if (m->has_groups)
		row_groups(&t, m);
	if (m->has_adapter)
		row_adapter(&t, m);
	print_rows(&t, indent);
	vf_table_release(&t);
	for (size_t i = 0; i < m->ncomponents; i++) {
		printf("\n");
		print_model(m->components[i], 1);
	}
}

struct inspect_args {
	bool json;
};

#define OPT_T struct inspect_args
static const struct vf_option options[] = {
	OPT_BOOL("json", json, "the JSON object of README 'vramfit inspect' (stable fields)"),
	OPT_END(),
};
#undef OPT_T

static int run(int argc, char **argv)
{
	struct inspect_args a = {0};
	int n, rc = vf_opt_parse("inspect", options, &a, argc, argv, 0, &n);
	if (rc >= 0)
		return rc;
	if (n > 1)
		return vf_cli_usage("inspect", "one PATH only ('%s' and '%s')", argv[0], argv[1]);
	if (n == 0)
		return vf_cli_usage("inspect", "missing PATH (a file, directory or catalog id)");
	const char *path = argv[0];
	bool json = a.json;
	struct vf_model *m = NULL;
	struct vf_error err = {0};
	if (vf_model_load(path, &m, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	if (json) {
		cJSON *o = vf_model_to_json(m);
		vf_cli_print_json(o);
		cJSON_Delete(o);
	} else {
		print_model(m, 0);
	}
	vf_model_free(m);
	return VF_EXIT_OK;
}

const struct vf_cli_command vf_cmd_inspect = {
	.name = "inspect",
	.summary = "parameters, dtypes and architecture of a model (headers only)",
	.usage =
		"usage: vramfit inspect PATH [--json]\n"
		"\n"
		"Read a model's safetensors headers (never the weights) and report its\n"
		"files, tensors, exact parameter count by dtype and by group (embedding,\n"
		"attention, mlp, norm, experts, other), bytes, __metadata__, and its\n"
		"architecture (from config.json, the safetensors metadata, or inferred from\n"
		"tensor names: inferred fields are marked *).\n"
		"\n"
		"PATH is one of:\n"
		"  a .safetensors file\n"
		"  a *.safetensors.index.json, or a directory holding one, with its shards\n"
		"    (every shard must exist and agree with the index)\n"
		"  a Hugging Face model directory (config.json + weights)\n"
		"  a PEFT adapter directory (adapter_config.json + adapter_model.safetensors)\n"
		"  a diffusers-style directory (components in subfolders): one report each\n"
		"  a config.json (architecture and computed parameters only)\n"
		"  a .gguf file (llama.cpp): tensors, ggml types, bytes as stored\n"
		"  a Hub id org/name[@revision]: the Hugging Face cache, vramfit's cache of\n"
		"    fetched headers, the catalog, then the Hub (HF_ENDPOINT, HF_TOKEN;\n"
		"    headers only, by range requests; none with HF_HUB_OFFLINE=1)\n"
		"  a catalog model by id, Hub id or name (see 'vramfit models')\n",
	.options = options,
	.tail = "Exit status: 0 ok, 1 the model could not be read (one line names the file\n"
		"and the problem), 2 usage error.\n",
	.run = run,
};
