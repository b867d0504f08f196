/* test-published-train.c - vramfit's training estimate against the peak
 * memory and throughput other stacks published for their own runs
 * (tests/fixtures/published/train.json: torchtune's README tables,
 * litgpt's resource and config_hub tables, torchtitan's performance page,
 * each row with its source, its stated setup and the `vramfit estimate`
 * arguments that map it).
 *
 * A judge, never calibration: no constant of the estimator is fitted on
 * these rows. Each row runs the built binary ($VRAMFIT estimate ... --json,
 * the same path a user takes) and compares the peak that the row's own
 * tool printed (torch.cuda.max_memory_allocated() / max_memory_reserved()
 * / nvidia-smi, at the scope the stack's report reads: estimate --json
 * names each under memory.peaks) and the tokens/s (per GPU or all GPUs, as
 * the row says). It prints the table the README shows: each row, then per
 * stack and per GPU generation the median and largest |error| and the sign
 * of the bias. fms-acceleration's published A100 80GB benchmark table
 * (Mistral-7B, Mixtral-8x7B, Llama-2-70B; full, LoRA, QLoRA on 1 and 2
 * GPUs; stack "fms": HF Trainer + TRL + peft) is the group "fms".
 *
 * The bounds asserted are loose regression guards set above today's
 * errors (memory median 5.6 %, max 21.7 %, litgpt's rows at most 10.5 %; throughput median 5.0 %, max
 * 19.6 %; torchtitan's rows at most 13.8 %; the median signed throughput
 * error per GPU generation: Ampere -1.6 %, Ada -7.8 %, where the step time
 * once carried the H200 fit's shares to every generation and had Ampere at
 * -14 % and Ada at -29 %, all rows under): they catch the estimator
 * getting worse on published runs, they do not claim it is good. Two of
 * them hold mechanisms these rows found: litgpt's native GELU (stack
 * mechanism gelu_native; the phi-2 row was +54 %) and the step time of
 * selective checkpointing (every:N and op-level; torchtitan's rows were
 * down to -25 %); litgpt's memory bound holds the QLoRA mechanisms
 * (kbit_head, graph_held: the bitsandbytes rows were -17 ... -19 %) and the
 * config_hub rows' gradient accumulation (the TinyLlama full row was
 * -20 %) and FSDP's whole gradients under no_sync accumulation (stack
 * mechanism fsdp_no_sync; the FSDP rows were -8.5 ... -13.5 %, on a load
 * peak litgpt's Lightning does not have); torchtune's fused AdamW (profile optimizer_impl) took the 3B
 * full + checkpointing row from +20.4 % to +0.8 %. litgpt runs pure bf16 (bf16-true: stack mechanism
 * autocast off), where its fused qkv keeps one dropped copy of the input
 * for q, k and v and the autocast formula had counted one per adapter: its
 * 7B micro-batch 2 row went from -8.2 % to -10.5 %, and its bound from
 * 10 % to 12 % (the QLoRA rows it guards were -17 ... -19 %). Tighten them as the errors shrink (issues 25 and 31 set
 * the targets). Since hidden communication costs the SMs NCCL holds
 * (nccl.c, issue 31), every multi-GPU row is 4-8 % slower than it was:
 * torchtitan's 64-GPU FSDP rows, all at most 5.0 % before, now sit at
 * -3.5 ... -13.8 % (llama2-70b-sel-op), the 70B LoRA on 8 A100s went
 * from +23.4 % to +19.6 %. Volta (issue 31): the transformers docs' nine
 * bert-large runs on one V100-SXM2-16GB (HF Trainer, Jan 2022; fp16 and
 * fp32, accumulation, checkpointing, Adafactor, 8-bit Adam) were +13.6 to
 * +26.5 % on the fp16 rows (predicted too fast) before BERT's dropout
 * defaults and the Trainer's gradient clipping (--grad-clip for) had
 * time, -6.5 to +6.2 % after; the fp32 rows were -4.5 to -24.5 % until
 * Volta's CUDA-core GEMMs took their own measured share (0.917 of the
 * fp32 rate, not the fp16 tensor cores' 0.779), -17.7 to +1.2 % after:
 * Volta tokens/s median 6.2 %, max 17.7 %, signed median -3.4 %. Their
 * memory, under on the batch-4 rows (-9.2 to -16.1 %), had the gradients
 * that torch 1.x's zero_grad() zeroed in place and kept through the next
 * forward (--zero-grad zeros): Volta memory median 10.9 -> 6.9 %, max
 * 16.1 -> 11.3 %; all memory rows median 7.6 -> 6.4 %, max 21.7 %. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "published-row.h"
#include "vf_test.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/base/proc.h"
#include "vramfit/gpu/gpu.h"

#define MAX_ROWS 128
#define MAX_ARGS 64

/* Regression guards (see the header): today's figures plus a margin. */
#define MEM_MEDIAN_BOUND 0.08
#define MEM_MAX_BOUND 0.25
#define LITGPT_MEM_MAX_BOUND 0.12 /* litgpt's rows (QLoRA: kbit_head, graph_held; FSDP: fsdp_no_sync) */
#define TPS_MEDIAN_BOUND 0.08
#define TPS_MAX_BOUND 0.30
#define TITAN_TPS_MAX_BOUND 0.16 /* torchtitan's selective-checkpointing rows */
#define GEN_TPS_BIAS_BOUND 0.12  /* per generation: the median signed tokens/s error */

static void collect(void *ctx, enum vf_proc_stream s, const char *line, size_t len, bool truncated)
{
	(void)truncated;
	if (s != VF_PROC_STDOUT)
		return;
	struct vf_error err = {0};
	vf_buf_append(ctx, line, len, &err);
	vf_buf_append(ctx, "\n", 1, &err);
}

/* One row's estimate: $VRAMFIT estimate MODEL ARGS --gpu GPU[:N] --json.
 * Caller owns *out (cJSON_Delete). cmd gets the command line shown. */
static bool estimate(const cJSON *row, cJSON **out, char *cmd, size_t ncmd)
{
	char model[1024], args[1024], gpu[64];
	const char *m = str(row, "model"), *a = str(row, "args"), *g = str(row, "gpu");
	int gpus = (int)num(row, "gpus");
	if (!m || !a || !g || gpus < 1)
		return false;
	if (strchr(m, '/')) /* a fixture path, relative to the source tree */
		snprintf(model, sizeof model, "%s/%s", vf_test_env("VF_SOURCE_DIR", "."), m);
	else
		snprintf(model, sizeof model, "%s", m);
	snprintf(args, sizeof args, "%s", a);
	if (gpus > 1)
		snprintf(gpu, sizeof gpu, "%s:%d", g, gpus);
	else
		snprintf(gpu, sizeof gpu, "%s", g);
	const char *argv[MAX_ARGS];
	int n = 0;
	argv[n++] = vf_test_env("VRAMFIT", "vramfit");
	argv[n++] = "estimate";
	argv[n++] = model;
	for (char *t = strtok(args, " "); t && n < MAX_ARGS - 5; t = strtok(NULL, " "))
		argv[n++] = t;
	argv[n++] = "--gpu";
	argv[n++] = gpu;
	argv[n++] = "--json";
	argv[n] = NULL;
	snprintf(cmd, ncmd, "vramfit estimate %s %s --gpu %s", m, a, gpu);

	struct vf_buf b;
	vf_buf_init(&b, 16u << 20);
	struct vf_proc p;
	vf_proc_init(&p);
	p.argv = argv;
	p.timeout_s = 300;
	p.on_line = collect;
	p.ctx = &b;
	struct vf_error err = {0};
	bool ok = vf_proc_run(&p, &err) == VF_OK && p.status == 0 && b.data &&
		  vf_json_parse(b.data, b.len, "estimate --json", out, &err) == VF_OK;
	if (!ok)
		fprintf(stderr, "  %s: exit %d %s\n", cmd, p.status, err.msg);
	vf_buf_release(&b);
	return ok;
}

/* The peak the row's tool printed, at the scope the stack's report reads
 * (memory.peaks.scope: the stack profile's, or --peak-scope). */
static double predicted_peak(const cJSON *e, const char *tool)
{
	const cJSON *peaks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "memory"), "peaks");
	const char *scope = str(peaks, "scope");
	if (!scope || !tool)
		return -1;
	return num(cJSON_GetObjectItemCaseSensitive(peaks, scope), tool);
}

struct res {
	char stack[16], gen[24];
	double mem, tps; /* relative errors; NAN when the row has none */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median and max |error| and the sign counts over the rows matching
 * (stack or generation, NULL = all) of one measure. Returns the count. */
static int summarise(const struct res *r, int n, const char *stack, const char *gen, bool mem,
		     double *median, double *max, int *over, int *under)
{
	double v[MAX_ROWS];
	int k = 0;
	*over = *under = 0;
	*max = 0;
	for (int i = 0; i < n; i++) {
		double e = mem ? r[i].mem : r[i].tps;
		if (isnan(e) || (stack && strcmp(stack, r[i].stack)) || (gen && strcmp(gen, r[i].gen)))
			continue;
		v[k++] = fabs(e);
		*over += e > 0;
		*under += e < 0;
		*max = fabs(e) > *max ? fabs(e) : *max;
	}
	qsort(v, (size_t)k, sizeof v[0], cmp_double);
	*median = k == 0 ? 0 : k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	return k;
}

/* The median signed tokens/s error of one generation's rows (the bias
 * issue 31 bounds); *k the count. */
static double signed_median(const struct res *r, int n, const char *gen, int *k)
{
	double v[MAX_ROWS];
	*k = 0;
	for (int i = 0; i < n; i++)
		if (!isnan(r[i].tps) && strcmp(gen, r[i].gen) == 0)
			v[(*k)++] = r[i].tps;
	qsort(v, (size_t)*k, sizeof v[0], cmp_double);
	return *k == 0 ? 0 : *k % 2 ? v[*k / 2] : (v[*k / 2 - 1] + v[*k / 2]) / 2;
}

static void print_group(const struct res *r, int n, const char *stack, const char *gen)
{
	for (int mem = 1; mem >= 0; mem--) {
		double med, max;
		int over, under;
		int k = summarise(r, n, stack, gen, mem, &med, &max, &over, &under);
		if (k == 0)
			continue;
		printf("| %s | %s | %d | %.1f %% | %.1f %% | %d over, %d under |\n", stack ? stack : gen,
		       mem ? "peak memory" : "tokens/s", k, 100 * med, 100 * max, over, under);
	}
}

static void test_published_train(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/fixtures/published/train.json", vf_test_env("VF_SOURCE_DIR", "."));
	cJSON *root = NULL;
	struct vf_error err = {0};
	CHECK(vf_json_parse_file(path, 1 << 20, &root, &err) == VF_OK);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows"), *row;
	int nrows = cJSON_GetArraySize(rows);
	CHECK(nrows >= 20 && nrows <= MAX_ROWS);
	static struct res r[MAX_ROWS];
	int n = 0;
	printf("| row | GPU | published memory | vramfit | error | published tokens/s | vramfit | error | source |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(row, rows)
	{
		if (n >= MAX_ROWS)
			break;
		const char *id = str(row, "id"), *stack = str(row, "stack"), *src = str(row, "source");
		const struct vf_gpu_spec *g = vf_gpu_catalog_find(str(row, "gpu"));
		CHECK(id && stack && src && strncmp(src, "https://", 8) == 0 && g);
		if (!id || !stack || !g)
			continue;
		char cmd[2048];
		cJSON *e = NULL;
		bool ok = estimate(row, &e, cmd, sizeof cmd);
		CHECK(ok);
		if (!ok)
			continue;
		struct res *x = &r[n++];
		snprintf(x->stack, sizeof x->stack, "%s", stack);
		snprintf(x->gen, sizeof x->gen, "%s", g->generation);
		x->mem = x->tps = NAN;
		char mcell[160] = "| - | - | - ", tcell[160] = "| - | - | - ";
		const cJSON *mem = cJSON_GetObjectItemCaseSensitive(row, "memory");
		if (mem) {
			const char *tool = str(mem, "tool"), *unit = str(mem, "unit");
			CHECK(tool && (strcmp(tool, "torch.cuda.max_memory_allocated()") == 0 ||
				       strcmp(tool, "torch.cuda.max_memory_reserved()") == 0 ||
				       strcmp(tool, "nvidia-smi") == 0));
			CHECK(unit && (strcmp(unit, "GiB") == 0 || strcmp(unit, "GB") == 0));
			double scale = unit && strcmp(unit, "GiB") == 0 ? 1073741824.0 : 1e9;
			double pub = num(mem, "value") * scale, got = predicted_peak(e, tool);
			CHECK(pub > 0 && got > 0);
			if (pub > 0 && got > 0) {
				x->mem = got / pub - 1;
				snprintf(mcell, sizeof mcell, "| %.2f %s | %.2f | %+.1f %% ", num(mem, "value"), unit,
					 got / scale, 100 * x->mem);
			}
		}
		const cJSON *tp = cJSON_GetObjectItemCaseSensitive(row, "throughput");
		if (tp) {
			const char *per = str(tp, "per");
			CHECK(per && (strcmp(per, "gpu") == 0 || strcmp(per, "all") == 0));
			double pub = num(tp, "tokens_per_s");
			double got = num(cJSON_GetObjectItemCaseSensitive(e, "time"), "tokens_per_second");
			if (per && strcmp(per, "gpu") == 0)
				got /= num(row, "gpus");
			CHECK(pub > 0 && got > 0);
			if (pub > 0 && got > 0) {
				x->tps = got / pub - 1;
				snprintf(tcell, sizeof tcell, "| %.0f%s | %.0f | %+.1f %% ", pub,
					 per && strcmp(per, "gpu") == 0 ? "/GPU" : "", got, 100 * x->tps);
			}
		}
		CHECK(mem || tp); /* a row measures something */
		printf("| %s | %s x%d %s%s| %s |\n", id, g->id, (int)num(row, "gpus"), mcell, tcell, src);
		printf("<!-- %s -->\n", cmd);
		cJSON_Delete(e);
	}
	printf("\n| group | measure | rows | median abs error | max abs error | sign |\n|---|---|---|---|---|---|\n");
	const char *stacks[] = {"torchtune", "litgpt", "torchtitan", "hf", "fms"};
	for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++)
		print_group(r, n, stacks[i], NULL);
	const char *gens[] = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"};
	for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
		print_group(r, n, NULL, gens[i]);
	double mmed, mmax, tmed, tmax;
	int o, u;
	int nm = summarise(r, n, NULL, NULL, true, &mmed, &mmax, &o, &u);
	printf("| all | peak memory | %d | %.1f %% | %.1f %% | %d over, %d under |\n", nm, 100 * mmed, 100 * mmax, o, u);
	int nt = summarise(r, n, NULL, NULL, false, &tmed, &tmax, &o, &u);
	printf("| all | tokens/s | %d | %.1f %% | %.1f %% | %d over, %d under |\n", nt, 100 * tmed, 100 * tmax, o, u);
	CHECK(n == nrows); /* every row ran */
	CHECK(nm >= 20 && nt >= 15);
	CHECK(mmed <= MEM_MEDIAN_BOUND);
	CHECK(mmax <= MEM_MAX_BOUND);
	CHECK(tmed <= TPS_MEDIAN_BOUND);
	CHECK(tmax <= TPS_MAX_BOUND);
	double xmed, xmax;
	CHECK(summarise(r, n, "torchtitan", NULL, false, &xmed, &xmax, &o, &u) >= 6);
	CHECK(xmax <= TITAN_TPS_MAX_BOUND);
	CHECK(summarise(r, n, "litgpt", NULL, true, &xmed, &xmax, &o, &u) >= 10);
	CHECK(xmax <= LITGPT_MEM_MAX_BOUND);
	/* fms-acceleration's A100 runs (issue 31): tokens/s median 14.4 %
	 * (LoRA +14 ... +28 %, QLoRA +9 ... +34 %, all over) before the LoRA
	 * adapters' bytes, the k-bit fp32 stream's casts and --lora-dropout;
	 * 4.4 % after. Memory: QLoRA on one GPU -20 ... -26 % before the fp32
	 * stream's checkpoints (kbit_prep), +1.1 ... -3.4 % after */
	CHECK(summarise(r, n, "fms", NULL, false, &xmed, &xmax, &o, &u) >= 15);
	CHECK(xmed <= 0.08);
	CHECK(summarise(r, n, "fms", NULL, true, &xmed, &xmax, &o, &u) >= 15);
	CHECK(xmed <= 0.08);
	for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++) { /* no one-signed generation */
		int k;
		double b = signed_median(r, n, gens[i], &k);
		if (k > 0)
			printf("%s: median signed tokens/s error %+.1f %% over %d rows\n", gens[i], 100 * b, k);
		CHECK(fabs(b) <= GEN_TPS_BIAS_BOUND);
	}
	cJSON_Delete(root);
}

/* The rows that could not be mapped say why (the README lists them). */
static void test_skipped_say_why(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/fixtures/published/train.json", vf_test_env("VF_SOURCE_DIR", "."));
	cJSON *root = NULL;
	struct vf_error err = {0};
	CHECK(vf_json_parse_file(path, 1 << 20, &root, &err) == VF_OK);
	const cJSON *sk = cJSON_GetObjectItemCaseSensitive(root, "skipped"), *s;
	CHECK(cJSON_GetArraySize(sk) >= 1);
	cJSON_ArrayForEach(s, sk)
	{
		CHECK(str(s, "what") && str(s, "why") && str(s, "source"));
	}
	cJSON_Delete(root);
}

int main(void)
{
	RUN(test_published_train);
	RUN(test_skipped_say_why);
	return vf_test_done();
}
