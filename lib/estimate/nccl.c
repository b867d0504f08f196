/* nccl.c - collectives as NCCL runs them (nccl.h):
 *
 *   link       the catalog GPU's interconnect text names the class:
 *              NVLink 2/3/4/5, an NVLink bridge (pairs only), PCIe 3/4/5
 *              with peer-to-peer, or without it (GeForce cards: NCCL's
 *              SHM transport through host memory); beyond gpus_per_node
 *              the ring crosses the nodes' network (InfiniBand for NVLink
 *              systems, Ethernet for PCIe servers) and the slower link
 *              sets the pace;
 *   time       count x (base + ring steps x step latency)
 *              + bus bytes / bus bandwidth, with bus bytes 2(n-1)/n x
 *              bytes for an all-reduce and (n-1)/n x bytes for an
 *              all-gather or reduce-scatter (nccl-tests' definition);
 *              an all-reduce takes NCCL's tree instead when faster
 *              (2 log2 n steps, tree_bandwidth_ratio of the bandwidth);
 *   SMs        NCCL runs a collective as one CTA per channel, each
 *              holding an SM while it lasts: the compute it overlaps
 *              runs on the others (sm share = channels / SMs).
 * The figures and their sources: data/estimate/steptime.json,
 * "communication". */
#include "nccl.h"

#include "steptime.h"
#include "vramfit/base/json.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_LINKS 16

static struct {
	struct vf__link link[MAX_LINKS];
	int nlinks;
	int per_node;
	double ov_ddp, ov_fsdp, ov_zero2, ov_tp;
	double tree_bw;  /* tree all-reduce's bandwidth relative to the ring's */
} C;
static pthread_once_t C_once = PTHREAD_ONCE_INIT; /* C filled once, for every thread */

static double num(const cJSON *o, const char *key, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsObject(v))
		v = cJSON_GetObjectItemCaseSensitive(v, "value");
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : fallback;
}

static void load_once(void)
{
	/* the file steptime.c reads (once); without it the defaults below,
	 * said in the estimate's assumptions (vf_estimate_constants_fallback) */
	const cJSON *cm = vf__steptime_data("communication");
	const cJSON *links = cJSON_GetObjectItemCaseSensitive(cm, "links");
	const cJSON *l;
	cJSON_ArrayForEach(l, links)
	{
		if (C.nlinks >= MAX_LINKS || !l->string)
			break;
		struct vf__link *k = &C.link[C.nlinks];
		snprintf(k->name, sizeof k->name, "%s", l->string);
		k->busbw = num(l, "busbw_gbs", 0) * 1e9;
		k->base_s = num(l, "base_us", 10) * 1e-6;
		k->step_s = num(l, "step_us", 2) * 1e-6;
		k->overlap = num(l, "overlap_scale", 1);
		k->channels = num(l, "channels", 2);
		k->known = k->busbw > 0;
		if (k->known)
			C.nlinks++;
	}
	C.per_node = (int)num(cm, "gpus_per_node", 8);
	C.tree_bw = num(cm, "tree_bandwidth_ratio", 0.9);
	if (!(C.tree_bw > 0))
		C.tree_bw = 0.9;
	if (C.per_node < 1)
		C.per_node = 8;
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(cm, "overlap");
	C.ov_ddp = num(ov, "ddp", 0.8);
	C.ov_fsdp = num(ov, "fsdp", 0.8);
	C.ov_zero2 = num(ov, "zero2", 0.8);
	C.ov_tp = num(ov, "tp", 0);
}

/* C, read under pthread_once: the rows of an estimate run on threads
 * (cmd-estimate), and each thread's first estimate may be the first */
static void load(void)
{
	pthread_once(&C_once, load_once);
}

static bool find(const char *name, struct vf__link *out)
{
	for (int i = 0; i < C.nlinks; i++)
		if (strcmp(C.link[i].name, name) == 0) {
			*out = C.link[i];
			return true;
		}
	return false;
}

/* The link class inside one node. */
static bool node_link(const struct vf_gpu_spec *gpu, int gpus, struct vf__link *out)
{
	static const char *const nv_pat[] = {"NVLink 5", "NVLink 4", "NVLink 3", "NVLink 2"};
	static const char *const nv_name[] = {"nvlink5", "nvlink4", "nvlink3", "nvlink2"};
	static const char *const pcie_pat[] = {"PCIe 5", "PCIe 4", "PCIe 3"};
	static const char *const pcie_name[][2] = {
		{"pcie5-p2p", "pcie5-shm"}, {"pcie4-p2p", "pcie4-shm"}, {"pcie3-p2p", "pcie3-shm"}};
	const char *ic = gpu->interconnect;
	if (gpu->nvlink) {
		if (strstr(ic, "bridge"))
			return find(gpus <= 2 ? "nvlink-bridge" : "pcie5-p2p", out);
		for (int i = 0; i < 4; i++)
			if (strstr(ic, nv_pat[i]))
				return find(nv_name[i], out);
		return false;
	}
	for (int i = 0; i < 3; i++)
		if (strstr(ic, pcie_pat[i]))
			return find(pcie_name[i][vf__steptime_geforce(gpu) ? 1 : 0], out);
	return false;
}

/* node_link's answer for the last GPU, per thread. It reads the
 * interconnect and name texts, the NVLink flag and whether the GPUs are a
 * pair; an equal copy of those has the same answer, any other is looked up
 * afresh, so repeated plain estimates do not search the texts each time
 * (a search context keeps its GPU's link per GPU count instead:
 * vf__estimate_add_comm_link). */
static _Thread_local struct {
	bool valid;
	char interconnect[sizeof ((struct vf_gpu_spec *)0)->interconnect];
	char name[sizeof ((struct vf_gpu_spec *)0)->name];
	bool nvlink, pair;
	bool found;
	struct vf__link link;
} link_memo;

static bool node_link_memo(const struct vf_gpu_spec *gpu, int gpus, struct vf__link *out)
{
	bool pair = gpus <= 2;
	if (link_memo.valid && link_memo.nvlink == gpu->nvlink && link_memo.pair == pair &&
	    memcmp(link_memo.interconnect, gpu->interconnect, sizeof link_memo.interconnect) == 0 &&
	    memcmp(link_memo.name, gpu->name, sizeof link_memo.name) == 0) {
		if (link_memo.found)
			*out = link_memo.link;
		return link_memo.found;
	}
	bool found = node_link(gpu, gpus, out);
	memcpy(link_memo.interconnect, gpu->interconnect, sizeof link_memo.interconnect);
	memcpy(link_memo.name, gpu->name, sizeof link_memo.name);
	link_memo.nvlink = gpu->nvlink;
	link_memo.pair = pair;
	link_memo.found = found;
	if (found)
		link_memo.link = *out;
	/* texts that end inside their fields only (else the answer read past
	 * them) */
	link_memo.valid = memchr(link_memo.interconnect, 0, sizeof link_memo.interconnect) &&
			  memchr(link_memo.name, 0, sizeof link_memo.name);
	return found;
}

void vf__nccl_link(const struct vf_gpu_spec *gpu, int gpus, struct vf__link *out)
{
	load();
	memset(out, 0, sizeof *out);
	if (!gpu)
		return;
	if (!node_link_memo(gpu, gpus, out)) {
		/* a GPU the classes do not cover: 0.4 of its interconnect figure */
		if (!(gpu->interconnect_gbs > 0))
			return;
		memcpy(out->name, "catalog", sizeof "catalog");
		out->busbw = 0.4 * gpu->interconnect_gbs * 1e9;
		out->base_s = 10e-6;
		out->step_s = 2e-6;
		out->overlap = 1;
		out->channels = 2;
		out->known = true;
	}
	struct vf__link net;
	if (gpus > C.per_node && find(gpu->nvlink ? "infiniband" : "ethernet", &net)) {
		/* the ring crosses the nodes: the slower hop sets the pace */
		if (net.busbw < out->busbw) {
			out->busbw = net.busbw;
			memcpy(out->name, net.name, sizeof out->name);
		}
		if (net.base_s > out->base_s)
			out->base_s = net.base_s;
		if (net.step_s > out->step_s)
			out->step_s = net.step_s;
		out->channels = net.channels; /* the network graph's rings */
	}
}

double vf__nccl_seconds(const struct vf__link *l, enum vf__coll c, int n, double bytes,
			double count)
{
	if (n <= 1 || !l->known || !(count > 0) || !(bytes > 0))
		return 0;
	double r = (double)(n - 1) / n;
	double steps = c == VF__ALL_REDUCE ? 2.0 * (n - 1) : (double)(n - 1);
	double bus = (c == VF__ALL_REDUCE ? 2 * r : r) * bytes; /* bytes each GPU sends */
	double ring = l->base_s + steps * l->step_s + bus / l->busbw;
	if (c == VF__ALL_REDUCE) {
		/* NCCL's tree: log2(n) steps up and down, a little less bandwidth;
		 * NCCL picks whichever is faster for the size (small messages,
		 * many GPUs: the tree) */
		/* ceil(log2(n)) = the bits of n - 1 (n >= 2; the same double,
		 * without libm on every estimate) */
		double depth = (double)(32 - __builtin_clz((unsigned)(n - 1)));
		double tree = l->base_s + 2 * depth * l->step_s + bus / (l->busbw * C.tree_bw);
		if (tree < ring)
			ring = tree;
	}
	return count * ring;
}

double vf__nccl_overlap_of(enum vf__ov strategy)
{
	load();
	switch (strategy) {
	case VF__OV_DDP:
		return C.ov_ddp;
	case VF__OV_FSDP:
		return C.ov_fsdp;
	case VF__OV_ZERO2:
		return C.ov_zero2;
	default:
		return C.ov_tp;
	}
}

double vf__nccl_overlap(const char *strategy)
{
	if (strcmp(strategy, "ddp") == 0)
		return vf__nccl_overlap_of(VF__OV_DDP);
	if (strcmp(strategy, "fsdp") == 0)
		return vf__nccl_overlap_of(VF__OV_FSDP);
	if (strcmp(strategy, "zero2") == 0)
		return vf__nccl_overlap_of(VF__OV_ZERO2);
	return vf__nccl_overlap_of(VF__OV_TP);
}

double vf__nccl_sm_share(const struct vf__link *l, const struct vf_gpu_spec *gpu)
{
	load();
	if (!l->known || !gpu)
		return 0;
	double sms = gpu->sms; /* data/gpus.json; 0 unknown */
	if (!(sms >= 1))
		return 0;
	double share = l->channels / sms; /* SMs NCCL holds */
	return share < 1 ? share : 1;
}
