/* nccl.h - internal: collectives as NCCL runs them over a GPU's links
 * (nccl.c): the link class of a catalog GPU (NVLink generation, PCIe with
 * or without peer-to-peer, the node's network beyond one node), its bus
 * bandwidth and latency, and the time of an all-reduce, all-gather or
 * reduce-scatter by message size and GPU count. Constants from the
 * "communication" section of data/estimate/steptime.json. */
#ifndef VRAMFIT_NCCL_H
#define VRAMFIT_NCCL_H

#include <stdbool.h>

#include "vramfit/estimate/estimate.h"
#include "vramfit/estimate/setup.h"
#include "vramfit/gpu/gpu.h"

enum vf__coll { VF__ALL_REDUCE, VF__ALL_GATHER, VF__REDUCE_SCATTER };

struct vf__link {
	char name[24];   /* "nvlink4", "pcie4-shm", "infiniband", "catalog" */
	double busbw;    /* bytes/s, large messages */
	double base_s;   /* a small collective's fixed latency */
	double step_s;   /* per ring step */
	double overlap;  /* scales each strategy's overlap (SHM transport: less) */
	double channels; /* NCCL's channels (one CTA, so one SM, each) on this link */
	bool known;      /* false: no bandwidth for this GPU */
};

/* The link `gpus` GPUs of this kind communicate over. */
void vf__nccl_link(const struct vf_gpu_spec *gpu, int gpus, struct vf__link *out);

/* Seconds of `count` collectives of `bytes` each (the full buffer: the
 * all-reduce's tensor, the all-gather's output, the reduce-scatter's
 * input) over n GPUs on link l (ring: bus bytes 2(n-1)/n or (n-1)/n). */
double vf__nccl_seconds(const struct vf__link *l, enum vf__coll c, int n, double bytes,
			double count);

/* The share of its window a strategy hides communication behind:
 * "ddp", "fsdp", "zero2", "tp". */
double vf__nccl_overlap(const char *strategy);
/* The same by number, without comparing names (every estimate on several
 * GPUs asks): VF__OV_DDP "ddp", VF__OV_FSDP "fsdp", VF__OV_ZERO2 "zero2",
 * VF__OV_TP "tp". */
enum vf__ov { VF__OV_DDP, VF__OV_FSDP, VF__OV_ZERO2, VF__OV_TP };
double vf__nccl_overlap_of(enum vf__ov strategy);

/* The share of the GPU's SMs NCCL's kernels hold on link l: channels /
 * SMs (one CTA per channel, each on its own SM for the collective's
 * length). While a collective overlaps compute, the compute runs on the
 * other SMs, so hiding t seconds of communication costs t x this share
 * of compute time. 0 when the link is unknown or the GPU has no SM
 * count (data/gpus.json sms); the estimate's assumptions say so. */
double vf__nccl_sm_share(const struct vf__link *l, const struct vf_gpu_spec *gpu);

/* Add a training step's data-parallel communication to an LLM estimate
 * of `layers` layers on gpu (runcost.c): e->parts.comm_*, step_seconds,
 * tokens/s, MFU. */
void vf__estimate_add_comm(const struct vf_setup *su, const struct vf_gpu_spec *gpu,
			   double layers, struct vf_estimate *e);
/* The same over the link vf__nccl_link gave for su->gpus GPUs of gpu,
 * kept by the caller (estimate.c's search context; NULL: looked up). */
void vf__estimate_add_comm_link(const struct vf_setup *su, const struct vf_gpu_spec *gpu,
				const struct vf__link *link, double layers, struct vf_estimate *e);

#endif
