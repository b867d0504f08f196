/* advice.c - the cheapest changes that make a setup fit (advice.h): the
 * search's least-invasive-first list, each candidate confirmed by the
 * caching allocator simulation (the search itself uses the fast path). */
#include "vramfit/estimate/advice.h"

#include "vramfit/estimate/search.h"

#include <string.h>

vf_status vf_advice_run(const struct vf_arch *arch, const struct vf_setup *start,
			const struct vf_gpu_spec *gpu, const struct vf_alloc_config *cfg,
			double margin, struct vf_advice *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	struct vf_search_opts o;
	vf_search_opts_defaults(&o);
	o.knobs = (VF_KNOBS_DEFAULT | VF_KNOB_BIT(VF_KNOB_PRECISION)) &
		  ~(VF_KNOB_BIT(VF_KNOB_GPUS) | VF_KNOB_BIT(VF_KNOB_SHARD));
	o.margin = margin;
	o.max_gpus = start->gpus;
	o.sort = VF_SORT_CHANGES;
	o.top = 64;
	struct vf_search s;
	vf_status st = vf_search_run(arch, start, gpu, &o, &s, err);
	if (st != VF_OK)
		return st;
	out->evaluated = s.evaluated;
	for (size_t i = 0; i < s.count && out->n < VF_ADVICE_MAX; i++) {
		const struct vf_search_result *r = &s.results[i];
		struct vf_estimate e;
		st = vf_estimate_simulate(arch, &r->setup, gpu, cfg, &e, NULL, err);
		if (st != VF_OK)
			break;
		int64_t room;
		if (!vf_estimate_fits(&e, gpu, &room) || e.sim_oom || e.peak_bytes > r->limit_bytes)
			continue; /* fit's rule: the margin kept free (r->limit_bytes) */
		struct vf_advice_item *it = &out->item[out->n++];
		it->setup = r->setup;
		vf_search_diff(start, &r->setup, it->changes, sizeof it->changes);
		it->peak_bytes = e.peak_bytes;
		it->headroom_bytes = room;
	}
	vf_search_release(&s);
	return st;
}
