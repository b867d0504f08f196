/* error.h - errors as values.
 * Functions that can fail return vf_status and take struct vf_error *err
 * last; the message names the file, the field and what was expected.
 * Only src/ prints them ("vramfit: error: <msg>"). */
#ifndef VRAMFIT_ERROR_H
#define VRAMFIT_ERROR_H

#include <stddef.h>

typedef enum {
	VF_OK = 0,
	VF_ERR = 1,       /* generic failure: bad input, I/O, limits */
	VF_ENOTFOUND = 2, /* a thing looked up does not exist */
	VF_EUSAGE = 3,    /* caller passed something invalid */
	VF_ENOMEM = 4,
} vf_status;

#define VF_ERROR_MAX 1024

struct vf_error {
	vf_status code;
	char msg[VF_ERROR_MAX];
};

/* Set err (may be NULL) to code with a printf-style message; returns code. */
vf_status vf_error_set(struct vf_error *err, vf_status code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix the existing message with "<prefix>: " (e.g. a file name). */
vf_status vf_error_prefix(struct vf_error *err, const char *prefix);
void vf_error_clear(struct vf_error *err);

#endif
