/* safetensors.c - read the header of a .safetensors file.
 * Layout: u64 little-endian N, N bytes of JSON, then tensor data
 * (never read here). Validation follows the reference implementation
 * (huggingface/safetensors, Metadata::validate): header length bounded
 * and within the file, a UTF-8 JSON object, tensors sorted by offset must
 * tile [0, end) exactly, each tensor's bytes = numel x bits / 8 with
 * overflow checks, and the file ends exactly at 8 + N + end. */
#include "vramfit/model/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vramfit/base/json.h"

static const struct {
	const char *name;
	int bits;
} dtypes[VF_DT_COUNT] = {
	[VF_DT_F64] = {"F64", 64},         [VF_DT_F32] = {"F32", 32},
	[VF_DT_F16] = {"F16", 16},         [VF_DT_BF16] = {"BF16", 16},
	[VF_DT_F8_E4M3] = {"F8_E4M3", 8},  [VF_DT_F8_E5M2] = {"F8_E5M2", 8},
	[VF_DT_F8_E8M0] = {"F8_E8M0", 8},  [VF_DT_F6_E2M3] = {"F6_E2M3", 6},
	[VF_DT_F6_E3M2] = {"F6_E3M2", 6},  [VF_DT_F4] = {"F4", 4},
	[VF_DT_C64] = {"C64", 64},         [VF_DT_I64] = {"I64", 64},
	[VF_DT_I32] = {"I32", 32},         [VF_DT_I16] = {"I16", 16},
	[VF_DT_I8] = {"I8", 8},            [VF_DT_U64] = {"U64", 64},
	[VF_DT_U32] = {"U32", 32},         [VF_DT_U16] = {"U16", 16},
	[VF_DT_U8] = {"U8", 8},            [VF_DT_BOOL] = {"BOOL", 8},
};

const char *vf_dtype_name(enum vf_dtype d)
{
	return (unsigned)d < VF_DT_COUNT ? dtypes[d].name : "?";
}

int vf_dtype_bits(enum vf_dtype d)
{
	return (unsigned)d < VF_DT_COUNT ? dtypes[d].bits : 0;
}

bool vf_dtype_from_name(const char *name, enum vf_dtype *out)
{
	for (int i = 0; i < VF_DT_COUNT; i++)
		if (strcmp(dtypes[i].name, name) == 0) {
			*out = (enum vf_dtype)i;
			return true;
		}
	return false;
}

void vf_safetensors_release(struct vf_safetensors *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->ntensors; i++) {
		free(st->tensors[i].name);
		free(st->tensors[i].shape);
	}
	free(st->tensors);
	cJSON_Delete(st->metadata);
	free(st->path);
	memset(st, 0, sizeof *st);
}

/* A JSON number that is a whole number in [0, 2^53] (exact in a double). */
static bool get_u64(const cJSON *n, uint64_t *out)
{
	if (!cJSON_IsNumber(n))
		return false;
	double d = n->valuedouble;
	if (!isfinite(d) || d < 0 || d != floor(d) || d > 9007199254740992.0)
		return false;
	*out = (uint64_t)d;
	return true;
}

static int cmp_name(const void *a, const void *b)
{
	const struct vf_tensor *x = *(const struct vf_tensor *const *)a;
	const struct vf_tensor *y = *(const struct vf_tensor *const *)b;
	return strcmp(x->name, y->name);
}

static int cmp_offset(const void *a, const void *b)
{
	const struct vf_tensor *x = *(const struct vf_tensor *const *)a;
	const struct vf_tensor *y = *(const struct vf_tensor *const *)b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static vf_status read_tensor(const cJSON *j, const char *what, struct vf_tensor *t,
			     struct vf_error *err)
{
	const char *name = j->string;
	if (!cJSON_IsObject(j))
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': expected an object", what, name);
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
	const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
	const cJSON *offs = cJSON_GetObjectItemCaseSensitive(j, "data_offsets");
	if (!dt)
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': missing field dtype", what, name);
	if (!cJSON_IsString(dt))
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': field dtype: expected a string",
				    what, name);
	if (!vf_dtype_from_name(dt->valuestring, &t->dtype))
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': unknown dtype '%.32s'", what, name,
				    dt->valuestring);
	if (!shape)
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': missing field shape", what, name);
	if (!cJSON_IsArray(shape))
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': field shape: expected an array of integers",
				    what, name);
	if (!offs)
		return vf_error_set(err, VF_ERR, "%s: tensor '%s': missing field data_offsets", what,
				    name);
	if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': field data_offsets: expected [begin, end]",
				    what, name);
	if (!get_u64(cJSON_GetArrayItem(offs, 0), &t->begin) ||
	    !get_u64(cJSON_GetArrayItem(offs, 1), &t->end))
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': field data_offsets: expected two integers >= 0",
				    what, name);
	if (t->end < t->begin)
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': data_offsets [%llu, %llu] are reversed", what,
				    name, (unsigned long long)t->begin, (unsigned long long)t->end);
	int nd = cJSON_GetArraySize(shape);
	t->ndim = nd;
	if (nd > 0) {
		t->shape = calloc((size_t)nd, sizeof *t->shape);
		if (!t->shape)
			return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	}
	/* numel with overflow checks, in u64 like the reference's usize */
	uint64_t numel = 1;
	int k = 0;
	const cJSON *d;
	bool overflow = false;
	cJSON_ArrayForEach(d, shape)
	{
		uint64_t v;
		if (!get_u64(d, &v)) {
			/* whole numbers past 2^53 are not exact in JSON doubles:
			 * they can only overflow the byte size */
			double x = cJSON_IsNumber(d) ? d->valuedouble : -1;
			if (!isfinite(x) || x < 0 || x != floor(x))
				return vf_error_set(err, VF_ERR,
						    "%s: tensor '%s': field shape: expected integers "
						    ">= 0",
						    what, name);
			if (x >= 18446744073709551616.0)
				overflow = true;
			v = x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
		}
		t->shape[k++] = (int64_t)v;
		if (!overflow && __builtin_mul_overflow(numel, v, &numel))
			overflow = true;
	}
	uint64_t bits = 0;
	if (overflow || numel > INT64_MAX ||
	    __builtin_mul_overflow(numel, (uint64_t)vf_dtype_bits(t->dtype), &bits))
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': shape product overflows 64 bits", what, name);
	if (bits % 8 != 0)
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': %llu elements of %s are not a whole number of "
				    "bytes",
				    what, name, (unsigned long long)numel, dt->valuestring);
	t->numel = (int64_t)numel;
	if (t->end - t->begin != bits / 8)
		return vf_error_set(err, VF_ERR,
				    "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, "
				    "dtype %s x shape needs %llu",
				    what, name, (unsigned long long)t->begin,
				    (unsigned long long)t->end,
				    (unsigned long long)(t->end - t->begin), dt->valuestring,
				    (unsigned long long)(bits / 8));
	return VF_OK;
}

static vf_status parse_json(const char *text, size_t n, const char *what,
			    struct vf_safetensors *st, struct vf_error *err)
{
	size_t bad = vf_utf8_check((const unsigned char *)text, n);
	if (bad != n)
		return vf_error_set(err, VF_ERR, "%s: header is not UTF-8 (byte %zu)", what, bad);
	size_t lead = 0;
	while (lead < n && (text[lead] == ' ' || text[lead] == '\t' || text[lead] == '\n' ||
			    text[lead] == '\r'))
		lead++;
	if (lead == n || text[lead] != '{')
		return vf_error_set(err, VF_ERR, "%s: header is not a JSON object", what);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, n, &end, 0);
	if (!root) {
		size_t off = end && end >= text && (size_t)(end - text) <= n ? (size_t)(end - text) : 0;
		return vf_error_set(err, VF_ERR, "%s: header is not valid JSON (near byte %zu)", what,
				    off);
	}
	/* only whitespace may follow the object (writers pad with spaces) */
	for (size_t i = (size_t)(end - text); i < n; i++) {
		char c = text[i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			cJSON_Delete(root);
			return vf_error_set(err, VF_ERR,
					    "%s: header has data after its JSON object (byte %zu)",
					    what, i);
		}
	}
	size_t count = 0;
	const cJSON *j;
	cJSON_ArrayForEach(j, root) count++;
	st->tensors = calloc(count ? count : 1, sizeof *st->tensors);
	if (!st->tensors) {
		cJSON_Delete(root);
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	}
	vf_status rc = VF_OK;
	bool have_meta = false;
	cJSON_ArrayForEach(j, root)
	{
		if (strcmp(j->string, "__metadata__") == 0) {
			if (have_meta) {
				rc = vf_error_set(err, VF_ERR, "%s: __metadata__ appears twice", what);
				break;
			}
			have_meta = true;
			if (cJSON_IsNull(j))
				continue;
			if (!cJSON_IsObject(j)) {
				rc = vf_error_set(err, VF_ERR,
						  "%s: __metadata__: expected an object of strings",
						  what);
				break;
			}
			const cJSON *v;
			cJSON_ArrayForEach(v, j) if (!cJSON_IsString(v))
			{
				rc = vf_error_set(err, VF_ERR,
						  "%s: __metadata__: value of '%.64s' is not a string",
						  what, v->string);
				break;
			}
			if (rc != VF_OK)
				break;
			st->metadata = cJSON_Duplicate(j, 1);
			continue;
		}
		struct vf_tensor *t = &st->tensors[st->ntensors];
		t->name = strdup(j->string);
		if (!t->name) {
			rc = vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
			break;
		}
		st->ntensors++;
		rc = read_tensor(j, what, t, err);
		if (rc != VF_OK)
			break;
	}
	cJSON_Delete(root);
	return rc;
}

/* Names unique; offsets tile [0, end) exactly (sorted by begin). */
static vf_status check_layout(const char *what, struct vf_safetensors *st, struct vf_error *err)
{
	size_t n = st->ntensors;
	if (n == 0)
		return VF_OK;
	struct vf_tensor **p = malloc(n * sizeof *p);
	if (!p)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	for (size_t i = 0; i < n; i++)
		p[i] = &st->tensors[i];
	vf_status rc = VF_OK;
	qsort(p, n, sizeof *p, cmp_name);
	for (size_t i = 1; i < n && rc == VF_OK; i++)
		if (strcmp(p[i - 1]->name, p[i]->name) == 0)
			rc = vf_error_set(err, VF_ERR, "%s: tensor '%s' appears twice", what,
					  p[i]->name);
	if (rc == VF_OK) {
		qsort(p, n, sizeof *p, cmp_offset);
		uint64_t pos = 0;
		for (size_t i = 0; i < n; i++) {
			if (p[i]->begin > pos) {
				rc = vf_error_set(err, VF_ERR,
						  "%s: tensor '%s': data_offsets [%llu, %llu] leave a "
						  "gap after byte %llu",
						  what, p[i]->name, (unsigned long long)p[i]->begin,
						  (unsigned long long)p[i]->end,
						  (unsigned long long)pos);
				break;
			}
			if (p[i]->begin < pos) {
				rc = vf_error_set(err, VF_ERR,
						  "%s: tensor '%s': data_offsets [%llu, %llu] overlap "
						  "the previous tensor (ends at %llu)",
						  what, p[i]->name, (unsigned long long)p[i]->begin,
						  (unsigned long long)p[i]->end,
						  (unsigned long long)pos);
				break;
			}
			pos = p[i]->end;
		}
		st->data_bytes = pos;
	}
	free(p);
	return rc;
}

vf_status vf_safetensors_parse(const void *buf, size_t len, uint64_t file_bytes,
			       const char *what, struct vf_safetensors *st, struct vf_error *err)
{
	memset(st, 0, sizeof *st);
	st->path = strdup(what);
	if (!st->path)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	st->file_bytes = file_bytes;
	const unsigned char *b = buf;
	if (file_bytes < 8 || len < 8)
		return vf_error_set(err, VF_ERR,
				    "%s: truncated: %llu bytes, a safetensors file starts with an "
				    "8-byte header length",
				    what, (unsigned long long)file_bytes);
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | b[i];
	st->header_len = n;
	if (n > VF_SAFETENSORS_MAX_HEADER)
		return vf_error_set(err, VF_ERR,
				    "%s: header length %llu exceeds the limit of %u bytes", what,
				    (unsigned long long)n, VF_SAFETENSORS_MAX_HEADER);
	if (n > file_bytes - 8)
		return vf_error_set(err, VF_ERR,
				    "%s: header length %llu exceeds the file size (%llu bytes)", what,
				    (unsigned long long)n, (unsigned long long)file_bytes);
	if (len < 8 + n)
		return vf_error_set(err, VF_ERR, "%s: truncated header (%zu of %llu bytes)", what,
				    len - 8, (unsigned long long)n);
	vf_status rc = parse_json((const char *)b + 8, (size_t)n, what, st, err);
	if (rc == VF_OK)
		rc = check_layout(what, st, err);
	if (rc != VF_OK)
		return rc;
	if (8 + n + st->data_bytes != file_bytes)
		return vf_error_set(err, VF_ERR,
				    "%s: file is %llu bytes, header and data need exactly %llu "
				    "(8 + %llu + %llu)",
				    what, (unsigned long long)file_bytes,
				    (unsigned long long)(8 + n + st->data_bytes),
				    (unsigned long long)n, (unsigned long long)st->data_bytes);
	for (size_t i = 0; i < st->ntensors; i++) {
		st->params += st->tensors[i].numel;
		st->dtype_params[st->tensors[i].dtype] += st->tensors[i].numel;
	}
	return VF_OK;
}

static vf_status pread_all(int fd, void *buf, size_t n, off_t off, const char *path,
			   struct vf_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return vf_error_set(err, VF_ERR, "%s: %s", path, strerror(errno));
		if (r == 0)
			return vf_error_set(err, VF_ERR, "%s: truncated while reading the header",
					    path);
		got += (size_t)r;
	}
	return VF_OK;
}

vf_status vf_safetensors_read(const char *path, struct vf_safetensors *st,
			      struct vf_error *err)
{
	memset(st, 0, sizeof *st);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    e == ELOOP ? "symlink loop (too many levels of symbolic links)"
					       : strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: not a regular file", path);
	}
	uint64_t size = (uint64_t)sb.st_size;
	unsigned char head[8];
	vf_status rc = VF_OK;
	char *buf = NULL;
	if (size < 8) {
		rc = vf_safetensors_parse(head, 0, size, path, st, err);
		goto out;
	}
	rc = pread_all(fd, head, 8, 0, path, err);
	if (rc != VF_OK)
		goto out;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | head[i];
	if (n > VF_SAFETENSORS_MAX_HEADER || n > size - 8) {
		rc = vf_safetensors_parse(head, 8, size, path, st, err); /* the length error */
		goto out;
	}
	buf = malloc(8 + (size_t)n + 1);
	if (!buf) {
		rc = vf_error_set(err, VF_ENOMEM, "%s: out of memory for a %llu-byte header", path,
				  (unsigned long long)n);
		goto out;
	}
	memcpy(buf, head, 8);
	rc = pread_all(fd, buf + 8, (size_t)n, 8, path, err);
	if (rc == VF_OK)
		rc = vf_safetensors_parse(buf, 8 + (size_t)n, size, path, st, err);
out:
	free(buf);
	close(fd);
	return rc;
}

const struct vf_tensor *vf_safetensors_find(const struct vf_safetensors *st, const char *name)
{
	for (size_t i = 0; i < st->ntensors; i++)
		if (strcmp(st->tensors[i].name, name) == 0)
			return &st->tensors[i];
	return NULL;
}
