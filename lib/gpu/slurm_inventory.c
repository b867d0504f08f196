/* slurm_inventory.c - parse `scontrol -o show node` into nodes and
 * partitions (see slurm_inventory.h). Every field is bounded: values are
 * cut to their buffers, counts clamped. */
#include "vramfit/gpu/slurm_inventory.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key in one blank-separated key=value line. */
static bool field(const char *line, size_t len, const char *key, char *v, size_t vl)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl < len; i++) {
		if ((i == 0 || line[i - 1] == ' ') && strncmp(line + i, key, kl) == 0 && line[i + kl] == '=') {
			size_t j = i + kl + 1, k = 0;
			while (j < len && line[j] != ' ' && line[j] != '\n' && k + 1 < vl)
				v[k++] = line[j++];
			v[k] = '\0';
			return true;
		}
	}
	return false;
}

int vf_slurm_gres_gpus(const char *gres, char *type, size_t tl)
{
	int total = 0;
	if (tl)
		type[0] = '\0';
	char copy[512];
	snprintf(copy, sizeof copy, "%s", gres ? gres : "");
	for (char *sv = NULL, *item = strtok_r(copy, ",", &sv); item; item = strtok_r(NULL, ",", &sv)) {
		char *paren = strchr(item, '(');
		if (paren)
			*paren = '\0';
		if (strncmp(item, "gpu", 3) != 0 || (item[3] != ':' && item[3] != '\0'))
			continue;
		char *last = strrchr(item, ':');
		if (!last)
			continue;
		char *end;
		long n = strtol(last + 1, &end, 10);
		if (*end || n < 0 || n > 1024)
			continue;
		total += (int)n;
		if (last > item + 3 && tl && !type[0]) /* gpu:TYPE:N */
			snprintf(type, tl, "%.*s", (int)(last - item - 4), item + 4);
	}
	return total;
}

static vf_status parse_node(const char *line, size_t len, struct vf_slurm_node *n)
{
	memset(n, 0, sizeof *n);
	char v[512];
	field(line, len, "NodeName", n->name, sizeof n->name);
	field(line, len, "Partitions", n->partitions, sizeof n->partitions);
	field(line, len, "State", n->state, sizeof n->state);
	n->gpus = field(line, len, "Gres", v, sizeof v) ? vf_slurm_gres_gpus(v, n->gpu_type, sizeof n->gpu_type) : 0;
	n->cpus = field(line, len, "CPUTot", v, sizeof v) ? atoi(v) : -1;
	n->memory_mib = field(line, len, "RealMemory", v, sizeof v) ? strtoll(v, NULL, 10) : -1;
	return VF_OK;
}

static struct vf_slurm_partition *part_get(struct vf_slurm_inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nparts; i++)
		if (strcmp(inv->parts[i].name, name) == 0)
			return &inv->parts[i];
	if (inv->nparts >= VF_SLURM_MAX_PARTITIONS)
		return NULL;
	struct vf_slurm_partition *p = &inv->parts[inv->nparts++];
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", name);
	p->node_memory_mib = -1;
	return p;
}

static void part_add(struct vf_slurm_partition *p, const struct vf_slurm_node *n)
{
	p->nodes++;
	if (n->memory_mib >= 0 && (p->node_memory_mib < 0 || n->memory_mib < p->node_memory_mib))
		p->node_memory_mib = n->memory_mib;
	if (n->gpus <= 0)
		return;
	p->gpu_nodes++;
	p->gpus_total += n->gpus;
	if (p->gpus_per_node == 0 || n->gpus < p->gpus_per_node) {
		p->gpus_per_node = n->gpus;
		snprintf(p->gpu_type, sizeof p->gpu_type, "%s", n->gpu_type);
	}
	const char *t = n->gpu_type[0] ? n->gpu_type : "(untyped)";
	if (!strstr(p->gpu_types, t)) {
		size_t l = strlen(p->gpu_types);
		snprintf(p->gpu_types + l, sizeof p->gpu_types - l, "%s%s", l ? "," : "", t);
	}
}

vf_status vf_slurm_inventory_parse(const char *text, size_t len, struct vf_slurm_inventory *inv,
				   struct vf_error *err)
{
	memset(inv, 0, sizeof *inv);
	size_t cap = 0;
	for (size_t pos = 0; pos < len;) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		pos += ll + 1;
		if (ll < 9 || strncmp(line, "NodeName=", 9) != 0)
			continue;
		if (inv->nnodes >= VF_SLURM_MAX_NODES)
			return vf_error_set(err, VF_ERR, "scontrol show node: more than %d nodes", VF_SLURM_MAX_NODES);
		if (inv->nnodes == cap) {
			cap = cap ? cap * 2 : 16;
			struct vf_slurm_node *nn = realloc(inv->nodes, cap * sizeof *nn);
			if (!nn)
				return vf_error_set(err, VF_ENOMEM, "out of memory");
			inv->nodes = nn;
		}
		struct vf_slurm_node *n = &inv->nodes[inv->nnodes++];
		parse_node(line, ll, n);
		char copy[256];
		snprintf(copy, sizeof copy, "%s", n->partitions);
		for (char *sv = NULL, *pn = strtok_r(copy, ",", &sv); pn; pn = strtok_r(NULL, ",", &sv)) {
			struct vf_slurm_partition *p = part_get(inv, pn);
			if (!p)
				return vf_error_set(err, VF_ERR, "scontrol show node: more than %d partitions",
						    VF_SLURM_MAX_PARTITIONS);
			part_add(p, n);
		}
	}
	return VF_OK;
}

void vf_slurm_inventory_release(struct vf_slurm_inventory *inv)
{
	if (!inv)
		return;
	free(inv->nodes);
	inv->nodes = NULL;
	inv->nnodes = inv->nparts = 0;
}

/* --- gres types and the GPU catalog ----------------------------------------- */

/* name normalised as a probed GPU name, blanks removed: "A100_80GB" ->
 * "a10080gb", "rtx 3090" -> "rtx3090". */
static void compact(const char *name, char *out, size_t n)
{
	char norm[128];
	vf_gpu_name_normalize(name, norm, sizeof norm);
	size_t o = 0;
	for (const char *p = norm; *p && o + 1 < n; p++)
		if (*p != ' ')
			out[o++] = *p;
	if (n)
		out[o < n ? o : n - 1] = '\0';
}

void vf_slurm_gres_type_resolve(const char *type, const char *const *maps, int nmaps,
				struct vf_gres_type *out)
{
	memset(out, 0, sizeof *out);
	char t[128], k[128];
	compact(type ? type : "", t, sizeof t);
	if (!t[0])
		return;
	for (int i = 0; i < nmaps; i++) {
		const char *eq = maps[i] ? strchr(maps[i], '=') : NULL;
		if (!eq)
			continue;
		char key[128];
		snprintf(key, sizeof key, "%.*s", (int)(eq - maps[i] < 127 ? eq - maps[i] : 127), maps[i]);
		compact(key, k, sizeof k);
		const struct vf_gpu_spec *s = vf_gpu_catalog_find(eq + 1);
		if (s && strcmp(k, t) == 0) { /* the last map of a type wins, as options do */
			out->spec = s;
			out->how = VF_GRES_MAPPED;
		}
	}
	if (out->spec)
		return;
	size_t n;
	const struct vf_gpu_spec *cat = vf_gpu_catalog(&n, NULL);
	if (!cat)
		return;
	for (size_t i = 0; i < n; i++) {
		compact(cat[i].id, k, sizeof k);
		if (strcmp(k, t) == 0) {
			out->spec = &cat[i];
			out->how = VF_GRES_ID;
			return;
		}
	}
	/* A match name: several entries may share one ("a100": 40 and 80 GB);
	 * the smallest is the one a plan can rely on. */
	for (size_t i = 0; i < n; i++)
		for (int m = 0; m < cat[i].nmatch; m++) {
			compact(cat[i].match[m], k, sizeof k);
			if (strcmp(k, t) != 0)
				continue;
			if (!out->spec) {
				out->spec = &cat[i];
				out->how = VF_GRES_NAME;
			} else if (out->spec != &cat[i]) {
				const struct vf_gpu_spec *other = &cat[i];
				if (other->memory_mib < out->spec->memory_mib) {
					other = out->spec;
					out->spec = &cat[i];
				}
				size_t l = strlen(out->others);
				snprintf(out->others + l, sizeof out->others - l, "%s%s", l ? ", " : "", other->id);
				out->how = VF_GRES_AMBIGUOUS;
			}
			break;
		}
	if (out->spec)
		return;
	char words[128];
	vf_gpu_name_normalize(type, words, sizeof words);
	if ((out->spec = vf_gpu_catalog_match(words, -1)) != NULL)
		out->how = VF_GRES_WORDS;
}

vf_status vf_slurm_gres_map_check(const char *map, struct vf_error *err)
{
	const char *eq = map ? strchr(map, '=') : NULL;
	if (!eq || eq == map || !eq[1])
		return vf_error_set(err, VF_EUSAGE, "--gres-map '%s': expected TYPE=GPU_ID (h100=h100-80gb)",
				    map ? map : "");
	char k[128];
	snprintf(k, sizeof k, "%.*s", (int)(eq - map < 127 ? eq - map : 127), map);
	char c[128];
	compact(k, c, sizeof c);
	if (!c[0])
		return vf_error_set(err, VF_EUSAGE, "--gres-map '%s': the gres type has no letter or digit", map);
	struct vf_error cerr = {0};
	if (!vf_gpu_catalog(NULL, &cerr))
		return vf_error_set(err, VF_ERR, "%s", cerr.msg);
	if (!vf_gpu_catalog_find(eq + 1))
		return vf_error_set(err, VF_EUSAGE, "--gres-map '%s': '%s' is not a GPU id of the catalog "
				    "(see `vramfit gpus`)", map, eq + 1);
	return VF_OK;
}

bool vf_slurm_smi_first(const char *text, size_t len, char *name, size_t nl, int64_t *mib)
{
	for (size_t pos = 0; pos < len;) {
		const char *line = text + pos;
		const char *end = memchr(line, '\n', len - pos);
		size_t ll = end ? (size_t)(end - line) : len - pos;
		pos += ll + 1;
		const char *comma = memchr(line, ',', ll);
		if (!comma || comma == line)
			continue;
		char num[64];
		size_t rest = ll - (size_t)(comma + 1 - line);
		snprintf(num, sizeof num, "%.*s", (int)(rest < 63 ? rest : 63), comma + 1);
		char *p = num;
		while (*p == ' ')
			p++;
		char *e;
		long long v = strtoll(p, &e, 10);
		while (*e == ' ')
			e++;
		if (e == p || v <= 0 || v > (1LL << 30) || (strcmp(e, "MiB") != 0 && strcmp(e, "MiB\r") != 0))
			continue;
		size_t n0 = (size_t)(comma - line);
		while (n0 && line[n0 - 1] == ' ')
			n0--;
		size_t s0 = 0;
		while (s0 < n0 && line[s0] == ' ')
			s0++;
		if (s0 == n0)
			continue;
		size_t cut = n0 - s0 < nl ? n0 - s0 : nl - 1;
		memcpy(name, line + s0, cut);
		name[cut] = '\0';
		for (size_t i = 0; i < cut; i++)
			if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
				name[i] = '?';
		*mib = v;
		return true;
	}
	return false;
}
