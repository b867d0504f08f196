/* test-gpu-probe.c - the probes: nvidia-smi CSV parsing (real H200 fixture
 * and hostile output), the nvidia-smi runner (timeout, size cap, known
 * failures) through tests/helpers/fake-nvidia-smi, NVML through the fake
 * libraries in build/helpers/, and CUDA_VISIBLE_DEVICES. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu_probe.h"
#include "vf_test.h"
#include "vramfit/base/buf.h"

static char fixture_dir[1024], smi[1024], nvml[1024], nvml1[1024];
static const char *const QUERY_H200 =
	"0, GPU-a7c75cc4-551d-aa3d-7f71-5c1970c087af, NVIDIA H200, 143771, 0, 143156, 9.0, "
	"580.159.04\n";

static vf_status parse(const char *text, struct vf_gpu_set *s, struct vf_error *err)
{
	vf_gpu_set_init(s);
	vf_error_clear(err);
	return vf__gpu_smi_parse(text, strlen(text), s, err);
}

static void test_smi_parse_h200(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	CHECK_INT(parse(QUERY_H200, &s, &err), VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_INT(s.source, VF_GPU_SMI);
	CHECK_INT(s.gpus[0].index, 0);
	CHECK_STR(s.gpus[0].uuid, "GPU-a7c75cc4-551d-aa3d-7f71-5c1970c087af");
	CHECK_STR(s.gpus[0].name, "NVIDIA H200");
	CHECK_INT(s.gpus[0].memory_total_mib, 143771);
	CHECK_INT(s.gpus[0].memory_used_mib, 0);
	CHECK_INT(s.gpus[0].memory_free_mib, 143156);
	CHECK_STR(s.gpus[0].cc, "9.0");
	CHECK_STR(s.driver_version, "580.159.04");
	vf_gpu_set_release(&s);
	/* CRLF, blank lines, extra spaces. */
	CHECK_INT(parse("\r\n 0 , GPU-x , NVIDIA H200 , 143771 , 1 , 2 , 9.0 , 580 \r\n\n"
			"1, GPU-y, NVIDIA H200, 143771, 1, 2, 9.0, 580\n",
			&s, &err),
		  VF_OK);
	CHECK_INT(s.count, 2);
	CHECK_STR(s.gpus[0].name, "NVIDIA H200");
	CHECK_STR(s.gpus[1].uuid, "GPU-y");
	vf_gpu_set_release(&s);
}

static void test_smi_parse_unknown(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	CHECK_INT(parse("0, [N/A], NVIDIA H200, [N/A], [Not Supported], [N/A], [N/A], [N/A]\n", &s,
			&err),
		  VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_STR(s.gpus[0].uuid, "");
	CHECK_INT(s.gpus[0].memory_total_mib, -1); /* unknown, not 0 */
	CHECK_INT(s.gpus[0].memory_used_mib, -1);
	CHECK_INT(s.gpus[0].memory_free_mib, -1);
	CHECK_STR(s.gpus[0].cc, "");
	CHECK_STR(s.driver_version, "");
	vf_gpu_set_release(&s);
}

static void test_smi_parse_hostile(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"", "empty output"},
		{"\n \n", "only blank lines"},
		{"0, GPU-a7c75cc4, NVIDIA H2", "expected 8 comma-separated fields"},
		{"0, GPU-x, NVIDIA H200, 1437x, 0, 0, 9.0, 580\n", "field memory.total"},
		{"x, GPU-x, NVIDIA H200, 1, 0, 0, 9.0, 580\n", "field index"},
		{"-1, GPU-x, NVIDIA H200, 1, 0, 0, 9.0, 580\n", "field index"},
		{"0, GPU-x, , 1, 0, 0, 9.0, 580\n", "field name"},
		{"0, GPU-x, NVIDIA H200, 1, 0, 0, nine, 580\n", "field compute_cap"},
		{"0, GPU-x, NVIDIA H200, 1, 0, 0, 9.0.1, 580\n", "field compute_cap"},
		{"0, GPU-x, NVIDIA H200, 99999999999, 0, 0, 9.0, 580\n", "field memory.total"},
		{"0, a, b, 1, 1, 1, 9.0, 1\n0, a, b, 1, 1, 1, 9.0, 1\n", "appears twice"},
		{"0, a, b\x01, 1, 1, 1, 9.0, 1\n", "control or non-ASCII"},
		{"\xff\xfe garbage \x1b[31m\n", "expected 8"},
		{"0, a, b, 1, 1, 1, 9.0, 1, extra\n", "found 9"},
		{"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
		 "Make sure that the latest NVIDIA driver is installed and running.\n",
		 "driver is not loaded"},
		{"No devices were found\n", "found no NVIDIA GPU"},
		{"Failed to initialize NVML: Driver/library version mismatch\n"
		 "NVML library version: 580.95\n",
		 "version mismatch"},
		{"Failed to initialize NVML: Unknown Error\n", "Failed to initialize NVML: Unknown Error"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct vf_gpu_set s;
		struct vf_error err = {0};
		vf_status st = parse(bad[i].text, &s, &err);
		CHECK(st != VF_OK);
		CHECK_CONTAINS(err.msg, bad[i].want);
		CHECK(strchr(err.msg, '\n') == NULL); /* one line */
		vf_gpu_set_release(&s);
	}
	/* Which of them mean "no GPU here" rather than "broken". */
	struct vf_gpu_set s;
	struct vf_error err = {0};
	CHECK_INT(parse("No devices were found\n", &s, &err), VF_ENOTFOUND);
	CHECK_INT(parse("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
			"driver.\n",
			&s, &err),
		  VF_ENOTFOUND);
	CHECK_INT(parse("Failed to initialize NVML: Driver/library version mismatch\n", &s, &err),
		  VF_ERR);
	vf_gpu_set_release(&s);
	/* A long line is refused without reading it all into a field; a NUL too. */
	char *big = malloc(VF_SMI_MAX_LINE * 4);
	memset(big, 'x', VF_SMI_MAX_LINE * 4 - 1);
	big[VF_SMI_MAX_LINE * 4 - 1] = '\0';
	CHECK_INT(parse(big, &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "bytes long");
	free(big);
	vf_gpu_set_init(&s);
	CHECK_INT(vf__gpu_smi_parse("0, a\0, b, 1, 1, 1, 9.0, 1\n", 25, &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "NUL");
	vf_gpu_set_release(&s);
}

/* A set of n GPUs with uuids GPU-<i>aaa-... */
static void make_set(struct vf_gpu_set *s, int n)
{
	struct vf_error err = {0};
	vf_gpu_set_init(s);
	for (int i = 0; i < n; i++) {
		struct vf_gpu g;
		vf_gpu_init(&g);
		g.index = i;
		snprintf(g.uuid, sizeof g.uuid, "GPU-%daaa-551d-aa3d-7f71-5c1970c087af", i);
		snprintf(g.name, sizeof g.name, "gpu%d", i);
		vf_gpu_set_add(s, &g, &err);
	}
}

/* Apply cvd to 4 GPUs; the visible original indices as "0,2,..". */
static const char *visible(const char *cvd)
{
	static char out[64];
	struct vf_gpu_set s;
	struct vf_error err = {0};
	make_set(&s, 4);
	vf__gpu_apply_visible(&s, cvd, &err);
	out[0] = '\0';
	for (size_t i = 0; i < s.count; i++)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d", i ? "," : "",
			 s.gpus[i].index);
	vf_gpu_set_release(&s);
	return out;
}

static void test_cuda_visible_devices(void)
{
	CHECK_STR(visible(NULL), "0,1,2,3");
	CHECK_STR(visible(""), "");
	CHECK_STR(visible("0"), "0");
	CHECK_STR(visible("2,0"), "2,0");       /* order as given */
	CHECK_STR(visible(" 1 , 3 "), "1,3");   /* spaces */
	CHECK_STR(visible("1,7,2"), "1");       /* invalid entry hides the rest */
	CHECK_STR(visible("-1"), "");
	CHECK_STR(visible("-1,0"), "");
	CHECK_STR(visible("1,1,2"), "1");       /* a repeat counts as invalid */
	CHECK_STR(visible("0,,1"), "0");        /* an empty entry too */
	CHECK_STR(visible("GPU-2aaa-551d-aa3d-7f71-5c1970c087af"), "2");
	CHECK_STR(visible("GPU-3aaa,GPU-1"), "3,1"); /* unique prefixes */
	CHECK_STR(visible("3aaa"), "3");             /* without GPU- */
	CHECK_STR(visible("GPU-"), "");              /* matches all four: not unique */
	CHECK_STR(visible("GPU-9"), "");
	CHECK_STR(visible("0,MIG-abc,1"), "0");
	CHECK_STR(visible("99999999999999"), "");
	struct vf_gpu_set s;
	struct vf_error err = {0};
	make_set(&s, 4);
	vf__gpu_apply_visible(&s, "1,x,2", &err);
	CHECK_INT(s.count, 1);
	CHECK_INT(s.nnotes, 1);
	CHECK_CONTAINS(s.notes[0], "shows 1 of 4 GPUs");
	CHECK_CONTAINS(s.notes[0], "'x'");
	/* The set stays usable: add after filtering. */
	struct vf_gpu g;
	vf_gpu_init(&g);
	for (int i = 0; i < 20; i++)
		CHECK_INT(vf_gpu_set_add(&s, &g, &err), VF_OK);
	CHECK_INT(s.count, 21);
	vf_gpu_set_release(&s);
	make_set(&s, 3);
	vf__gpu_apply_visible(&s, "0,1,2", &err);
	CHECK_INT(vf_gpu_set_add(&s, &g, &err), VF_OK);
	CHECK_INT(s.count, 4);
	vf_gpu_set_release(&s);
	make_set(&s, 4);
	vf__gpu_apply_visible(&s, "", &err);
	CHECK_INT(s.count, 0);
	CHECK_CONTAINS(s.notes[0], "CUDA_VISIBLE_DEVICES is empty");
	vf_gpu_set_release(&s);
	make_set(&s, 0);
	CHECK_INT(vf__gpu_apply_visible(&s, "0", &err), VF_OK);
	CHECK_INT(s.count, 0);
	vf_gpu_set_release(&s);
}

/* --- the whole probe, with the stand-ins ------------------------------- */

static vf_status probe(const char *nvml_lib, const char *fake_nvml, const char *smi_mode,
		       struct vf_gpu_set *s, struct vf_error *err)
{
	setenv("VRAMFIT_NVML_LIB", nvml_lib, 1);
	if (fake_nvml)
		setenv("VF_FAKE_NVML", fake_nvml, 1);
	else
		unsetenv("VF_FAKE_NVML");
	setenv("VRAMFIT_NVIDIA_SMI", smi, 1);
	if (smi_mode)
		setenv("VF_FAKE_SMI", smi_mode, 1);
	else
		unsetenv("VF_FAKE_SMI");
	vf_gpu_set_init(s);
	vf_error_clear(err);
	return vf_gpu_probe(s, err);
}

static char h200_csv[1100];

static void test_probe_smi(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	CHECK_INT(probe("off", NULL, h200_csv, &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_SMI);
	CHECK_INT(s.count, 1);
	CHECK_STR(s.gpus[0].catalog_id, "h200");
	CHECK_INT(s.gpus[0].memory_total_mib, 143771);
	CHECK_INT(s.gpus[0].nominal_gb, 141);
	CHECK_CONTAINS(s.notes[0], "VRAMFIT_NVML_LIB=off");
	vf_gpu_set_release(&s);

	/* Failures that mean "no GPU": exit 0 material, with a reason. */
	CHECK_INT(probe("off", NULL, "no-driver", &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_NONE);
	CHECK_INT(s.count, 0);
	CHECK_INT(s.nnotes, 2);
	CHECK_CONTAINS(s.notes[1], "driver is not loaded");
	vf_gpu_set_release(&s);
	CHECK_INT(probe("off", NULL, "no-devices", &s, &err), VF_OK);
	CHECK_INT(s.count, 0);
	vf_gpu_set_release(&s);
	setenv("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi", 1);
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_probe(&s, &err), VF_OK);
	CHECK_INT(s.count, 0);
	CHECK_CONTAINS(s.notes[1], "/nonexistent/nvidia-smi not found");
	vf_gpu_set_release(&s);

	/* Broken: a clear one-line error. */
	static const struct {
		const char *mode, *want;
	} bad[] = {
		{"mismatch", "version mismatch"},
		{"nvml-unknown", "Failed to initialize NVML: Unknown Error"},
		{"empty", "empty output"},
		{"blank", "no GPU lines"},
		{"truncated", "expected 8 comma-separated fields"},
		{"garbage", "line 1"},
		{"bigline", "bytes"},
		{"exit:3", "exited with status 3: Something unexpected happened"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(probe("off", NULL, bad[i].mode, &s, &err), VF_ERR);
		CHECK_CONTAINS(err.msg, bad[i].want);
		CHECK(strchr(err.msg, '\n') == NULL);
		CHECK_INT(s.count, 0);
		vf_gpu_set_release(&s);
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* execvp(prog) in a child under PATH=path (NULL: unset): its errno, 0 when
 * it ran something. */
static int execvp_errno(const char *prog, const char *path)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		if (path)
			setenv("PATH", path, 1);
		else
			unsetenv("PATH");
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		char *argv[] = {(char *)prog, NULL};
		execvp(prog, argv);
		int e = errno;
		ssize_t w = write(fd[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(fd[1]);
	int e = 0;
	ssize_t got = read(fd[0], &e, sizeof e);
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return got == (ssize_t)sizeof e ? e : 0;
}

/* The no-fork shortcut says "absent" exactly when execvp would fail with
 * ENOENT, and never where a file of the name is on the PATH (executable or
 * not: execvp's EACCES is its own). */
static void test_smi_absent(void)
{
	char dir[] = "/tmp/vf-test-smi-absent.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char a[1200], b[1200], f[1200], x[1200], path[4000];
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	snprintf(f, sizeof f, "%s/file", dir);
	mkdir(a, 0755);
	mkdir(b, 0755);
	FILE *fp = fopen(f, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	const char *prog = "vf-test-no-such-smi";
	/* nowhere on the PATH (an empty entry: the current directory) */
	snprintf(path, sizeof path, "%s::%s", a, b);
	CHECK(vf__gpu_smi_absent(prog, path));
	CHECK_INT(execvp_errno(prog, path), ENOENT);
	/* a dangling symlink: no file, execvp's ENOENT too */
	snprintf(x, sizeof x, "%s/%s", b, prog);
	CHECK_INT(symlink("/nonexistent-vf-target", x), 0);
	CHECK(vf__gpu_smi_absent(prog, path));
	CHECK_INT(execvp_errno(prog, path), ENOENT);
	unlink(x);
	/* a PATH entry that is a file: not ENOENT, left to execvp */
	snprintf(path, sizeof path, "%s:%s", f, a);
	CHECK(!vf__gpu_smi_absent(prog, path));
	/* a file that is not executable, then a directory of that name */
	fp = fopen(x, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	snprintf(path, sizeof path, "%s:%s", a, b);
	CHECK(!vf__gpu_smi_absent(prog, path));
	CHECK_INT(execvp_errno(prog, path), EACCES);
	unlink(x);
	mkdir(x, 0755);
	CHECK(!vf__gpu_smi_absent(prog, path));
	CHECK_INT(execvp_errno(prog, path), EACCES);
	rmdir(x);
	/* an executable: found, runs */
	fp = fopen(x, "w");
	CHECK(fp != NULL);
	if (fp) {
		fputs("#!/bin/sh\nexit 0\n", fp);
		fclose(fp);
	}
	chmod(x, 0755);
	CHECK(!vf__gpu_smi_absent(prog, path));
	CHECK_INT(execvp_errno(prog, path), 0);
	unlink(x);
	/* with a '/': the file itself */
	CHECK(vf__gpu_smi_absent("/nonexistent-vf/nvidia-smi", path));
	CHECK_INT(execvp_errno("/nonexistent-vf/nvidia-smi", path), ENOENT);
	CHECK(!vf__gpu_smi_absent(f, path));
	CHECK(!vf__gpu_smi_absent("", path));
	/* PATH unset: execvp's default directories */
	CHECK(vf__gpu_smi_absent(prog, NULL));
	CHECK_INT(execvp_errno(prog, NULL), ENOENT);
	CHECK(!vf__gpu_smi_absent("sh", NULL));
	CHECK_INT(execvp_errno("true", NULL), 0);
	CHECK(!vf__gpu_smi_absent("true", NULL));
	unlink(f);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
}

/* NVML is looked for only where a driver's kernel side is: any marker
 * there (a file, a directory, a device), or one whose absence cannot be
 * shown, is a driver; all of them ENOENT is none. */
static void test_driver_present(void)
{
	char dir[] = "/tmp/vf-test-driver.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char a[1200], b[1200], f[1200];
	snprintf(a, sizeof a, "%s/proc-driver-nvidia", dir);
	snprintf(b, sizeof b, "%s/nvidiactl", dir);
	snprintf(f, sizeof f, "%s/file", dir);
	const char *none[] = {a, b, NULL};
	CHECK(!vf__gpu_driver_present(none));
	const char *empty[] = {NULL};
	CHECK(!vf__gpu_driver_present(empty));
	CHECK_INT(mkdir(a, 0755), 0); /* the module's /proc directory */
	CHECK(vf__gpu_driver_present(none));
	rmdir(a);
	FILE *fp = fopen(b, "w"); /* a device node stands as a file here */
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	const char *last[] = {a, f, b, NULL};
	CHECK(vf__gpu_driver_present(last));
	unlink(b);
	CHECK(!vf__gpu_driver_present(last));
	/* a path through a file: ENOTDIR, not shown absent */
	snprintf(b, sizeof b, "%s/file/x", dir);
	fp = fopen(f, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);
	const char *through[] = {a, b, NULL};
	CHECK(vf__gpu_driver_present(through));
	unlink(f);
	CHECK(!vf__gpu_driver_present(through));
	/* the probe's own markers: whichever this machine has, no crash, and
	 * the list names the module, the control device and WSL2's device */
	int n = 0;
	for (const char *const *m = vf__gpu_driver_markers; *m; m++)
		n++;
	CHECK_INT(n, 3);
	(void)vf__gpu_driver_present(vf__gpu_driver_markers);
	rmdir(dir);
}

static void test_probe_smi_hangs(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	setenv("VRAMFIT_SMI_TIMEOUT", "0.5", 1);
	double t0 = now();
	CHECK_INT(probe("off", NULL, "hang", &s, &err), VF_ERR);
	double t1 = now();
	CHECK_CONTAINS(err.msg, "did not finish within");
	CHECK_CONTAINS(err.msg, "killed");
	CHECK(t1 - t0 < 5);
	vf_gpu_set_release(&s);
	/* The child left holding the pipe is in the group and is killed too. */
	t0 = now();
	CHECK_INT(probe("off", NULL, "hang-child", &s, &err), VF_ERR);
	CHECK(now() - t0 < 5);
	CHECK_CONTAINS(err.msg, "did not finish within");
	vf_gpu_set_release(&s);
	unsetenv("VRAMFIT_SMI_TIMEOUT");
}

static void test_probe_cvd(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	char mode[1200];
	snprintf(mode, sizeof mode, "%s:4", h200_csv);
	setenv("CUDA_VISIBLE_DEVICES", "3,GPU-00000001", 1);
	CHECK_INT(probe("off", NULL, mode, &s, &err), VF_OK);
	CHECK_INT(s.count, 2);
	CHECK_INT(s.gpus[0].index, 3);
	CHECK_INT(s.gpus[1].index, 1);
	vf_gpu_set_release(&s);
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	CHECK_INT(probe("off", NULL, mode, &s, &err), VF_OK);
	CHECK_INT(s.count, 0);
	CHECK_INT(s.source, VF_GPU_NONE);
	vf_gpu_set_release(&s);
	unsetenv("CUDA_VISIBLE_DEVICES");
}

static void test_probe_nvml(void)
{
	struct vf_gpu_set s;
	struct vf_error err = {0};
	/* The default scenario: one H200, all symbols. */
	CHECK_INT(probe(nvml, "", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_NVML);
	CHECK_INT(s.count, 1);
	CHECK_STR(s.gpus[0].name, "NVIDIA H200");
	CHECK_STR(s.gpus[0].catalog_id, "h200");
	CHECK_INT(s.gpus[0].memory_total_mib, 143771);
	CHECK_INT(s.gpus[0].memory_used_mib, 1);
	CHECK_INT(s.gpus[0].memory_free_mib, 143771 - 616 - 1);
	CHECK_STR(s.gpus[0].cc, "9.0");
	CHECK_STR(s.gpus[0].uuid, "GPU-00000000-551d-aa3d-7f71-5c1970c087af");
	CHECK_STR(s.driver_version, "580.159.04");
	vf_gpu_set_release(&s);

	/* 8 devices. */
	CHECK_INT(probe(nvml, "gpus=8;dev=NVIDIA H100 80GB HBM3:81559", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.count, 8);
	CHECK_STR(s.gpus[7].catalog_id, "h100-80gb");
	CHECK_INT(s.gpus[7].index, 7);
	vf_gpu_set_release(&s);

	/* 0 devices: no GPU, no error, nvidia-smi not asked. */
	CHECK_INT(probe(nvml, "gpus=0", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.count, 0);
	CHECK_INT(s.source, VF_GPU_NONE);
	CHECK_CONTAINS(s.notes[0], "NVML reports no NVIDIA GPU");
	vf_gpu_set_release(&s);

	/* Only v1 symbols: same answer, memory through the v1 call, optional values unknown. */
	CHECK_INT(probe(nvml1, "dev=NVIDIA GeForce RTX 5090:32607", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_NVML);
	CHECK_INT(s.count, 1);
	CHECK_STR(s.gpus[0].catalog_id, "rtx-5090");
	CHECK_INT(s.gpus[0].memory_total_mib, 32607);
	CHECK_STR(s.gpus[0].uuid, "");
	CHECK_STR(s.gpus[0].cc, "");
	CHECK_STR(s.driver_version, "");
	vf_gpu_set_release(&s);

	/* Memory v2 refusing the struct version falls back to v1. */
	CHECK_INT(probe(nvml, "fail=nvmlDeviceGetMemoryInfo_v2:25", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.gpus[0].memory_total_mib, 143771);
	CHECK_INT(s.gpus[0].memory_used_mib, 0);
	vf_gpu_set_release(&s);

	/* A device without permission is skipped with a note. */
	CHECK_INT(probe(nvml, "gpus=3;fail=nvmlDeviceGetHandleByIndex_v2@1:4", "exit:99", &s, &err),
		  VF_OK);
	CHECK_INT(s.count, 2);
	CHECK_INT(s.gpus[0].index, 0);
	CHECK_INT(s.gpus[1].index, 2);
	CHECK_CONTAINS(s.notes[0], "GPU 1: skipped, no permission");
	vf_gpu_set_release(&s);
	CHECK_INT(probe(nvml, "gpus=2;fail=nvmlDeviceGetMemoryInfo_v2@0:4", "exit:99", &s, &err),
		  VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_INT(s.gpus[0].index, 1);
	vf_gpu_set_release(&s);

	/* Error codes from the optional calls leave values unknown. */
	CHECK_INT(probe(nvml,
			"fail=nvmlDeviceGetUUID:999;fail=nvmlDeviceGetCudaComputeCapability:3;"
			"fail=nvmlSystemGetDriverVersion:999",
			"exit:99", &s, &err),
		  VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_STR(s.gpus[0].uuid, "");
	CHECK_STR(s.gpus[0].cc, "");
	CHECK_STR(s.driver_version, "");
	vf_gpu_set_release(&s);
	/* Both memory calls failing: memory unknown, a note. */
	CHECK_INT(probe(nvml,
			"fail=nvmlDeviceGetMemoryInfo_v2:999;fail=nvmlDeviceGetMemoryInfo:999",
			"exit:99", &s, &err),
		  VF_OK);
	CHECK_INT(s.gpus[0].memory_total_mib, -1);
	CHECK_CONTAINS(s.notes[0], "memory unknown: Unknown Error");
	vf_gpu_set_release(&s);
	/* A device that fails its name is skipped. */
	CHECK_INT(probe(nvml, "gpus=2;fail=nvmlDeviceGetName@0:15", "exit:99", &s, &err), VF_OK);
	CHECK_INT(s.count, 1);
	CHECK_CONTAINS(s.notes[0], "GPU 0: skipped: ");
	vf_gpu_set_release(&s);

	/* Init / count failures: NVML gives way to nvidia-smi ... */
	CHECK_INT(probe(nvml, "fail=nvmlInit_v2:999", h200_csv, &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_SMI);
	CHECK_CONTAINS(s.notes[0], "NVML not used: nvmlInit_v2 failed: Unknown Error");
	vf_gpu_set_release(&s);
	CHECK_INT(probe(nvml, "fail=nvmlDeviceGetCount_v2:999", h200_csv, &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_SMI);
	vf_gpu_set_release(&s);
	/* ... and without nvidia-smi, the NVML reason stands. */
	CHECK_INT(probe(nvml, "fail=nvmlInit_v2:18", "mismatch", &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "version mismatch");
	setenv("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi", 1);
	vf_gpu_set_init(&s);
	CHECK_INT(vf_gpu_probe(&s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "driver/library version mismatch");
	vf_gpu_set_release(&s);
	/* Driver not loaded (both say so): no GPU, with the reasons. */
	CHECK_INT(probe(nvml, "fail=nvmlInit_v2:9", "no-driver", &s, &err), VF_OK);
	CHECK_INT(s.count, 0);
	CHECK_CONTAINS(s.notes[0], "NVIDIA driver is not loaded");
	vf_gpu_set_release(&s);

	/* Library absent, or not an NVML. */
	CHECK_INT(probe("/nonexistent/libnvidia-ml.so.1", NULL, h200_csv, &s, &err), VF_OK);
	CHECK_INT(s.source, VF_GPU_SMI);
	CHECK_CONTAINS(s.notes[0], "cannot load /nonexistent/libnvidia-ml.so.1");
	vf_gpu_set_release(&s);
	CHECK_INT(probe("libc.so.6", NULL, "no-devices", &s, &err), VF_ERR);
	CHECK_CONTAINS(err.msg, "libc.so.6 is not a usable NVML: it lacks nvmlInit_v2");
	vf_gpu_set_release(&s);
	/* The real one is absent on a machine without a driver; either way no crash. */
	unsetenv("VRAMFIT_NVML_LIB");
	setenv("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi", 1);
	vf_gpu_set_init(&s);
	vf_status st = vf_gpu_probe(&s, &err);
	CHECK(st == VF_OK || st == VF_ERR);
	vf_gpu_set_release(&s);
	unsetenv("VF_FAKE_NVML");
	unsetenv("VRAMFIT_NVIDIA_SMI");
	unsetenv("VF_FAKE_SMI");
}

int main(void)
{
	const char *src = vf_test_env("VF_SOURCE_DIR", ".");
	const char *shared = vf_test_env("VF_SHARED_DIR", "../shared");
	const char *build = vf_test_env("VF_BUILD_DIR", "build");
	snprintf(fixture_dir, sizeof fixture_dir, "%s/fixtures/nvidia-smi", shared);
	snprintf(smi, sizeof smi, "%s/tests/helpers/fake-nvidia-smi", src);
	snprintf(nvml, sizeof nvml, "%s/helpers/libfakenvml.so", build);
	snprintf(nvml1, sizeof nvml1, "%s/helpers/libfakenvmlv1.so", build);
	snprintf(h200_csv, sizeof h200_csv, "csv:%s/h200-02.txt", fixture_dir);
	setenv("XDG_CONFIG_HOME", "/nonexistent-vramfit-test", 1);
	unsetenv("VRAMFIT_DATA_DIR");
	unsetenv("CUDA_VISIBLE_DEVICES");
	RUN(test_smi_parse_h200);
	RUN(test_smi_parse_unknown);
	RUN(test_smi_parse_hostile);
	RUN(test_cuda_visible_devices);
	RUN(test_probe_smi);
	RUN(test_smi_absent);
	RUN(test_driver_present);
	RUN(test_probe_smi_hangs);
	RUN(test_probe_cvd);
	RUN(test_probe_nvml);
	vf_gpu_catalog_reset();
	return vf_test_done();
}
