/* fuzz-slurm.c - libFuzzer target for what vramfit reads from Slurm: the
 * key=value records of jobcomp/filetxt and scontrol -o show job
 * (vf_slurm_parse_record, line by line), gres values (vf_slurm_gres_gpus),
 * scontrol -o show node (vf_slurm_inventory_parse) and a run's
 * launch.sbatch (vf_sbatch_check_text), the nvidia-smi answer of an srun
 * of probe --slurm --exact (vf_slurm_smi_first) and gres types placed in
 * the GPU catalog (vf_slurm_gres_type_resolve, each line a type). Corpus: tests/fuzz/corpus/slurm/
 * (real outputs of Debian 12's Slurm 22.05 on the test cluster, and a
 * launch.sbatch written by plan --slurm). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "vramfit/gpu/slurm_inventory.h"
#include "vramfit/trainer/sbatch.h"
#include "vramfit/tune/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (const char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct vf_slurm_job j;
		if (vf_slurm_parse_record(line, len, &j) && !j.state[0])
			abort(); /* a record always has its state */
		char type[32];
		char one[512];
		snprintf(one, sizeof one, "%.*s", (int)(len < 511 ? len : 511), line);
		if (vf_slurm_gres_gpus(one, type, sizeof type) < 0)
			abort();
		const char *maps[] = {one};
		struct vf_gres_type gt;
		vf_slurm_gres_type_resolve(one, maps, 1, &gt);
		if ((gt.spec == NULL) != (gt.how == VF_GRES_UNKNOWN))
			abort(); /* a type is placed exactly when it says how */
	}
	char name[96];
	int64_t mib = 0;
	if (vf_slurm_smi_first(text, size, name, sizeof name, &mib) && (mib <= 0 || strlen(name) >= sizeof name))
		abort();
	struct vf_slurm_inventory inv;
	struct vf_error err = {0};
	if (vf_slurm_inventory_parse(text, strlen(text), &inv, &err) != VF_OK)
		fuzz_check_refusal(&err);
	for (size_t i = 0; i < inv.nparts; i++)
		if (inv.parts[i].gpus_total < 0 || inv.parts[i].nodes < 1)
			abort();
	vf_slurm_inventory_release(&inv);
	struct vf_check c;
	vf_check_init(&c);
	vf_sbatch_check_text(text, strlen(text), "/tmp/run", &c);
	vf_check_release(&c);
	free(text);
	return 0;
}
