/* buf.c - size-capped growable buffers, whole-file reads and atomic writes. */
#include "vramfit/base/buf.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void vf_buf_init(struct vf_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap ? cap : SIZE_MAX / 2;
}

void vf_buf_release(struct vf_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}

void vf_buf_reset(struct vf_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static vf_status grow(struct vf_buf *b, size_t need, struct vf_error *err)
{
	if (need > b->cap)
		return vf_error_set(err, VF_ERR, "exceeds the limit of %zu bytes", b->cap);
	if (need + 1 <= b->alloc)
		return VF_OK;
	size_t n = b->alloc ? b->alloc : 256;
	while (n < need + 1)
		n = n > SIZE_MAX / 2 ? need + 1 : n * 2;
	char *p = realloc(b->data, n);
	if (!p)
		return vf_error_set(err, VF_ENOMEM, "out of memory (%zu bytes)", n);
	b->data = p;
	b->alloc = n;
	return VF_OK;
}

vf_status vf_buf_append(struct vf_buf *b, const void *data, size_t len, struct vf_error *err)
{
	if (len > SIZE_MAX / 2 - b->len)
		return vf_error_set(err, VF_ERR, "exceeds the limit of %zu bytes", b->cap);
	vf_status st = grow(b, b->len + len, err);
	if (st)
		return st;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return VF_OK;
}

vf_status vf_buf_puts(struct vf_buf *b, const char *s, struct vf_error *err)
{
	return vf_buf_append(b, s, strlen(s), err);
}

vf_status vf_buf_vprintf(struct vf_buf *b, struct vf_error *err, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return vf_error_set(err, VF_ERR, "format error");
	vf_status st = grow(b, b->len + (size_t)n, err);
	if (st)
		return st;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return VF_OK;
}

vf_status vf_buf_printf(struct vf_buf *b, struct vf_error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vf_status st = vf_buf_vprintf(b, err, fmt, ap);
	va_end(ap);
	return st;
}

char *vf_buf_detach(struct vf_buf *b, size_t *len)
{
	char *p = b->data;
	if (!p) {
		p = calloc(1, 1);
	}
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}

vf_status vf_buf_read_file(struct vf_buf *b, const char *path, size_t cap, struct vf_error *err)
{
	/* O_NONBLOCK: opening a FIFO without a writer would block forever. Only
	 * regular files are read (a device such as /dev/tty could block too). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		vf_error_set(err, VF_ERR, "%s: %s", path, strerror(errno));
		close(fd);
		return VF_ERR;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: is a directory", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: not a regular file (a pipe, socket or device)",
				    path);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if ((uint64_t)st.st_size > cap) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: file is %lld bytes, over the limit of %zu bytes",
				    path, (long long)st.st_size, cap);
	}
	size_t saved = b->cap;
	b->cap = cap;
	/* room for the size fstat gave, read into in place (no copy); past it
	 * (a file that grew) 64 KiB chunks appended under the cap */
	if (st.st_size > 0)
		(void)grow(b, b->len + (size_t)st.st_size, NULL);
	char chunk[65536];
	vf_status rc = VF_OK;
	for (;;) {
		size_t room = b->alloc > b->len + 1 ? b->alloc - b->len - 1 : 0;
		if (room > cap - (b->len < cap ? b->len : cap))
			room = cap - (b->len < cap ? b->len : cap);
		ssize_t n = room > 0 ? read(fd, b->data + b->len, room) : read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = vf_error_set(err, VF_ERR, "%s: read: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (room > 0) {
			b->len += (size_t)n;
			b->data[b->len] = '\0';
		} else if (vf_buf_append(b, chunk, (size_t)n, err)) {
			rc = vf_error_set(err, VF_ERR, "%s: file exceeds the limit of %zu bytes", path, cap);
			break;
		}
	}
	close(fd);
	b->cap = saved;
	if (rc != VF_OK)
		return rc;
	if (!b->data && grow(b, 0, NULL) == VF_OK)
		b->data[0] = '\0'; /* an empty file reads as "" */
	return VF_OK;
}

vf_status vf_write_file_atomic(const char *path, const void *data, size_t len, struct vf_error *err)
{
	/* Replace what path names: through a symlink, the file it points to
	 * (the link stays a link), keeping that file's permission bits. */
	const char *shown = path;
	char *real = NULL;
	struct stat st;
	bool exists = false;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (!real)
			return vf_error_set(err, VF_ERR, "%s: symlink to nothing writable: %s", path,
					    strerror(errno));
		path = real;
	}
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			free(real);
			return vf_error_set(err, VF_ERR, "%s: not a regular file", shown);
		}
		exists = true;
	}
	size_t pl = strlen(path);
	char *tmp = malloc(pl + 32);
	if (!tmp) {
		free(real);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", shown);
	}
	snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		vf_error_set(err, VF_ERR, "%s: cannot create temp file: %s", shown, strerror(errno));
		free(tmp);
		free(real);
		return VF_ERR;
	}
	if (exists)
		fchmod(fd, st.st_mode & 07777);
	vf_status rc = VF_OK;
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = vf_error_set(err, VF_ERR, "%s: write: %s", shown, strerror(errno));
			close(fd);
			goto fail;
		}
		p += n;
		left -= (size_t)n;
	}
	int synced = fsync(fd), closed = close(fd);
	if (synced != 0 || closed != 0) {
		rc = vf_error_set(err, VF_ERR, "%s: write: %s", shown, strerror(errno));
		goto fail;
	}
	if (rename(tmp, path) != 0) {
		rc = vf_error_set(err, VF_ERR, "%s: rename: %s", shown, strerror(errno));
		goto fail;
	}
	goto done;
fail:
	unlink(tmp);
done:
	free(tmp);
	free(real);
	return rc;
}
