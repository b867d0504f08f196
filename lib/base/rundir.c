/* rundir.c - files in a run directory, opened relative to its descriptor
 * and never through a symbolic link (see rundir.h). */
#include "vramfit/base/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static vf_status link_error(struct vf_error *err, const char *shown, int dirfd, const char *leaf)
{
	char to[PATH_MAX];
	ssize_t n = readlinkat(dirfd, leaf, to, sizeof to - 1);
	to[n > 0 ? n : 0] = '\0';
	return vf_error_set(err, VF_ERR,
			    "%s: is a symbolic link%s%s; vramfit writes only inside the run directory and "
			    "never through a link: remove it",
			    shown, n > 0 ? " to " : "", to);
}

vf_status vf_rundir_open(struct vf_rundir *rd, const char *path, int flags, struct vf_error *err)
{
	rd->fd = -1;
	snprintf(rd->path, sizeof rd->path, "%s", path);
	if (strlen(path) >= sizeof rd->path)
		return vf_error_set(err, VF_ERR, "%.200s...: run directory path too long", path);
	if ((flags & VF_RUNDIR_CREATE) && mkdir(path, 0755) != 0 &&
	    !(errno == EEXIST && (flags & VF_RUNDIR_EXIST_OK)))
		return vf_error_set(err, VF_ERR, "%s: %s", path,
				    errno == EEXIST ? "appeared meanwhile; it is never overwritten" : strerror(errno));
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char to[PATH_MAX];
		ssize_t n = readlink(path, to, sizeof to - 1);
		to[n > 0 ? n : 0] = '\0';
		return vf_error_set(err, VF_ERR,
				    "%s: the run directory is a symbolic link%s%s; vramfit writes only inside a real "
				    "run directory: name the directory itself, or remove the link",
				    path, n > 0 ? " to " : "", to);
	}
	rd->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rd->fd < 0) {
		int e = errno;
		return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    e == ELOOP ? "the run directory is a symbolic link"
				    : e == ENOTDIR ? "not a directory" : strerror(e));
	}
	return VF_OK;
}

void vf_rundir_close(struct vf_rundir *rd)
{
	if (rd && rd->fd >= 0)
		close(rd->fd);
	if (rd)
		rd->fd = -1;
}

/* The folder holding name's last component, walked from the run directory
 * without following links: a descriptor (rd->fd itself or one to close),
 * *leaf the last component. mkdirs: create missing folders on the way. */
static int walk(const struct vf_rundir *rd, const char *name, const char **leaf, bool mkdirs, struct vf_error *err)
{
	if (rd->fd < 0) {
		vf_error_set(err, VF_EUSAGE, "%s: run directory not open", rd->path);
		return -1;
	}
	if (!*name || name[0] == '/') {
		vf_error_set(err, VF_EUSAGE, "%s/%s: not a name inside the run directory", rd->path, name);
		return -1;
	}
	int dir = rd->fd;
	const char *s = name;
	for (;;) {
		const char *slash = strchr(s, '/');
		size_t n = slash ? (size_t)(slash - s) : strlen(s);
		if (n == 0 || n >= NAME_MAX || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
			vf_error_set(err, VF_EUSAGE, "%s/%s: not a name inside the run directory", rd->path, name);
			break;
		}
		if (!slash) {
			*leaf = s;
			return dir;
		}
		char comp[NAME_MAX + 1];
		memcpy(comp, s, n);
		comp[n] = '\0';
		if (mkdirs && mkdirat(dir, comp, 0755) != 0 && errno != EEXIST) {
			vf_error_set(err, VF_ERR, "%s/%.*s: cannot create directory: %s", rd->path,
				     (int)(s + n - name), name, strerror(errno));
			break;
		}
		int next = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			char shown[PATH_MAX + 8];
			snprintf(shown, sizeof shown, "%s/%.*s", rd->path, (int)(s + n - name), name);
			struct stat st;
			if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				link_error(err, shown, dir, comp);
			else
				vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", shown,
					     errno == ENOTDIR ? "not a directory" : strerror(errno));
			break;
		}
		if (dir != rd->fd)
			close(dir);
		dir = next;
		s = slash + 1;
	}
	if (dir != rd->fd)
		close(dir);
	return -1;
}

static void done_with(const struct vf_rundir *rd, int dir)
{
	if (dir >= 0 && dir != rd->fd)
		close(dir);
}

vf_status vf_rundir_mkdir(const struct vf_rundir *rd, const char *name, struct vf_error *err)
{
	const char *leaf;
	int dir = walk(rd, name, &leaf, true, err);
	if (dir < 0)
		return err ? err->code : VF_ERR;
	vf_status st = VF_OK;
	struct stat sb;
	if (mkdirat(dir, leaf, 0755) != 0 && errno != EEXIST)
		st = vf_error_set(err, VF_ERR, "%s/%s: cannot create directory: %s", rd->path, name, strerror(errno));
	else if (fstatat(dir, leaf, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		st = vf_error_set(err, VF_ERR, "%s/%s: %s", rd->path, name, strerror(errno));
	else if (S_ISLNK(sb.st_mode)) {
		char shown[PATH_MAX + 8];
		snprintf(shown, sizeof shown, "%s/%s", rd->path, name);
		st = link_error(err, shown, dir, leaf);
	} else if (!S_ISDIR(sb.st_mode))
		st = vf_error_set(err, VF_ERR, "%s/%s: exists and is not a directory", rd->path, name);
	done_with(rd, dir);
	return st;
}

int vf_rundir_openat(const struct vf_rundir *rd, const char *name, int flags, mode_t mode, struct vf_error *err)
{
	const char *leaf;
	int dir = walk(rd, name, &leaf, (flags & O_CREAT) != 0, err);
	if (dir < 0)
		return -1;
	char shown[PATH_MAX + 8];
	snprintf(shown, sizeof shown, "%s/%s", rd->path, name);
	int fd = openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
	if (fd < 0) {
		int e = errno;
		struct stat sb;
		if (fstatat(dir, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
			link_error(err, shown, dir, leaf);
		else
			vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", shown, strerror(e));
		done_with(rd, dir);
		return -1;
	}
	done_with(rd, dir);
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		vf_error_set(err, VF_ERR, "%s: not a regular file", shown);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

FILE *vf_rundir_fopen(const struct vf_rundir *rd, const char *name, const char *mode, struct vf_error *err)
{
	int flags = mode[0] == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
		    : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND
				     : O_RDONLY;
	int fd = vf_rundir_openat(rd, name, flags, 0644, err);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, mode);
	if (!f) {
		vf_error_set(err, VF_ERR, "%s/%s: %s", rd->path, name, strerror(errno));
		close(fd);
	}
	return f;
}

static vf_status write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return VF_ERR;
		p += n;
		len -= (size_t)n;
	}
	return fsync(fd) == 0 ? VF_OK : VF_ERR;
}

/* Whether leaf (in dir) may be replaced by a rename: absent, or a regular
 * file (*mode: its permission bits then); never a link. */
static vf_status replaceable(int dir, const char *leaf, const char *shown, mode_t *mode, struct vf_error *err)
{
	struct stat sb;
	if (fstatat(dir, leaf, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return VF_OK;
	if (S_ISLNK(sb.st_mode))
		return link_error(err, shown, dir, leaf);
	if (!S_ISREG(sb.st_mode))
		return vf_error_set(err, VF_ERR, "%s: not a regular file", shown);
	*mode = sb.st_mode & 07777;
	return VF_OK;
}

vf_status vf_rundir_check_replace(const struct vf_rundir *rd, const char *name, struct vf_error *err)
{
	const char *leaf;
	int dir = walk(rd, name, &leaf, false, err);
	if (dir < 0) /* a folder on the way not made yet: write_atomic makes it */
		return err && err->code == VF_ENOTFOUND ? (vf_error_clear(err), VF_OK) : (err ? err->code : VF_ERR);
	char shown[PATH_MAX + 8];
	snprintf(shown, sizeof shown, "%s/%s", rd->path, name);
	mode_t mode = 0;
	vf_status st = replaceable(dir, leaf, shown, &mode, err);
	done_with(rd, dir);
	return st;
}

vf_status vf_rundir_write_atomic(const struct vf_rundir *rd, const char *name, const void *data, size_t len,
				 mode_t mode, struct vf_error *err)
{
	const char *leaf;
	int dir = walk(rd, name, &leaf, true, err);
	if (dir < 0)
		return err ? err->code : VF_ERR;
	char shown[PATH_MAX + 8];
	snprintf(shown, sizeof shown, "%s/%s", rd->path, name);
	vf_status st = replaceable(dir, leaf, shown, &mode, err);
	char tmp[NAME_MAX + 40];
	snprintf(tmp, sizeof tmp, ".%.200s.tmp.%ld", leaf, (long)getpid());
	int fd = st ? -1 : openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (!st && fd < 0)
		st = vf_error_set(err, VF_ERR, "%s: cannot create temp file: %s", shown, strerror(errno));
	if (fd >= 0) {
		bool ok = fchmod(fd, mode) == 0 && write_all(fd, data, len) == VF_OK;
		if (close(fd) != 0 || !ok)
			st = vf_error_set(err, VF_ERR, "%s: write: %s", shown, strerror(errno));
		else if (renameat(dir, tmp, dir, leaf) != 0)
			st = vf_error_set(err, VF_ERR, "%s: rename: %s", shown, strerror(errno));
		if (st)
			unlinkat(dir, tmp, 0);
	}
	done_with(rd, dir);
	return st;
}

vf_status vf_rundir_write_file(const char *run_dir, const char *name, const void *data, size_t len, mode_t mode,
			       struct vf_error *err)
{
	struct vf_rundir rd;
	vf_status st = vf_rundir_open(&rd, run_dir, 0, err);
	if (st == VF_OK)
		st = vf_rundir_write_atomic(&rd, name, data, len, mode, err);
	vf_rundir_close(&rd);
	return st;
}

FILE *vf_rundir_fopen_path(const char *run_dir, const char *path, const char *mode, struct vf_error *err)
{
	size_t n = strlen(run_dir);
	if (strncmp(path, run_dir, n) != 0 || path[n] != '/') {
		vf_error_set(err, VF_EUSAGE, "%s: not inside the run directory %s", path, run_dir);
		return NULL;
	}
	struct vf_rundir rd;
	FILE *f = NULL;
	if (vf_rundir_open(&rd, run_dir, 0, err) == VF_OK)
		f = vf_rundir_fopen(&rd, path + n + 1, mode, err);
	vf_rundir_close(&rd);
	return f;
}

/* The run directory this process holds (vf_rundir_lock): its real path and
 * the lock file's descriptor, open to the end. One at a time is all a
 * command needs; the mutex keeps threads from racing on it. */
static pthread_mutex_t lock_mu = PTHREAD_MUTEX_INITIALIZER;
static char lock_held[PATH_MAX];

vf_status vf_rundir_lock(const char *run_dir, const char *who, struct vf_error *err)
{
	char real[PATH_MAX];
	if (!realpath(run_dir, real))
		return vf_error_set(err, VF_ERR, "%s: %s", run_dir, strerror(errno));
	pthread_mutex_lock(&lock_mu);
	bool mine = strcmp(lock_held, real) == 0;
	pthread_mutex_unlock(&lock_mu);
	if (mine)
		return VF_OK;
	struct vf_rundir rd;
	vf_status st = vf_rundir_open(&rd, run_dir, 0, err);
	if (st != VF_OK)
		return st;
	int fd = vf_rundir_openat(&rd, ".vramfit.lock", O_RDWR | O_CREAT, 0644, err);
	vf_rundir_close(&rd);
	if (fd < 0)
		return err ? err->code : VF_ERR;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		char holder[96] = "";
		ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		close(fd);
		if (e != EWOULDBLOCK)
			return vf_error_set(err, VF_ERR, "%s/.vramfit.lock: %s", run_dir, strerror(e));
		return vf_error_set(err, VF_ERR,
				    "%s: another vramfit (%s) is working in this run directory; wait for it to "
				    "end, or end it, then run again",
				    run_dir, holder[0] ? holder : "pid unknown");
	}
	char line[96];
	int len = snprintf(line, sizeof line, "pid %ld, %s\n", (long)getpid(), who);
	if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
		/* the lock holds all the same; the note for the other is lost */
	}
	pthread_mutex_lock(&lock_mu);
	snprintf(lock_held, sizeof lock_held, "%s", real);
	pthread_mutex_unlock(&lock_mu);
	return VF_OK; /* fd stays open (close-on-exec): released when the process ends */
}
