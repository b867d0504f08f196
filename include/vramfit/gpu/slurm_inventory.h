/* slurm_inventory.h - a Slurm cluster's GPUs from `scontrol -o show node`
 * (one line per node: NodeName, Partitions, Gres, RealMemory, State,
 * CPUTot), grouped per partition, for `vramfit probe --slurm`. The GPU
 * type is the gres type (gpu:h100:4 -> h100); its memory comes from the
 * GPU catalog when the type names a catalog entry, else it is unknown and
 * said so (a site may name types as it likes). */
#ifndef VRAMFIT_SLURM_INVENTORY_H
#define VRAMFIT_SLURM_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

#include "vramfit/base/error.h"

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

#endif
