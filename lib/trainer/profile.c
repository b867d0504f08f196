/* profile.c - load one part of a trainer profile (see profile.h). */
#include "vramfit/trainer/profile.h"

#include <stdio.h>
#include <string.h>

#include "vramfit/base/data.h"

vf_status vf_profile_part(const char *trainer, const char *part, cJSON **out,
			  struct vf_error *err)
{
	*out = NULL;
	if (!trainer || !*trainer || strchr(trainer, '/') || strstr(trainer, ".."))
		return vf_error_set(err, VF_EUSAGE, "invalid trainer profile name '%s'",
				    trainer ? trainer : "");
	char name[256];
	snprintf(name, sizeof name, "profiles/%s/%s.json", trainer, part);
	vf_status st = vf_data_load_json(name, out, NULL, 0, err);
	if (st == VF_ENOTFOUND)
		return vf_error_set(err, VF_ENOTFOUND, "trainer profile '%s' has no %s part",
				    trainer, part);
	return st;
}
