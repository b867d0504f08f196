/* fuzz-ltx-tensors.c - libFuzzer target for the LTX transformer reader on a
 * safetensors header (issue 11): the input is a whole file; a header that
 * validates is checked for the LTX tensor names, its layout read from the
 * tensors and from its __metadata__ config, and counted. Input: the file's
 * claimed size (u64 little-endian), then its first bytes (the header; the
 * data is never read). Corpus: tests/fuzz/corpus/ltx-tensors/ (small LTX
 * headers written by tests/helpers/gen-ltx2-header.py, in that form; a
 * unified one with connectors, text projection, VAEs and vocoder). */
#include <stddef.h>
#include <stdint.h>

#include "vramfit/model/ltx.h"
#include "vramfit/model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vf_safetensors st;
	struct vf_error err = {0};
	if (size < 8)
		return 0;
	uint64_t file_bytes = 0;
	for (int i = 7; i >= 0; i--)
		file_bytes = file_bytes << 8 | data[i];
	if (vf_safetensors_parse(data + 8, size - 8, file_bytes, "fuzz.safetensors", &st, &err) == VF_OK) {
		const struct vf_safetensors *list[1] = {&st};
		struct vf_ltx_arch a;
		if (vf_ltx_tensors_are(list, 1)) {
			vf_ltx_from_tensors(list, 1, &a);
			vf_ltx_params(&a); /* -1 for sizes out of range, never UB */
			vf_ltx_connector_params(&a);
			vf_ltx_text_projection_params(&a, 3840, 48);
			cJSON_Delete(vf_ltx_to_json(&a));
			/* issue 30: the parts by prefix add up to the header's count */
			struct vf_ltx_parts p;
			vf_ltx_parts_from_tensors(list, 1, &p);
			if (p.transformer + p.video_connector + p.audio_connector + p.text_projection +
				    p.vae_decoder + p.vae_encoder + p.audio_vae + p.vocoder + p.other !=
			    st.params)
				__builtin_trap();
			cJSON_Delete(vf_ltx_parts_to_json(&p));
		}
		if (st.metadata && vf_ltx_from_metadata(st.metadata, &a) && vf_ltx_params(&a) < 0)
			__builtin_trap(); /* a config that reads is counted */
	}
	vf_safetensors_release(&st);
	return 0;
}
