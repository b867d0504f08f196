/* buf.h - size-capped growable byte buffers (after curl's dynbuf).
 * Everything read from outside goes through a buffer with a cap; appending
 * past the cap fails with VF_ERR and a message naming the cap. */
#ifndef VRAMFIT_BUF_H
#define VRAMFIT_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "vramfit/base/error.h"

struct vf_buf {
	char *data;   /* always NUL-terminated when non-NULL */
	size_t len;
	size_t alloc;
	size_t cap;   /* maximum len; 0 = SIZE_MAX/2 */
};

void vf_buf_init(struct vf_buf *b, size_t cap);
void vf_buf_release(struct vf_buf *b);
void vf_buf_reset(struct vf_buf *b);
vf_status vf_buf_append(struct vf_buf *b, const void *data, size_t len, struct vf_error *err);
vf_status vf_buf_puts(struct vf_buf *b, const char *s, struct vf_error *err);
vf_status vf_buf_printf(struct vf_buf *b, struct vf_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
vf_status vf_buf_vprintf(struct vf_buf *b, struct vf_error *err, const char *fmt, va_list ap);
/* Take ownership of the data (caller frees with free()); b is reset. */
char *vf_buf_detach(struct vf_buf *b, size_t *len);

/* Read a whole file, failing when it exceeds cap bytes. The message names path. */
vf_status vf_buf_read_file(struct vf_buf *b, const char *path, size_t cap, struct vf_error *err);

/* Write data to path atomically: a temp file in the same directory, fsync,
 * rename. Nothing is half-written on failure. */
vf_status vf_write_file_atomic(const char *path, const void *data, size_t len, struct vf_error *err);

#endif
