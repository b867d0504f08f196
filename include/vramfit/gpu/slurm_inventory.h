/* slurm_inventory.h - a Slurm cluster's GPUs from `scontrol -o show node`
 * (one line per node: NodeName, Partitions, Gres, RealMemory, State,
 * CPUTot), grouped per partition, for `vramfit probe --slurm`. The GPU
 * type is the gres type (gpu:h100:4 -> h100); its memory comes from the
 * GPU catalog when the type names a catalog entry, else it is unknown and
 * said so (a site may name types as it likes). */
#ifndef VRAMFIT_SLURM_INVENTORY_H
#define VRAMFIT_SLURM_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vramfit/base/error.h"
#include "vramfit/gpu/gpu.h"

#define VF_SLURM_MAX_NODES 4096
#define VF_SLURM_MAX_PARTITIONS 64

struct vf_slurm_node {
	char name[64];
	char partitions[256];  /* comma-separated */
	char state[32];
	char gpu_type[32];     /* "" when the gres has no type */
	int gpus;              /* 0 none */
	int cpus;              /* -1 unknown */
	int64_t memory_mib;    /* RealMemory; -1 unknown */
};

struct vf_slurm_partition {
	char name[64];
	int nodes;
	int gpu_nodes;         /* nodes with at least one GPU */
	int gpus_per_node;     /* the smallest non-zero count among its GPU nodes */
	int gpus_total;
	char gpu_type[32];     /* of the node with the smallest GPU count; "" untyped */
	char gpu_types[128];   /* every type seen, comma-separated */
	int64_t node_memory_mib; /* the smallest RealMemory; -1 unknown */
};

struct vf_slurm_inventory {
	struct vf_slurm_node *nodes;
	size_t nnodes;
	struct vf_slurm_partition parts[VF_SLURM_MAX_PARTITIONS];
	size_t nparts;
};

/* Parse scontrol -o show node output (text of len bytes). Lines that are
 * not node records are ignored; more than VF_SLURM_MAX_NODES nodes or
 * VF_SLURM_MAX_PARTITIONS partitions is an error naming the limit.
 * Caller owns; vf_slurm_inventory_release(). */
vf_status vf_slurm_inventory_parse(const char *text, size_t len, struct vf_slurm_inventory *inv,
				   struct vf_error *err);
void vf_slurm_inventory_release(struct vf_slurm_inventory *inv);

/* The GPU count and type of one Gres= value ("gpu:h100:4(S:0-1),mps:100",
 * "gpu:2"): the sum of the gpu entries, the first entry's type. */
int vf_slurm_gres_gpus(const char *gres, char *type, size_t tl);

/* How a gres type was placed in the GPU catalog. */
enum vf_gres_how {
	VF_GRES_UNKNOWN,   /* no entry: memory and tier unknown */
	VF_GRES_MAPPED,    /* --gres-map TYPE=GPU_ID */
	VF_GRES_ID,        /* the type is a catalog id (h100_80gb -> h100-80gb) */
	VF_GRES_NAME,      /* the type is one entry's match name (rtx3090 -> "rtx 3090") */
	VF_GRES_AMBIGUOUS, /* the type is a match name of several entries: the smallest */
	VF_GRES_WORDS,     /* the type's words contain a match name (approximate) */
};

struct vf_gres_type {
	const struct vf_gpu_spec *spec; /* Borrowed (catalog); NULL when unknown */
	enum vf_gres_how how;
	char others[128];               /* VF_GRES_AMBIGUOUS: the other entries' ids */
};

/* Place a site-chosen gres type ("h100", "a100_80gb", "RTX3090") in the
 * GPU catalog. Names are compared with case, '_', '-' and blanks ignored
 * (and the words nvidia, geforce, tesla dropped, as for probed names): the
 * maps first (each "TYPE=GPU_ID", as --gres-map takes them), then the
 * catalog ids, then the entries' match names, then a match name among the
 * type's words. */
void vf_slurm_gres_type_resolve(const char *type, const char *const *maps, int nmaps,
				struct vf_gres_type *out);

/* Check one --gres-map value: TYPE=GPU_ID with a non-empty TYPE and an id
 * of the catalog; the error names the value and the problem. */
vf_status vf_slurm_gres_map_check(const char *map, struct vf_error *err);

/* The GPUs named by `nvidia-smi --query-gpu=name,memory.total
 * --format=csv,noheader` output (one "NAME, N MiB" line per GPU): the
 * first line's name (cut to nl) and memory in MiB. false when no line
 * reads so. */
bool vf_slurm_smi_first(const char *text, size_t len, char *name, size_t nl, int64_t *mib);

#endif
