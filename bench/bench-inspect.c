/* bench-inspect.c - time `inspect` of a large sharded checkpoint: 30 shards
 * of 1,000 BF16 tensors each (30,000 tensors, 480 GiB of tensor data) with
 * an index, generated in a temp dir: headers written, data sparse
 * (ftruncate), so only the headers exist on disk. Prints the figures, and
 * the inspect time as a ratio to `python3 -c pass` timed next to each run
 * (yardstick.h): the median of the paired ratios.
 *   build/bench/bench-inspect [shards] [tensors-per-shard] [repeats] */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramfit/base/buf.h"
#include "vramfit/model/model.h"
#include "yardstick.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *const kinds[10] = {
	"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj",    "extra.a",
	"extra.b",          "extra.c",
};

int main(int argc, char **argv)
{
	int shards = argc > 1 ? atoi(argv[1]) : 30;
	int per = argc > 2 ? atoi(argv[2]) : 1000;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	if (shards < 1 || per < 1 || reps < 1 || shards > 1000 || per > 100000)
		return 2;
	char dir[] = "/tmp/vf-bench-inspect-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	struct vf_error err = {0};
	struct vf_buf hdr, idx;
	vf_buf_init(&hdr, 0);
	vf_buf_init(&idx, 0);
	vf_buf_puts(&idx, "{\"metadata\":{},\"weight_map\":{", &err);
	const uint64_t rows = 8192, cols = 1024, bytes = rows * cols * 2; /* BF16 [8192, 1024] */
	uint64_t header_bytes = 0;
	double t0 = now();
	for (int s = 0; s < shards; s++) {
		char name[64], path[256];
		snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, shards);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		vf_buf_reset(&hdr);
		vf_buf_puts(&hdr, "{\"__metadata__\":{\"format\":\"pt\"}", &err);
		for (int i = 0; i < per; i++) {
			long k = (long)s * per + i;
			char tname[128];
			snprintf(tname, sizeof tname, "model.layers.%ld.%s.weight", k / 10, kinds[k % 10]);
			vf_buf_printf(&hdr, &err,
				      ",\"%s\":{\"dtype\":\"BF16\",\"shape\":[%llu,%llu],"
				      "\"data_offsets\":[%llu,%llu]}",
				      tname, (unsigned long long)rows, (unsigned long long)cols,
				      (unsigned long long)(bytes * (uint64_t)i),
				      (unsigned long long)(bytes * (uint64_t)(i + 1)));
			vf_buf_printf(&idx, &err, "%s\"%s\":\"%s\"", k ? "," : "", tname, name);
		}
		vf_buf_puts(&hdr, "}", &err);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		unsigned char le[8];
		for (int b = 0; b < 8; b++)
			le[b] = (unsigned char)((uint64_t)hdr.len >> (8 * b));
		if (fd < 0 || write(fd, le, 8) != 8 || write(fd, hdr.data, hdr.len) != (ssize_t)hdr.len ||
		    ftruncate(fd, (off_t)(8 + hdr.len + bytes * (uint64_t)per)) != 0) {
			perror(path);
			return 1;
		}
		close(fd);
		header_bytes += 8 + hdr.len;
	}
	vf_buf_puts(&idx, "}}", &err);
	char ipath[256];
	snprintf(ipath, sizeof ipath, "%s/model.safetensors.index.json", dir);
	vf_write_file_atomic(ipath, idx.data, idx.len, &err);
	double gen = now() - t0;

	double *times = calloc((size_t)reps, sizeof *times);
	double *cpus = calloc((size_t)reps, sizeof *cpus);
	double *ratios = calloc((size_t)reps, sizeof *ratios);
	double *yards = calloc((size_t)reps, sizeof *yards);
	bool have_yard = true;
	int64_t params = 0, tensors = 0, data = 0;
	for (int r = 0; r < reps; r++) {
		struct vf_model *m = NULL;
		yards[r] = yardstick_ms();
		have_yard = have_yard && yards[r] > 0;
		double a = now(), c = cpu();
		if (vf_model_load(dir, &m, &err) != VF_OK) {
			fprintf(stderr, "bench-inspect: %s\n", err.msg);
			return 1;
		}
		cJSON *j = vf_model_to_json(m);
		times[r] = now() - a;
		cpus[r] = cpu() - c;
		cJSON_Delete(j);
		ratios[r] = have_yard ? times[r] * 1e3 / yards[r] : 0;
		params = m->params;
		tensors = m->tensors;
		data = m->bytes;
		vf_model_free(m);
	}
	qsort(times, (size_t)reps, sizeof *times, cmp_double);
	qsort(cpus, (size_t)reps, sizeof *cpus, cmp_double);
	qsort(ratios, (size_t)reps, sizeof *ratios, cmp_double);
	qsort(yards, (size_t)reps, sizeof *yards, cmp_double);
	printf("bench-inspect: %d shards x %d tensors = %lld tensors, %lld params, %.0f GiB of "
	       "(sparse) tensor data\n",
	       shards, per, (long long)tensors, (long long)params, (double)data / (1u << 30));
	printf("  headers on disk  %.1f MiB (+ index %.1f MiB), written in %.2f s\n",
	       (double)header_bytes / (1 << 20), (double)idx.len / (1 << 20), gen);
	printf("  inspect          median %.1f ms, min %.1f ms, max %.1f ms over %d runs (warm page "
	       "cache)\n",
	       times[reps / 2] * 1e3, times[0] * 1e3, times[reps - 1] * 1e3, reps);
	printf("  cpu time         median %.1f ms, min %.1f ms (this process; the wall time includes "
	       "waiting for a shared CPU)\n",
	       cpus[reps / 2] * 1e3, cpus[0] * 1e3);
	printf("  throughput       %.0f tensors/ms of wall time\n",
	       (double)tensors / (times[reps / 2] * 1e3));
	if (have_yard)
		printf("  x yardstick      %.3f (median of paired runs; `python3 -c pass` median %.1f "
		       "ms)\n",
		       ratios[reps / 2], yards[reps / 2]);
	else
		printf("  x yardstick      (python3 did not run: no ratio)\n");
	free(times);
	free(cpus);
	free(ratios);
	free(yards);
	vf_buf_release(&hdr);
	vf_buf_release(&idx);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
