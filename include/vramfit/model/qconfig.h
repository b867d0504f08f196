/* qconfig.h - a quantized checkpoint's quantization_config (config.json):
 * GPTQ, AWQ, bitsandbytes (4-bit nf4/fp4, 8-bit), fp8 and
 * compressed-tensors. The headers hold packed weights (GPTQ's int32
 * qweight, bitsandbytes' uint8 4-bit pairs) and their scales, zeros and
 * indexes: read with the config they give the model's real parameter count
 * (a packed tensor's elements x values per element; scales, zeros, g_idx,
 * absmax, quant maps and states are storage, not parameters) and the bytes
 * per weight as stored. */
#ifndef VRAMFIT_QCONFIG_H
#define VRAMFIT_QCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vramfit/base/error.h"
#include "vramfit/model/arch.h"
#include "vramfit/model/safetensors.h"

struct vf_qconfig {
	char method[32];        /* "gptq" | "awq" | "bitsandbytes" | "fp8" |
				   "compressed-tensors" | ... as the config names it */
	int bits;               /* bits per quantized weight; 0 unknown */
	int64_t group_size;     /* -1 none or unknown */
	char format[24];        /* bitsandbytes: "nf4" | "fp4" | "int8"; compressed-tensors:
				   its "format"; else "" */
	bool understood;        /* the method and its tensors are read (else the
				   count is the headers' and approximate) */
	int64_t params;         /* parameters, packed weights unpacked; -1 not computed */
	int64_t quantized;      /* of them, held quantized */
	int64_t weight_bytes;   /* bytes of the quantized weights with their scales, zeros
				   and states */
	double bytes_per_weight;/* weight_bytes / quantized; 0 none */
	char base_quant[8];     /* what a run loads, as estimate's --quant: "int4",
				   "nf4", "int8", "fp8", or "" */
};

/* quantization_config of a config.json object into q; false when there is
 * none. An unknown quant_method leaves understood false. */
bool vf_qconfig_read(const cJSON *cfg, struct vf_qconfig *q);

/* Count files' tensors as q says (q->params, quantized, weight_bytes,
 * bytes_per_weight) and group the parameters by tensor name into g. */
void vf_qconfig_count(struct vf_qconfig *q, const struct vf_safetensors *files, size_t n,
		    struct vf_param_groups *g);

/* The inspect --json "quantization" object. Caller owns. */
cJSON *vf_qconfig_to_json(const struct vf_qconfig *q);

#endif
