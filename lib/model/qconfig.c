/* qconfig.c - quantized checkpoints (qconfig.h): quantization_config read, the
 * packed tensors unpacked into parameters, storage tensors named and
 * left out of the count. */
#include "vramfit/model/qconfig.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "vramfit/base/json.h"

#include "vramfit/model/model.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cfg_int(const cJSON *o, const char *key, int def)
{
	int64_t v;
	return vf_json_get_i64(o, key, &v) && v > 0 && v <= 64 ? (int)v : def;
}

/* compressed-tensors: the weights' bits and group of the first config group */
static void compressed_tensors(const cJSON *qc, struct vf_qconfig *q)
{
	const char *fmt = vf_json_get_str(qc, "format");
	snprintf(q->format, sizeof q->format, "%s", fmt ? fmt : "");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(qc, "config_groups");
	const cJSON *g = groups ? groups->child : NULL;
	const cJSON *w = g ? cJSON_GetObjectItemCaseSensitive(g, "weights") : NULL;
	q->bits = w ? cfg_int(w, "num_bits", 0) : 0;
	int64_t gs;
	if (w && vf_json_get_i64(w, "group_size", &gs) && gs > 0)
		q->group_size = gs;
	const char *type = w ? vf_json_get_str(w, "type") : NULL;
	q->understood = q->bits == 4 || q->bits == 8;
	if (q->bits == 8)
		snprintf(q->base_quant, sizeof q->base_quant, "%s",
			 type && strcmp(type, "float") == 0 ? "fp8" : "int8");
	else if (q->bits == 4)
		snprintf(q->base_quant, sizeof q->base_quant, "int4");
}

bool vf_qconfig_read(const cJSON *cfg, struct vf_qconfig *q)
{
	memset(q, 0, sizeof *q);
	q->group_size = -1;
	q->params = -1;
	const cJSON *qc = cJSON_GetObjectItemCaseSensitive(cfg, "quantization_config");
	if (!cJSON_IsObject(qc))
		qc = cJSON_GetObjectItemCaseSensitive(cfg, "compression_config");
	if (!cJSON_IsObject(qc))
		return false;
	const char *m = vf_json_get_str(qc, "quant_method");
	snprintf(q->method, sizeof q->method, "%s", m ? m : "unknown");
	int64_t gs;
	if (vf_json_get_i64(qc, "group_size", &gs) && gs > 0)
		q->group_size = gs;
	if (!m) {
		return true;
	} else if (strcasecmp(m, "gptq") == 0 || strcasecmp(m, "awq") == 0) {
		q->bits = cfg_int(qc, "bits", cfg_int(qc, "w_bit", 4));
		if (!vf_json_get_i64(qc, "group_size", &gs))
			vf_json_get_i64(qc, "q_group_size", &gs);
		q->group_size = gs > 0 ? gs : -1;
		q->understood = 32 % q->bits == 0;
		snprintf(q->base_quant, sizeof q->base_quant, "%s", q->bits == 8 ? "int8" : "int4");
	} else if (strcasecmp(m, "bitsandbytes") == 0) {
		bool b4 = false, b8 = false;
		vf_json_get_bool(qc, "load_in_4bit", &b4);
		vf_json_get_bool(qc, "load_in_8bit", &b8);
		const char *t = vf_json_get_str(qc, "bnb_4bit_quant_type");
		q->bits = b4 ? 4 : b8 ? 8 : 0;
		q->understood = q->bits != 0;
		snprintf(q->format, sizeof q->format, "%s", b4 ? (t ? t : "fp4") : b8 ? "int8" : "");
		snprintf(q->base_quant, sizeof q->base_quant, "%s", b4 ? "nf4" : b8 ? "int8" : "");
	} else if (strcasecmp(m, "fp8") == 0 || strcasecmp(m, "fbgemm_fp8") == 0) {
		q->bits = 8;
		q->understood = true;
		snprintf(q->base_quant, sizeof q->base_quant, "fp8");
	} else if (strcasecmp(m, "compressed-tensors") == 0) {
		compressed_tensors(qc, q);
	}
	return true;
}

/* Storage beside a quantized weight: not parameters. */
static bool storage(const char *n)
{
	static const char *const suffixes[] = {
		".qzeros", ".scales", ".g_idx", ".SCB", ".weight_format", ".weight_scale",
		".weight_scale_inv", ".input_scale", ".output_scale", ".weight_zero_point",
		".weight_shape", ".weight_g_idx", ".k_scale", ".v_scale", ".absmax", ".quant_map",
		".nested_absmax", ".nested_quant_map", ".weight_global_scale",
		".input_global_scale"};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
		if (ends_with(n, suffixes[i]))
			return true;
	return strstr(n, ".quant_state.") != NULL;
}

/* The parameters one tensor holds (0: storage; packed: unpacked) and
 * whether they are quantized. */
static int64_t logical(const struct vf_qconfig *q, const struct vf_tensor *t, bool *quantized)
{
	*quantized = false;
	if (storage(t->name))
		return 0;
	int per = q->bits > 0 && 32 % q->bits == 0 ? 32 / q->bits : 1;
	if ((ends_with(t->name, ".qweight") || ends_with(t->name, ".weight_packed")) &&
	    (t->dtype == VF_DT_I32 || t->dtype == VF_DT_U32)) {
		*quantized = true;
		return t->numel * per;
	}
	if (strcmp(q->method, "bitsandbytes") == 0 && ends_with(t->name, ".weight")) {
		if (q->bits == 4 && t->dtype == VF_DT_U8) {
			*quantized = true;
			return t->numel * 2; /* two 4-bit values a byte */
		}
		if (q->bits == 8 && t->dtype == VF_DT_I8)
			*quantized = true;
	}
	if ((t->dtype == VF_DT_F8_E4M3 || t->dtype == VF_DT_F8_E5M2 ||
	     (q->bits == 8 && t->dtype == VF_DT_I8)) && ends_with(t->name, ".weight"))
		*quantized = true;
	return t->numel;
}

/* The weight a storage tensor belongs to is quantized: its bytes count. */
void vf_qconfig_count(struct vf_qconfig *q, const struct vf_safetensors *files, size_t n,
		    struct vf_param_groups *g)
{
	memset(g, 0, sizeof *g);
	q->params = q->quantized = q->weight_bytes = 0;
	char name[512];
	for (size_t f = 0; f < n; f++) {
		for (size_t i = 0; i < files[f].ntensors; i++) {
			const struct vf_tensor *t = &files[f].tensors[i];
			bool qz;
			int64_t p = logical(q, t, &qz);
			int64_t bytes = (int64_t)(t->end - t->begin);
			if (qz || storage(t->name))
				q->weight_bytes += bytes;
			if (!p)
				continue;
			q->params += p;
			if (qz)
				q->quantized += p;
			/* group by the layer's name: "q_proj.qweight" as "q_proj.weight" */
			snprintf(name, sizeof name, "%s", t->name);
			char *dot = strrchr(name, '.');
			if (qz && dot && strcmp(dot, ".weight") != 0)
				snprintf(dot, sizeof name - (size_t)(dot - name), ".weight");
			vf_model_group_tensor(name, p, g);
		}
	}
	q->bytes_per_weight = q->quantized ? (double)q->weight_bytes / (double)q->quantized : 0;
}

cJSON *vf_qconfig_to_json(const struct vf_qconfig *q)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "method", q->method);
	vf_json_add_i64_or_null(o, "bits", q->bits, q->bits > 0);
	vf_json_add_i64_or_null(o, "group_size", q->group_size, q->group_size > 0);
	if (q->format[0])
		cJSON_AddStringToObject(o, "format", q->format);
	cJSON_AddBoolToObject(o, "understood", q->understood);
	vf_json_add_i64_or_null(o, "quantized_params", q->quantized, q->params >= 0);
	vf_json_add_i64_or_null(o, "quantized_bytes", q->weight_bytes, q->params >= 0);
	if (q->bytes_per_weight > 0)
		cJSON_AddNumberToObject(o, "bytes_per_weight", q->bytes_per_weight);
	else
		cJSON_AddNullToObject(o, "bytes_per_weight");
	if (q->base_quant[0])
		cJSON_AddStringToObject(o, "loads_as", q->base_quant);
	return o;
}
