/* test-slurm-inventory.c - a Slurm cluster's GPUs from scontrol -o show
 * node, site-chosen gres types placed in the GPU catalog (ids and match
 * names with case, _ and - ignored; --gres-map), and the nvidia-smi line
 * an srun of --exact answers. */
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/gpu/slurm_inventory.h"

static const char *resolved(const char *type, const char *const *maps, int n, enum vf_gres_how *how)
{
	struct vf_gres_type t;
	vf_slurm_gres_type_resolve(type, maps, n, &t);
	if (how)
		*how = t.how;
	return t.spec ? t.spec->id : "(none)";
}

static void test_sites_types(void)
{
	enum vf_gres_how how;
	/* the examples: gpu:h100:8, gpu:a100_80gb:4, gpu:rtx3090:2 */
	CHECK_STR(resolved("h100", NULL, 0, &how), "h100-80gb");
	CHECK_INT(how, VF_GRES_NAME);
	CHECK_STR(resolved("a100_80gb", NULL, 0, &how), "a100-80gb");
	CHECK_STR(resolved("rtx3090", NULL, 0, &how), "rtx-3090");
	CHECK_INT(how, VF_GRES_ID);
	CHECK_STR(resolved("GH200_480GB", NULL, 0, &how), "gh200");
	CHECK_INT(how, VF_GRES_NAME);
	CHECK_STR(resolved("RTX_3090", NULL, 0, NULL), "rtx-3090");
	CHECK_STR(resolved("H200", NULL, 0, &how), "h200");
	CHECK_STR(resolved("h100-80gb", NULL, 0, &how), "h100-80gb");
	CHECK_INT(how, VF_GRES_ID);
	CHECK_STR(resolved("rtx_pro_6000", NULL, 0, NULL), "rtx-pro-6000");
	CHECK_STR(resolved("tesla_v100_32gb", NULL, 0, NULL), "v100-32gb");
	/* "a100" names the 40 and the 80 GB cards: the smaller, said */
	struct vf_gres_type t;
	vf_slurm_gres_type_resolve("a100", NULL, 0, &t);
	CHECK(t.spec && t.spec->memory_mib < 50000);
	CHECK_INT(t.how, VF_GRES_AMBIGUOUS);
	CHECK_CONTAINS(t.others, "80gb");
	/* words: approximate */
	CHECK_STR(resolved("h100_sxm5_special", NULL, 0, &how), "h100-80gb");
	CHECK_INT(how, VF_GRES_WORDS);
	/* unknown names stay unknown */
	CHECK_STR(resolved("gpu80", NULL, 0, &how), "(none)");
	CHECK_INT(how, VF_GRES_UNKNOWN);
	CHECK_STR(resolved("", NULL, 0, &how), "(none)");
	CHECK_STR(resolved("__", NULL, 0, &how), "(none)");
}

static void test_maps(void)
{
	const char *maps[] = {"gpu80=h100-80gb", "Big_One=h200", "bad", "x=no-such-gpu"};
	enum vf_gres_how how;
	CHECK_STR(resolved("gpu80", maps, 4, &how), "h100-80gb");
	CHECK_INT(how, VF_GRES_MAPPED);
	CHECK_STR(resolved("big-one", maps, 4, &how), "h200");
	CHECK_STR(resolved("x", maps, 4, &how), "(none)");
	/* a map overrides the catalog's own reading */
	const char *over[] = {"a100=a100-80gb"};
	CHECK_STR(resolved("a100", over, 1, &how), "a100-80gb");
	CHECK_INT(how, VF_GRES_MAPPED);

	struct vf_error err = {0};
	CHECK_INT(vf_slurm_gres_map_check("gpu80=h100-80gb", &err), VF_OK);
	CHECK_INT(vf_slurm_gres_map_check("gpu80", &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "TYPE=GPU_ID");
	CHECK_INT(vf_slurm_gres_map_check("=h200", &err), VF_EUSAGE);
	CHECK_INT(vf_slurm_gres_map_check("gpu80=", &err), VF_EUSAGE);
	CHECK_INT(vf_slurm_gres_map_check("gpu80=h100", &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "not a GPU id");
	CHECK_INT(vf_slurm_gres_map_check("--=h200", &err), VF_EUSAGE);
}

static void test_inventory_h100(void)
{
	static const char text[] =
		"NodeName=g1 Arch=x86_64 CPUTot=64 Gres=gpu:h100:2(S:0-1) Partitions=train RealMemory=512000 "
		"State=IDLE\n"
		"NodeName=g2 CPUTot=32 Gres=gpu:a100_80gb:4 Partitions=big,all RealMemory=256000 State=MIXED\n";
	struct vf_slurm_inventory inv;
	struct vf_error err = {0};
	CHECK_INT(vf_slurm_inventory_parse(text, strlen(text), &inv, &err), VF_OK);
	CHECK_INT(inv.nparts, 3);
	CHECK_STR(inv.parts[0].gpu_type, "h100");
	CHECK_INT(inv.parts[0].gpus_per_node, 2);
	struct vf_gres_type t;
	vf_slurm_gres_type_resolve(inv.parts[0].gpu_type, NULL, 0, &t);
	CHECK(t.spec && t.spec->nominal_gb == 80);
	vf_slurm_gres_type_resolve(inv.parts[1].gpu_type, NULL, 0, &t);
	CHECK(t.spec && strcmp(t.spec->id, "a100-80gb") == 0);
	vf_slurm_inventory_release(&inv);
}

static void test_smi_first(void)
{
	char name[96];
	int64_t mib = 0;
	static const char one[] = "NVIDIA H100 80GB HBM3, 81559 MiB\n";
	CHECK(vf_slurm_smi_first(one, strlen(one), name, sizeof name, &mib));
	CHECK_STR(name, "NVIDIA H100 80GB HBM3");
	CHECK_INT(mib, 81559);
	/* noise first (srun's own messages), then the line */
	static const char two[] = "srun: job 7 queued and waiting for resources\n  NVIDIA A40 , 46068 MiB\r\n";
	CHECK(vf_slurm_smi_first(two, strlen(two), name, sizeof name, &mib));
	CHECK_STR(name, "NVIDIA A40");
	CHECK_INT(mib, 46068);
	static const char bad[] = "NVIDIA H100, [N/A]\n, 81559 MiB\nX, 0 MiB\nX, 12 GiB\n";
	CHECK(!vf_slurm_smi_first(bad, strlen(bad), name, sizeof name, &mib));
	CHECK(!vf_slurm_smi_first("", 0, name, sizeof name, &mib));
	/* cut to the buffer, NUL-terminated; control bytes made visible */
	static const char ctl[] = "AB\x1b[31mCDEFGH, 100 MiB";
	char small[6];
	CHECK(vf_slurm_smi_first(ctl, strlen(ctl), small, sizeof small, &mib));
	CHECK_STR(small, "AB?[3");
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	RUN(test_sites_types);
	RUN(test_maps);
	RUN(test_inventory_h100);
	RUN(test_smi_first);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
