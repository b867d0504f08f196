/* test-gpu-list.c - one machine's set of GPUs as one --gpu value
 * (lib/gpu/gpu-list.c): the elements in order, each as
 * vf_gpu_set_add_spec reads it, the errors naming the element, and the
 * set's short name. */
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vramfit/gpu/gpu-list.h"

static void test_list(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	CHECK(!vf_gpu_spec_is_list("rtx-3090:2"));
	CHECK(!vf_gpu_spec_is_list(NULL));
	CHECK(vf_gpu_spec_is_list("rtx-3090,rtx-4080"));
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_set_add_list(&s, "rtx-3090:2,rtx-4080,mycard=8192", &err), VF_OK);
	CHECK_INT(s.count, 4);
	CHECK_STR(s.gpus[0].catalog_id, "rtx-3090");
	CHECK_STR(s.gpus[1].catalog_id, "rtx-3090");
	CHECK_STR(s.gpus[2].catalog_id, "rtx-4080");
	CHECK_INT(s.gpus[2].memory_total_mib, 16376);
	CHECK_STR(s.gpus[3].name, "mycard");
	CHECK_INT(s.gpus[3].memory_total_mib, 8192);
	char label[64];
	vf_gpu_set_label(&s, label, sizeof label);
	CHECK_STR(label, "rtx-3090x2+rtx-4080+mycard");
	/* cut at the buffer, never past it */
	char small[12];
	vf_gpu_set_label(&s, small, sizeof small);
	CHECK_STR(small, "rtx-3090x2+");
	vf_gpu_set_release(&s);
}

static void test_list_errors(void)
{
	static const struct {
		const char *in, *msg;
	} bad[] = {
		{"", "empty GPU spec"},
		{",rtx-4080", "GPU 1 of the set is empty"},
		{"rtx-3090,", "GPU 2 of the set is empty"},
		{"rtx-3090,,rtx-4080", "GPU 2 of the set is empty"},
		{"rtx-3090,nosuch", "--gpu rtx-3090,nosuch: nosuch: unknown GPU id 'nosuch'"},
		{"rtx-3090,rtx-4080:0", "count after ':'"},
		{"rtx-3090,card=0", "MiB after '='"},
		{"h100-80gb:1000,h100-80gb:100", "more than 1024 GPUs"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct vf_gpu_set s;
		struct vf_error err = {0};
		vf_gpu_set_init(&s);
		CHECK_INT(vf_gpu_set_add_list(&s, bad[i].in, &err), VF_EUSAGE);
		CHECK_CONTAINS(err.msg, bad[i].msg);
		vf_gpu_set_release(&s);
	}
	/* a value longer than the limit */
	char big[VF_GPU_LIST_MAX_CHARS + 16];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	big[5] = ',';
	struct vf_gpu_set s;
	struct vf_error err = {0};
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_set_add_list(&s, big, &err), VF_EUSAGE);
	CHECK_CONTAINS(err.msg, "longer than 400 characters");
	vf_gpu_set_release(&s);
}

int main(void)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	RUN(test_list);
	RUN(test_list_errors);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
