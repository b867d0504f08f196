/* error.c - set and prefix error values (see error.h). */
#include "vramfit/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

vf_status vf_error_set(struct vf_error *err, vf_status code, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

vf_status vf_error_prefix(struct vf_error *err, const char *prefix)
{
	if (!err)
		return VF_ERR;
	char tmp[VF_ERROR_MAX];
	snprintf(tmp, sizeof tmp, "%s: %s", prefix, err->msg);
	memcpy(err->msg, tmp, sizeof tmp);
	return err->code ? err->code : VF_ERR;
}

void vf_error_clear(struct vf_error *err)
{
	if (err) {
		err->code = VF_OK;
		err->msg[0] = '\0';
	}
}
