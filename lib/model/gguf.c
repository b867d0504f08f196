/* gguf.c - read the header of a GGUF file (gguf.h): the key-values into
 * JSON, the tensor infos with each tensor's bytes as stored (ggml's block
 * sizes), and the checks llama.cpp's reader makes. Tensor data is never
 * read. */
#include "vramfit/model/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIRST_READ (1u << 20)
#define MAX_NAME 64        /* ggml's GGML_MAX_NAME, with the NUL */
#define MAX_KEY 65535
#define ARRAY_INLINE 64    /* arrays up to this many scalars are kept whole */

/* ---- ggml types: elements per block and bytes per block ----------------- */

static const struct {
	const char *name;
	int block;
	int bytes;
} TYPES[VF_GGML_TYPES] = {
	[0] = {"F32", 1, 4},         [1] = {"F16", 1, 2},
	[2] = {"Q4_0", 32, 18},      [3] = {"Q4_1", 32, 20},
	[6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
	[8] = {"Q8_0", 32, 34},      [9] = {"Q8_1", 32, 36},
	[10] = {"Q2_K", 256, 84},    [11] = {"Q3_K", 256, 110},
	[12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
	[14] = {"Q6_K", 256, 210},   [15] = {"Q8_K", 256, 292},
	[16] = {"IQ2_XXS", 256, 66}, [17] = {"IQ2_XS", 256, 74},
	[18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
	[20] = {"IQ4_NL", 32, 18},   [21] = {"IQ3_S", 256, 110},
	[22] = {"IQ2_S", 256, 82},   [23] = {"IQ4_XS", 256, 136},
	[24] = {"I8", 1, 1},         [25] = {"I16", 1, 2},
	[26] = {"I32", 1, 4},        [27] = {"I64", 1, 8},
	[28] = {"F64", 1, 8},        [29] = {"IQ1_M", 256, 56},
	[30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
	[35] = {"TQ2_0", 256, 66},   [39] = {"MXFP4", 32, 17},
	[40] = {"NVFP4", 64, 36},    [41] = {"Q1_0", 128, 18},
};

/* ids ggml once had and no longer reads */
static const char *removed_type(int t)
{
	switch (t) {
	case 4: return "Q4_2";
	case 5: return "Q4_3";
	case 31: return "Q4_0_4_4";
	case 32: return "Q4_0_4_8";
	case 33: return "Q4_0_8_8";
	case 36: return "IQ4_NL_4_4";
	case 37: return "IQ4_NL_4_8";
	case 38: return "IQ4_NL_8_8";
	default: return NULL;
	}
}

const char *vf_ggml_type_name(int type)
{
	return type >= 0 && type < VF_GGML_TYPES ? TYPES[type].name : NULL;
}

int vf_ggml_type_block(int type)
{
	return vf_ggml_type_name(type) ? TYPES[type].block : 0;
}

int vf_ggml_type_bytes(int type)
{
	return vf_ggml_type_name(type) ? TYPES[type].bytes : 0;
}

/* ---- a bounded little-endian cursor -------------------------------------- */

struct cur {
	const unsigned char *b;
	size_t len, pos;
	uint64_t file;
	const char *what;
	struct vf_error *err;
	bool failed;
};

/* Whether n more bytes are there; else an error: "need more" (VF_ENOTFOUND)
 * when the file goes on past the buffer, truncated when it does not. */
static bool need(struct cur *c, uint64_t n, const char *field)
{
	if (c->failed)
		return false;
	if (n <= c->len - c->pos)
		return true;
	c->failed = true;
	if (c->len < c->file && n <= c->file - c->pos)
		vf_error_set(c->err, VF_ENOTFOUND, "%s: header continues past byte %zu", c->what,
			     c->len);
	else
		vf_error_set(c->err, VF_ERR,
			     "%s: truncated: %s needs %llu bytes at byte %zu, the file has %llu",
			     c->what, field, (unsigned long long)n, c->pos,
			     (unsigned long long)c->file);
	return false;
}

static bool fail(struct cur *c, const char *fmt, const char *a, const char *b)
{
	if (!c->failed) {
		char msg[600];
		snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
		vf_error_set(c->err, VF_ERR, "%s: %s", c->what, msg);
	}
	c->failed = true;
	return false;
}

static uint64_t le(struct cur *c, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | c->b[c->pos + (size_t)i];
	c->pos += (size_t)n;
	return v;
}

static bool u32(struct cur *c, const char *field, uint32_t *v)
{
	if (!need(c, 4, field))
		return false;
	*v = (uint32_t)le(c, 4);
	return true;
}

static bool u64(struct cur *c, const char *field, uint64_t *v)
{
	if (!need(c, 8, field))
		return false;
	*v = le(c, 8);
	return true;
}

/* A gguf string (u64 length, bytes) into a fresh NUL-terminated copy. */
static char *str(struct cur *c, const char *field, uint64_t max)
{
	uint64_t n;
	if (!u64(c, field, &n))
		return NULL;
	if (n > max) {
		char lim[64];
		snprintf(lim, sizeof lim, "%llu", (unsigned long long)max);
		fail(c, "%s longer than %s bytes", field, lim);
		return NULL;
	}
	if (!need(c, n, field))
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s) {
		fail(c, "out of memory for %s%s", field, NULL);
		return NULL;
	}
	memcpy(s, c->b + c->pos, (size_t)n);
	s[n] = '\0';
	c->pos += (size_t)n;
	return s;
}

/* ---- metadata values ------------------------------------------------------ */

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64,
       T_I64, T_F64, T_COUNT };
static const int SCALAR_BYTES[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const VALUE_TYPES[T_COUNT] = {"uint8",  "int8",  "uint16", "int16", "uint32",
						 "int32",  "float32", "bool", "string", "array",
						 "uint64", "int64", "float64"};

static double as_float(uint64_t bits, int bytes)
{
	if (bytes == 4) {
		uint32_t b = (uint32_t)bits;
		float f;
		memcpy(&f, &b, 4);
		return (double)f;
	}
	double d;
	memcpy(&d, &bits, 8);
	return d;
}

/* One scalar (not a string or array) as JSON; NULL on a bad bool. */
static cJSON *scalar(struct cur *c, int t, const char *key)
{
	int n = SCALAR_BYTES[t];
	if (!need(c, (uint64_t)n, key))
		return NULL;
	uint64_t v = le(c, n);
	switch (t) {
	case T_BOOL:
		if (v > 1) {
			fail(c, "key '%s': bool value is neither 0 nor 1%s", key, NULL);
			return NULL;
		}
		return cJSON_CreateBool(v == 1);
	case T_I8: return cJSON_CreateNumber((double)(int8_t)v);
	case T_I16: return cJSON_CreateNumber((double)(int16_t)v);
	case T_I32: return cJSON_CreateNumber((double)(int32_t)v);
	case T_I64: return cJSON_CreateNumber((double)(int64_t)v);
	case T_F32: return cJSON_CreateNumber(as_float(v, 4));
	case T_F64: return cJSON_CreateNumber(as_float(v, 8));
	default: return cJSON_CreateNumber((double)v);
	}
}

/* An array: up to ARRAY_INLINE scalars kept, else {"type", "count"}. */
static cJSON *array(struct cur *c, const char *key, int64_t *count)
{
	uint32_t et;
	uint64_t n;
	if (!u32(c, key, &et) || !u64(c, key, &n))
		return NULL;
	if (et >= T_COUNT || et == T_ARRAY) {
		fail(c, "key '%s': arrays of %s are not read", key,
		     et == T_ARRAY ? "arrays" : "an unknown type");
		return NULL;
	}
	/* each element takes at least one byte (a string eight) */
	uint64_t least = et == T_STRING ? 8 : (uint64_t)SCALAR_BYTES[et];
	if (n > (c->file - c->pos) / least) {
		fail(c, "key '%s': array count exceeds the file%s", key, NULL);
		return NULL;
	}
	*count = (int64_t)n;
	bool keep = n <= ARRAY_INLINE;
	cJSON *out = keep ? cJSON_CreateArray() : cJSON_CreateObject();
	if (!out)
		return NULL;
	if (!keep) {
		cJSON_AddStringToObject(out, "type", VALUE_TYPES[et]);
		cJSON_AddNumberToObject(out, "count", (double)n);
	}
	for (uint64_t i = 0; i < n && !c->failed; i++) {
		if (et == T_STRING) {
			uint64_t sl;
			if (!u64(c, key, &sl) || !need(c, sl, key))
				break;
			if (keep)
				cJSON_AddItemToArray(out, cJSON_CreateString(""));
			if (keep && sl < 4096) {
				char *s = malloc((size_t)sl + 1);
				if (s) {
					memcpy(s, c->b + c->pos, (size_t)sl);
					s[sl] = '\0';
					cJSON_ReplaceItemInArray(out, (int)i, cJSON_CreateString(s));
					free(s);
				}
			}
			c->pos += (size_t)sl;
		} else if (keep) {
			cJSON *v = scalar(c, (int)et, key);
			if (v)
				cJSON_AddItemToArray(out, v);
		} else if (need(c, (uint64_t)SCALAR_BYTES[et] * (n - i), key)) {
			if (et == T_BOOL)
				for (uint64_t k = i; k < n && !c->failed; k++)
					if (c->b[c->pos + (size_t)(k - i)] > 1)
						fail(c, "key '%s': bool value is neither 0 nor 1%s",
						     key, NULL);
			c->pos += (size_t)(SCALAR_BYTES[et] * (n - i));
			break;
		}
	}
	if (c->failed) {
		cJSON_Delete(out);
		return NULL;
	}
	return out;
}

static bool read_kv(struct cur *c, struct vf_gguf *g)
{
	char *key = str(c, "a metadata key", MAX_KEY);
	uint32_t t;
	cJSON *v = NULL;
	if (!key || !u32(c, key, &t)) {
		free(key);
		return false;
	}
	if (!*key)
		fail(c, "an empty metadata key%s%s", NULL, NULL);
	else if (cJSON_GetObjectItemCaseSensitive(g->metadata, key))
		fail(c, "key '%s' appears twice%s", key, NULL);
	else if (t >= T_COUNT)
		fail(c, "key '%s': unknown value type%s", key, NULL);
	if (c->failed) {
		free(key);
		return false;
	}
	int64_t count = -1;
	if (t == T_STRING) {
		char *s = str(c, key, c->file);
		v = s ? cJSON_CreateString(s) : NULL;
		free(s);
	} else if (t == T_ARRAY) {
		v = array(c, key, &count);
	} else {
		v = scalar(c, (int)t, key);
	}
	if (!v) {
		if (!c->failed)
			fail(c, "out of memory for key '%s'%s", key, NULL);
		free(key);
		return false;
	}
	if (strcmp(key, "general.alignment") == 0) {
		double a = cJSON_IsNumber(v) ? v->valuedouble : 0;
		if (t != T_U32 || a < 1 || ((uint32_t)a & ((uint32_t)a - 1)) != 0)
			fail(c, "general.alignment: expected a power of two as uint32%s%s", NULL, NULL);
		else
			g->alignment = (uint32_t)a;
	} else if (strcmp(key, "general.architecture") == 0 && cJSON_IsString(v)) {
		snprintf(g->architecture, sizeof g->architecture, "%s", v->valuestring);
	} else if (strcmp(key, "general.name") == 0 && cJSON_IsString(v)) {
		snprintf(g->name, sizeof g->name, "%s", v->valuestring);
	} else if (strcmp(key, "tokenizer.ggml.tokens") == 0 && count >= 0) {
		g->vocab = count;
	}
	cJSON_AddItemToObject(g->metadata, key, v);
	free(key);
	return !c->failed;
}

/* ---- tensor infos --------------------------------------------------------- */

static bool read_tensor(struct cur *c, struct vf_gguf_tensor *t, char **arena, size_t *used)
{
	char *name = str(c, "a tensor name", 1u << 20);
	if (!name)
		return false;
	size_t nl = strlen(name);
	uint32_t nd = 0, type = 0;
	if (nl >= MAX_NAME)
		fail(c, "tensor '%.80s': name longer than 63 bytes%s", name, NULL);
	else if (nl == 0)
		fail(c, "a tensor with an empty name%s%s", NULL, NULL);
	else if (u32(c, name, &nd) && (nd < 1 || nd > 4))
		fail(c, "tensor '%s': %s dims (expected 1 to 4)", name, nd ? "more than 4" : "0");
	if (c->failed) {
		free(name);
		return false;
	}
	memcpy(*arena + *used, name, nl + 1);
	t->name = *arena + *used; /* the arena holds MAX_NAME bytes per tensor */
	*used += nl + 1;
	t->ndim = (int)nd;
	t->numel = 1;
	for (uint32_t i = 0; i < nd && !c->failed; i++) {
		uint64_t d;
		if (!u64(c, name, &d))
			break;
		if (d > (uint64_t)INT64_MAX || (d && (uint64_t)t->numel > (uint64_t)INT64_MAX / d)) {
			fail(c, "tensor '%s': element count overflows%s", name, NULL);
			break;
		}
		t->dims[i] = (int64_t)d;
		t->numel *= (int64_t)d;
	}
	uint64_t off = 0;
	if (!c->failed && u32(c, name, &type) && u64(c, name, &off)) {
		t->type = (int)type;
		t->offset = off;
		const char *gone = removed_type((int)type);
		char tn[32];
		snprintf(tn, sizeof tn, "%u", type);
		int block = vf_ggml_type_block((int)type);
		if (gone)
			fail(c, "tensor '%s': ggml type %s was removed from ggml (convert the file "
				"again with a current llama.cpp)",
			     name, gone);
		else if (!block)
			fail(c, "tensor '%s': unknown ggml type %s", name, tn);
		else if (t->dims[0] % block != 0)
			fail(c, "tensor '%s': row length is not a whole number of %s blocks", name,
			     vf_ggml_type_name((int)type));
		else if ((uint64_t)(t->numel / block) > UINT64_MAX / 512)
			fail(c, "tensor '%s': size overflows%s", name, NULL);
		else
			t->bytes = (uint64_t)(t->numel / block) * (uint64_t)vf_ggml_type_bytes((int)type);
	}
	free(name);
	return !c->failed;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Unique names; offsets contiguous from 0, each tensor padded to the
 * alignment; the data within the file. */
static vf_status check_layout(struct vf_gguf *g, const char *what, struct vf_error *err)
{
	const char **sorted = malloc((g->ntensors ? g->ntensors : 1) * sizeof *sorted);
	if (!sorted)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	for (size_t i = 0; i < g->ntensors; i++)
		sorted[i] = g->tensors[i].name;
	qsort(sorted, g->ntensors, sizeof *sorted, cmp_name);
	for (size_t i = 1; i < g->ntensors; i++)
		if (strcmp(sorted[i], sorted[i - 1]) == 0) {
			vf_status st = vf_error_set(err, VF_ERR, "%s: tensor '%s' appears twice", what,
						    sorted[i]);
			free(sorted);
			return st;
		}
	free(sorted);
	uint64_t at = 0, a = g->alignment;
	for (size_t i = 0; i < g->ntensors; i++) {
		const struct vf_gguf_tensor *t = &g->tensors[i];
		if (t->offset != at)
			return vf_error_set(err, VF_ERR,
					    "%s: tensor '%s': offset %llu, expected %llu (tensors follow "
					    "each other, padded to %u bytes)",
					    what, t->name, (unsigned long long)t->offset,
					    (unsigned long long)at, g->alignment);
		uint64_t padded = t->bytes + (a - t->bytes % a) % a;
		if (padded < t->bytes || at + padded < at || g->params > INT64_MAX - t->numel)
			return vf_error_set(err, VF_ERR, "%s: tensor '%s': size overflows", what,
					    t->name);
		at += padded;
		g->params += t->numel;
		g->data_bytes += t->bytes;
		g->type_params[t->type] += t->numel;
		g->type_bytes[t->type] += t->bytes;
	}
	if (g->header_bytes > g->file_bytes || at > g->file_bytes - g->header_bytes)
		return vf_error_set(err, VF_ERR,
				    "%s: truncated: the tensors end at byte %llu, the file has %llu",
				    what, (unsigned long long)(g->header_bytes + at),
				    (unsigned long long)g->file_bytes);
	return VF_OK;
}

static vf_status parse_header(struct cur *c, struct vf_gguf *g)
{
	uint32_t magic = 0, version = 0;
	uint64_t nt = 0, nkv = 0;
	if (!need(c, 4, "the magic"))
		return c->err->code;
	magic = (uint32_t)le(c, 4);
	if (magic != 0x46554747u) /* "GGUF" */
		return vf_error_set(c->err, VF_ERR, "%s: not a GGUF file (no GGUF magic)", c->what);
	if (!u32(c, "the version", &version))
		return c->err->code;
	if (version == 1)
		return vf_error_set(c->err, VF_ERR, "%s: GGUF version 1 is not read (convert the file "
						    "again with a current llama.cpp)",
				    c->what);
	if ((version & 0xffff) == 0 && version)
		return vf_error_set(c->err, VF_ERR, "%s: a big-endian GGUF file (not read)", c->what);
	if (version < 2 || version > 3)
		return vf_error_set(c->err, VF_ERR, "%s: GGUF version %u (expected 2 or 3)", c->what,
				    version);
	g->version = version;
	if (!u64(c, "the tensor count", &nt) || !u64(c, "the key-value count", &nkv))
		return c->err->code;
	if (nt > VF_GGUF_MAX_TENSORS || nkv > VF_GGUF_MAX_KV)
		return vf_error_set(c->err, VF_ERR,
				    "%s: %llu tensors and %llu key-values exceed the limits (%u, %u)",
				    c->what, (unsigned long long)nt, (unsigned long long)nkv,
				    VF_GGUF_MAX_TENSORS, VF_GGUF_MAX_KV);
	/* a tensor info takes at least 8 + 1 + 4 + 8 + 4 + 8 bytes */
	if (nt > c->file / 33)
		return vf_error_set(c->err, VF_ERR, "%s: %llu tensors cannot fit in %llu bytes",
				    c->what, (unsigned long long)nt, (unsigned long long)c->file);
	g->metadata = cJSON_CreateObject();
	if (!g->metadata)
		return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
	for (uint64_t i = 0; i < nkv; i++)
		if (!read_kv(c, g))
			return c->err->code;
	g->tensors = calloc(nt ? (size_t)nt : 1, sizeof *g->tensors);
	g->names = malloc(nt ? (size_t)nt * MAX_NAME : 1);
	if (!g->tensors || !g->names)
		return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
	size_t used = 0;
	for (uint64_t i = 0; i < nt; i++) {
		if (!read_tensor(c, &g->tensors[i], &g->names, &used))
			return c->err->code;
		g->ntensors++;
	}
	uint64_t a = g->alignment;
	g->header_bytes = c->pos + (a - c->pos % a) % a;
	return VF_OK;
}

vf_status vf_gguf_parse(const void *buf, size_t len, uint64_t file_bytes, const char *what,
			struct vf_gguf *g, struct vf_error *err)
{
	struct vf_error local;
	if (!err)
		err = &local;
	memset(g, 0, sizeof *g);
	g->vocab = -1;
	g->alignment = 32;
	g->file_bytes = file_bytes;
	g->path = strdup(what);
	if (!g->path)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	if (len > file_bytes)
		len = (size_t)file_bytes;
	struct cur c = {.b = buf, .len = len, .file = file_bytes, .what = what, .err = err};
	vf_status st = parse_header(&c, g);
	if (st == VF_OK)
		st = check_layout(g, what, err);
	return st;
}

void vf_gguf_release(struct vf_gguf *g)
{
	if (!g)
		return;
	free(g->path);
	free(g->tensors);
	free(g->names);
	cJSON_Delete(g->metadata);
	memset(g, 0, sizeof *g);
}

static vf_status pread_full(int fd, char *buf, size_t n, const char *path, struct vf_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return vf_error_set(err, VF_ERR, "%s: read failed: %s", path,
					    r < 0 ? strerror(errno) : "unexpected end of file");
		got += (size_t)r;
	}
	return VF_OK;
}

/* A header stub (VF_GGUF_STUB_MAGIC, the real size, the header bytes). */
static vf_status read_stub(int fd, uint64_t size, const char *head, const char *path,
			   struct vf_gguf *g, struct vf_error *err)
{
	if (size > 16 + (uint64_t)VF_GGUF_MAX_HEADER)
		return vf_error_set(err, VF_ERR, "%s: header stub larger than the limit of %u bytes",
				    path, VF_GGUF_MAX_HEADER);
	uint64_t real = 0;
	for (int i = 15; i >= 8; i--)
		real = (real << 8) | (unsigned char)head[i];
	char *buf = malloc((size_t)size);
	if (!buf)
		return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
	vf_status st = pread_full(fd, buf, (size_t)size, path, err);
	if (st == VF_OK && real < size - 16)
		st = vf_error_set(err, VF_ERR, "%s: header stub records a file of %llu bytes, "
					       "shorter than its header",
				  path, (unsigned long long)real);
	if (st == VF_OK)
		st = vf_gguf_parse(buf + 16, (size_t)size - 16, real, path, g, err);
	if (st == VF_ENOTFOUND) /* the stub holds the whole header or it is damaged */
		st = vf_error_set(err, VF_ERR, "%s: header stub cut short", path);
	free(buf);
	return st;
}

vf_status vf_gguf_read(const char *path, struct vf_gguf *g, struct vf_error *err)
{
	memset(g, 0, sizeof *g);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_ERR, "%s: %s", path,
				    strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vf_error_set(err, VF_ERR, "%s: not a regular file", path);
	}
	uint64_t size = (uint64_t)sb.st_size;
	size_t want = size < FIRST_READ ? (size_t)size : FIRST_READ;
	vf_status st;
	char magic[16];
	if (size >= 16 && pread_full(fd, magic, 16, path, NULL) == VF_OK &&
	    memcmp(magic, VF_GGUF_STUB_MAGIC, 8) == 0) {
		st = read_stub(fd, size, magic, path, g, err);
		close(fd);
		return st;
	}
	for (;;) {
		char *buf = malloc(want ? want : 1);
		if (!buf) {
			st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
			break;
		}
		st = pread_full(fd, buf, want, path, err);
		if (st == VF_OK)
			st = vf_gguf_parse(buf, want, size, path, g, err);
		free(buf);
		if (st != VF_ENOTFOUND || want >= size)
			break;
		vf_gguf_release(g);
		if (want >= VF_GGUF_MAX_HEADER) {
			st = vf_error_set(err, VF_ERR, "%s: header larger than the limit of %u bytes",
					  path, VF_GGUF_MAX_HEADER);
			break;
		}
		uint64_t next = (uint64_t)want * 4;
		if (next > VF_GGUF_MAX_HEADER)
			next = VF_GGUF_MAX_HEADER;
		want = next > size ? (size_t)size : (size_t)next;
	}
	close(fd);
	return st;
}
