/* hub.c - fetch what vramfit reads of a Hub model (hub.h): the model-info
 * call for the commit and the file list, the config files, the safetensors
 * indexes, and each shard's header by two range requests (bytes 0-7, then
 * 8 .. 8+N-1) - never a weight byte. Kept under vramfit's cache keyed by
 * commit, each shard as a header stub (safetensors.h).
 *
 * libcurl is loaded at run time (dlopen "libcurl.so.4"): a box without it
 * runs everything else, and says so when a fetch is needed. */
#include "vramfit/hub/hub.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "hub-internal.h"
#include "vramfit/base/buf.h"
#include "vramfit/base/json.h"
#include "vramfit/model/gguf.h"
#include "vramfit/model/safetensors.h"

#define MAX_JSON (16u << 20)   /* config.json, model_index.json, an index */
#define MAX_INFO (64u << 20)   /* the model-info reply (file lists are long) */
#define MAX_FILES 4096         /* files the model-info reply may list */
#define MAX_FETCH 512          /* files fetched for one model */
#define DEFAULT_ENDPOINT "https://huggingface.co"
#define GGUF_FIRST (64u << 10)  /* a GGUF header is read in growing ranges from here */
#define GGUF_MAX (256u << 20)   /* ... up to here */

/* ---- libcurl, loaded at run time ----------------------------------------- */

struct curl_api {
	void *lib;
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};

static vf_status curl_load(struct curl_api *c, struct vf_error *err)
{
	memset(c, 0, sizeof *c);
	const char *name = getenv("VRAMFIT_LIBCURL"); /* tests: a missing library */
	c->lib = dlopen(name && *name ? name : "libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!c->lib)
		return vf_error_set(err, VF_ERR,
				    "fetching from the Hub needs libcurl (libcurl.so.4: %s); install "
				    "libcurl4 (Debian/Ubuntu) or set HF_HUB_OFFLINE=1 to use only the "
				    "caches",
				    dlerror());
#define SYM(field, sym) *(void **)&c->field = dlsym(c->lib, sym)
	SYM(global_init, "curl_global_init");
	SYM(easy_init, "curl_easy_init");
	SYM(easy_setopt, "curl_easy_setopt");
	SYM(easy_perform, "curl_easy_perform");
	SYM(easy_getinfo, "curl_easy_getinfo");
	SYM(easy_reset, "curl_easy_reset");
	SYM(easy_cleanup, "curl_easy_cleanup");
	SYM(easy_strerror, "curl_easy_strerror");
	SYM(slist_append, "curl_slist_append");
	SYM(slist_free_all, "curl_slist_free_all");
#undef SYM
	if (!c->global_init || !c->easy_init || !c->easy_setopt || !c->easy_perform ||
	    !c->easy_getinfo || !c->easy_reset || !c->easy_cleanup || !c->easy_strerror ||
	    !c->slist_append || !c->slist_free_all) {
		dlclose(c->lib);
		c->lib = NULL;
		return vf_error_set(err, VF_ERR, "libcurl.so.4 lacks the functions vramfit uses");
	}
	c->global_init(CURL_GLOBAL_DEFAULT);
	return VF_OK;
}

/* ---- one fetch session ---------------------------------------------------- */

struct hub {
	struct curl_api api;
	CURL *h;
	struct curl_slist *headers;
	char endpoint[512];
	char auth[600];
	long timeout; /* seconds */
	const struct vf_hub_ref *ref;
};

/* One reply: status, body (bounded), and the headers vramfit reads. */
struct reply {
	long code;
	struct vf_buf body;
	size_t limit;
	bool toobig;
	uint64_t total;      /* Content-Range's total; 0 unknown */
	char retry_after[32];
	char error_code[48]; /* X-Error-Code */
	char commit[64];     /* X-Repo-Commit */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = size * n;
	if (r->body.len + len > r->limit) {
		r->toobig = true;
		return 0; /* abort: never more than asked for */
	}
	return vf_buf_append(&r->body, p, len, NULL) == VF_OK ? len : 0;
}

/* The value of header "name:" in line (len bytes) into out, trimmed. */
static bool header_value(const char *line, size_t len, const char *name, char *out, size_t n)
{
	size_t k = strlen(name);
	if (len <= k || strncasecmp(line, name, k) != 0)
		return false;
	const char *v = line + k, *e = line + len;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
		e--;
	snprintf(out, n, "%.*s", (int)(e - v), v);
	return true;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = size * n;
	char v[128];
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new reply (after a redirect) */
		r->total = 0;
		r->retry_after[0] = r->error_code[0] = '\0';
	} else if (header_value(p, len, "content-range:", v, sizeof v)) {
		const char *slash = strchr(v, '/');
		r->total = slash && isdigit((unsigned char)slash[1]) ? strtoull(slash + 1, NULL, 10)
								     : 0;
	} else if (header_value(p, len, "retry-after:", v, sizeof v)) {
		snprintf(r->retry_after, sizeof r->retry_after, "%s", v);
	} else if (header_value(p, len, "x-error-code:", v, sizeof v)) {
		snprintf(r->error_code, sizeof r->error_code, "%s", v);
	} else if (header_value(p, len, "x-repo-commit:", v, sizeof v)) {
		snprintf(r->commit, sizeof r->commit, "%s", v);
	}
	return len;
}

static long env_seconds(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long s = v && *v ? strtol(v, &end, 10) : def;
	return v && *v && (*end || s < 1 || s > 3600) ? def : s;
}

/* The token: HF_TOKEN, else the file HF_TOKEN_PATH or $HF_HOME/token. */
static void read_token(char *out, size_t n)
{
	out[0] = '\0';
	const char *t = getenv("HF_TOKEN");
	if (t && *t) {
		snprintf(out, n, "%s", t);
		return;
	}
	char path[VF_HUB_PATH_MAX + 16];
	const char *tp = getenv("HF_TOKEN_PATH");
	if (tp && *tp) {
		snprintf(path, sizeof path, "%s", tp);
	} else {
		char home[VF_HUB_PATH_MAX];
		vf__hf_home(home, sizeof home);
		snprintf(path, sizeof path, "%s/token", home);
	}
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(out, (int)n, f))
		out[strcspn(out, "\r\n \t")] = '\0';
	else
		out[0] = '\0';
	fclose(f);
}

static vf_status hub_open(struct hub *s, const struct vf_hub_ref *r, struct vf_error *err)
{
	memset(s, 0, sizeof *s);
	s->ref = r;
	const char *ep = getenv("HF_ENDPOINT");
	snprintf(s->endpoint, sizeof s->endpoint, "%s", ep && *ep ? ep : DEFAULT_ENDPOINT);
	size_t el = strlen(s->endpoint);
	while (el > 0 && s->endpoint[el - 1] == '/')
		s->endpoint[--el] = '\0';
	if (strncmp(s->endpoint, "http://", 7) != 0 && strncmp(s->endpoint, "https://", 8) != 0)
		return vf_error_set(err, VF_EUSAGE, "HF_ENDPOINT=%s: expected an http:// or https:// URL",
				    s->endpoint);
	s->timeout = env_seconds("HF_HUB_DOWNLOAD_TIMEOUT", 10);
	vf_status st = curl_load(&s->api, err);
	if (st != VF_OK)
		return st;
	s->h = s->api.easy_init();
	if (!s->h)
		return vf_error_set(err, VF_ENOMEM, "libcurl: cannot start a transfer");
	char token[512];
	read_token(token, sizeof token);
	s->headers = s->api.slist_append(NULL, "User-Agent: vramfit/" VF_VERSION);
	if (token[0]) {
		snprintf(s->auth, sizeof s->auth, "Authorization: Bearer %s", token);
		s->headers = s->api.slist_append(s->headers, s->auth);
	}
	return VF_OK;
}

static void hub_close(struct hub *s)
{
	if (s->h)
		s->api.easy_cleanup(s->h);
	if (s->headers)
		s->api.slist_free_all(s->headers);
	/* libcurl stays loaded: its global state may not be torn down twice */
	memset(s->auth, 0, sizeof s->auth);
}

/* Percent-encode s (everything but unreserved characters) into out. */
static void url_quote(const char *s, char *out, size_t n)
{
	size_t o = 0;
	for (; *s && o + 4 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, n - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/* One line for a failed transfer or status; what names the file. */
static vf_status reply_error(struct hub *s, CURLcode rc, const struct reply *r, const char *what,
			     struct vf_error *err)
{
	const char *repo = s->ref->repo;
	switch (rc) {
	case CURLE_OK:
	case CURLE_WRITE_ERROR:
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
		return vf_error_set(err, VF_ERR,
				    "%s: cannot reach %s (%s); no network? HF_HUB_OFFLINE=1 uses only "
				    "the caches",
				    repo, s->endpoint, s->api.easy_strerror(rc));
	case CURLE_OPERATION_TIMEDOUT:
		return vf_error_set(err, VF_ERR,
				    "%s: %s: no reply from %s within %ld s (timeout; "
				    "HF_HUB_DOWNLOAD_TIMEOUT sets it)",
				    repo, what, s->endpoint, s->timeout);
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		return vf_error_set(err, VF_ERR, "%s: %s: truncated reply from %s (%s)", repo, what,
				    s->endpoint, s->api.easy_strerror(rc));
	case CURLE_TOO_MANY_REDIRECTS:
		return vf_error_set(err, VF_ERR, "%s: %s: too many redirects", repo, what);
	default:
		return vf_error_set(err, VF_ERR, "%s: %s: %s", repo, what, s->api.easy_strerror(rc));
	}
	if (r->code == 401 || r->code == 403)
		return vf_error_set(err, VF_ERR,
				    "%s: %s: HTTP %ld: gated or private repository: accept the "
				    "licence on the model page (%s/%s) and set HF_TOKEN",
				    repo, what, r->code, s->endpoint, repo);
	if (r->code == 404)
		return vf_error_set(err, VF_ENOTFOUND, "%s: %s: not found on %s (HTTP 404%s%s)", repo,
				    what, s->endpoint, r->error_code[0] ? ": " : "", r->error_code);
	if (r->code == 429)
		return vf_error_set(err, VF_ERR, "%s: %s: rate limited by %s (HTTP 429); retry after %s%s",
				    repo, what, s->endpoint, r->retry_after[0] ? r->retry_after : "a while",
				    r->retry_after[0] && isdigit((unsigned char)r->retry_after[0]) ? " s"
												   : "");
	return vf_error_set(err, VF_ERR, "%s: %s: HTTP %ld from %s", repo, what, r->code,
			    s->endpoint);
}

/* GET url into r (at most limit bytes of body; range "a-b" or NULL).
 * Fails on anything but 200 (206 for a range). */
static vf_status get(struct hub *s, const char *url, const char *range, size_t limit,
		     const char *what, struct reply *r, struct vf_error *err)
{
	memset(r, 0, sizeof *r);
	vf_buf_init(&r->body, 0);
	r->limit = limit;
	struct curl_api *a = &s->api;
	a->easy_reset(s->h);
	a->easy_setopt(s->h, CURLOPT_URL, url);
	a->easy_setopt(s->h, CURLOPT_PROTOCOLS_STR, "http,https");
	a->easy_setopt(s->h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	a->easy_setopt(s->h, CURLOPT_FOLLOWLOCATION, 1L);
	a->easy_setopt(s->h, CURLOPT_MAXREDIRS, 10L);
	a->easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	a->easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT, s->timeout);
	a->easy_setopt(s->h, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a stalled reply: timeout */
	a->easy_setopt(s->h, CURLOPT_LOW_SPEED_TIME, s->timeout);
	a->easy_setopt(s->h, CURLOPT_HTTPHEADER, s->headers);
	a->easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_body);
	a->easy_setopt(s->h, CURLOPT_WRITEDATA, r);
	a->easy_setopt(s->h, CURLOPT_HEADERFUNCTION, on_header);
	a->easy_setopt(s->h, CURLOPT_HEADERDATA, r);
	if (range)
		a->easy_setopt(s->h, CURLOPT_RANGE, range);
	CURLcode rc = a->easy_perform(s->h);
	a->easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &r->code);
	if (rc == CURLE_WRITE_ERROR && r->toobig && (r->code == 200 || r->code == 206))
		return range ? vf_error_set(err, VF_ERR,
					    "%s: %s: %s answered the range request %s with more "
					    "bytes (HTTP %ld); vramfit reads headers only",
					    s->ref->repo, what, s->endpoint, range, r->code)
			     : vf_error_set(err, VF_ERR, "%s: %s: larger than the limit of %zu bytes",
					    s->ref->repo, what, limit);
	bool ok = rc == CURLE_OK && (range ? r->code == 206 : r->code == 200);
	if (ok)
		return VF_OK;
	if (rc == CURLE_OK && range && r->code == 200)
		return vf_error_set(err, VF_ERR,
				    "%s: %s: %s ignored the range request %s (HTTP 200); vramfit "
				    "reads headers only",
				    s->ref->repo, what, s->endpoint, range);
	return reply_error(s, rc, r, what, err);
}

static void reply_release(struct reply *r)
{
	vf_buf_release(&r->body);
}

/* ---- the file list and what to fetch --------------------------------------- */

struct plan {
	char commit[64];
	char **files; /* the repo's files (model info "siblings") */
	size_t nfiles;
};

static void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	memset(p, 0, sizeof *p);
}

static bool plan_has(const struct plan *p, const char *name)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (strcmp(p->files[i], name) == 0)
			return true;
	return false;
}

/* GET /api/models/<repo>/revision/<rev>: the commit ("sha") and files. */
static vf_status model_info(struct hub *s, struct plan *p, struct vf_error *err)
{
	char rev[400], url[1200];
	url_quote(s->ref->revision, rev, sizeof rev);
	snprintf(url, sizeof url, "%s/api/models/%s/revision/%s", s->endpoint, s->ref->repo, rev);
	struct reply r;
	vf_status st = get(s, url, NULL, MAX_INFO, "model info", &r, err);
	cJSON *j = NULL;
	if (st == VF_OK && vf_json_parse(r.body.data, r.body.len, "model info", &j, err) != VF_OK)
		st = vf_error_prefix(err, s->ref->repo);
	reply_release(&r);
	if (st != VF_OK)
		return st;
	const char *sha = vf_json_get_str(j, "sha");
	const cJSON *sib = cJSON_GetObjectItemCaseSensitive(j, "siblings");
	if (!sha || !vf__hub_is_commit(sha) || !cJSON_IsArray(sib)) {
		cJSON_Delete(j);
		return vf_error_set(err, VF_ERR,
				    "%s: model info from %s lacks a 40-digit \"sha\" or a \"siblings\" "
				    "list",
				    s->ref->repo, s->endpoint);
	}
	snprintf(p->commit, sizeof p->commit, "%s", sha);
	size_t n = (size_t)cJSON_GetArraySize(sib);
	if (n > MAX_FILES)
		n = MAX_FILES;
	p->files = calloc(n ? n : 1, sizeof *p->files);
	const cJSON *e;
	cJSON_ArrayForEach(e, sib)
	{
		const char *f = vf_json_get_str(e, "rfilename");
		if (!p->files || p->nfiles >= n || !f)
			continue;
		/* names stay inside the snapshot */
		if (!*f || f[0] == '/' || strstr(f, "..") || strlen(f) > 255)
			continue;
		p->files[p->nfiles] = strdup(f);
		if (p->files[p->nfiles])
			p->nfiles++;
	}
	cJSON_Delete(j);
	return p->files ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

/* ---- writing the snapshot ------------------------------------------------ */

static vf_status mkdirs(const char *path, struct vf_error *err)
{
	char p[VF_HUB_PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return vf_error_set(err, VF_ERR, "%s: %s", p, strerror(errno));
		*q = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return vf_error_set(err, VF_ERR, "%s: %s", p, strerror(errno));
	return VF_OK;
}

/* Write dir/name (folders made), as given. */
static vf_status write_file(const char *dir, const char *name, const void *a, size_t alen,
			    const void *b, size_t blen, struct vf_error *err)
{
	char path[VF_HUB_PATH_MAX + 300];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	vf_status st = mkdirs(path, err);
	*slash = '/';
	if (st != VF_OK)
		return st;
	FILE *f = fopen(path, "wb");
	if (!f)
		return vf_error_set(err, VF_ERR, "%s: %s", path, strerror(errno));
	bool ok = fwrite(a, 1, alen, f) == alen && (!blen || fwrite(b, 1, blen, f) == blen);
	if (fclose(f) != 0 || !ok)
		return vf_error_set(err, VF_ERR, "%s: write failed", path);
	return VF_OK;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- fetching ------------------------------------------------------------- */

static void resolve_url(const struct hub *s, const char *commit, const char *file, char *url,
			size_t n)
{
	snprintf(url, n, "%s/%s/resolve/%s/%s", s->endpoint, s->ref->repo, commit, file);
}

static vf_status fetch_json(struct hub *s, const char *commit, const char *file, const char *tmp,
			    struct vf_buf *keep, struct vf_error *err)
{
	char url[2048];
	resolve_url(s, commit, file, url, sizeof url);
	struct reply r;
	vf_status st = get(s, url, NULL, MAX_JSON, file, &r, err);
	if (st == VF_OK)
		st = write_file(tmp, file, r.body.data ? r.body.data : "", r.body.len, NULL, 0, err);
	if (st == VF_OK && keep) {
		*keep = r.body;
		return VF_OK;
	}
	reply_release(&r);
	return st;
}

/* A shard's header by two range requests, validated, written as a stub. */
static vf_status fetch_header(struct hub *s, const char *commit, const char *file,
			      const char *tmp, struct vf_error *err)
{
	char url[2048], what[512], range[64];
	resolve_url(s, commit, file, url, sizeof url);
	snprintf(what, sizeof what, "%s/%s", s->ref->repo, file);
	struct reply r;
	vf_status st = get(s, url, "0-7", 8, file, &r, err);
	if (st != VF_OK) {
		reply_release(&r);
		return st;
	}
	uint64_t total = r.total;
	unsigned char head[8] = {0};
	if (r.body.len != 8 || total == 0) {
		reply_release(&r);
		return vf_error_set(err, VF_ERR,
				    "%s: the reply to range 0-7 %s (truncated reply or no "
				    "Content-Range)",
				    what, r.body.len != 8 ? "is not 8 bytes" : "lacks the file size");
	}
	memcpy(head, r.body.data, 8);
	reply_release(&r);
	struct vf_safetensors tst;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = (n << 8) | head[i];
	if (n > VF_SAFETENSORS_MAX_HEADER || n > total - 8 || n == 0) {
		/* the same limits and words as a local file */
		st = vf_safetensors_parse(head, 8, total, what, &tst, err);
		vf_safetensors_release(&tst);
		return st != VF_OK ? st : vf_error_set(err, VF_ERR, "%s: empty header", what);
	}
	snprintf(range, sizeof range, "8-%llu", (unsigned long long)(8 + n - 1));
	st = get(s, url, range, (size_t)n, file, &r, err);
	if (st == VF_OK && r.body.len != n)
		st = vf_error_set(err, VF_ERR,
				  "%s: truncated header: %llu bytes announced, the reply held %zu",
				  what, (unsigned long long)n, r.body.len);
	unsigned char *buf = NULL;
	if (st == VF_OK) {
		buf = malloc(24 + (size_t)n);
		if (!buf)
			st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	}
	if (st == VF_OK) {
		memcpy(buf, VF_SAFETENSORS_STUB_MAGIC, 8);
		for (int i = 0; i < 8; i++)
			buf[8 + i] = (unsigned char)(total >> (8 * i));
		memcpy(buf + 16, head, 8);
		memcpy(buf + 24, r.body.data, (size_t)n);
		st = vf_safetensors_parse(buf + 16, 8 + (size_t)n, total, what, &tst, err);
		vf_safetensors_release(&tst);
	}
	reply_release(&r);
	if (st == VF_OK)
		st = write_file(tmp, file, buf, 24 + (size_t)n, NULL, 0, err);
	free(buf);
	return st;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether file sits directly in folder prefix ("" or "unet/"). */
static bool in_folder(const char *file, const char *prefix)
{
	size_t k = strlen(prefix);
	return strncmp(file, prefix, k) == 0 && !strchr(file + k, '/');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The shards an index names, fetched (each once: the names sorted, repeats
 * skipped; a large MoE index maps ~100k tensors to a few hundred files). */
static vf_status fetch_index_shards(struct hub *s, const struct plan *p, const char *index,
				    const struct vf_buf *text, const char *prefix,
				    const char *tmp, size_t *fetched, struct vf_error *err)
{
	struct vf_safetensors_index ix;
	char what[400];
	snprintf(what, sizeof what, "%s/%s", s->ref->repo, index);
	vf_status st = vf_safetensors_index_parse(text->data ? text->data : "", text->len, what,
						  &ix, err);
	const char **files = st == VF_OK ? malloc((ix.n ? ix.n : 1) * sizeof *files) : NULL;
	if (st == VF_OK && !files)
		st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
	if (files) {
		memcpy(files, ix.files, ix.n * sizeof *files);
		qsort(files, ix.n, sizeof *files, cmp_str);
	}
	for (size_t i = 0; st == VF_OK && i < ix.n; i++) {
		if (i > 0 && strcmp(files[i], files[i - 1]) == 0)
			continue;
		char file[600];
		snprintf(file, sizeof file, "%s%s", prefix, files[i]);
		if (strchr(files[i], '/') || !plan_has(p, file))
			st = vf_error_set(err, VF_ERR, "%s: names shard %s, which the repository "
						       "does not have",
					  what, files[i]);
		else if (++*fetched > MAX_FETCH)
			st = vf_error_set(err, VF_ERR, "%s: more than %d files to fetch", what,
					  MAX_FETCH);
		else
			st = fetch_header(s, p->commit, file, tmp, err);
	}
	free(files);
	vf_safetensors_index_release(&ix);
	return st;
}

static const char *const INDEXES[] = {"model.safetensors.index.json",
				      "diffusion_pytorch_model.safetensors.index.json"};
static const char *const SINGLES[] = {"model.safetensors", "diffusion_pytorch_model.safetensors",
				      "adapter_model.safetensors"};

/* One folder's configs, index and headers (prefix "" or "name/"). */
static vf_status fetch_folder(struct hub *s, const struct plan *p, const char *prefix,
			      const char *tmp, size_t *fetched, struct vf_error *err)
{
	static const char *const configs[] = {"config.json", "adapter_config.json"};
	char f[600];
	vf_status st = VF_OK;
	for (size_t i = 0; i < 2 && st == VF_OK; i++) {
		snprintf(f, sizeof f, "%s%s", prefix, configs[i]);
		if (plan_has(p, f))
			st = fetch_json(s, p->commit, f, tmp, NULL, err);
	}
	const char *index = NULL;
	for (size_t i = 0; i < p->nfiles && !index; i++)
		for (size_t k = 0; k < 2 && !index; k++) {
			snprintf(f, sizeof f, "%s%s", prefix, INDEXES[k]);
			if (strcmp(p->files[i], f) == 0)
				index = p->files[i];
		}
	for (size_t i = 0; i < p->nfiles && !index; i++)
		if (in_folder(p->files[i], prefix) && ends_with(p->files[i], ".safetensors.index.json"))
			index = p->files[i];
	if (st == VF_OK && index) {
		struct vf_buf text;
		vf_buf_init(&text, 0);
		st = fetch_json(s, p->commit, index, tmp, &text, err);
		if (st == VF_OK)
			st = fetch_index_shards(s, p, index, &text, prefix, tmp, fetched, err);
		vf_buf_release(&text);
		return st;
	}
	const char *single = NULL;
	for (size_t k = 0; k < 3 && !single; k++) {
		snprintf(f, sizeof f, "%s%s", prefix, SINGLES[k]);
		if (plan_has(p, f))
			single = f;
	}
	if (st == VF_OK && single)
		return fetch_header(s, p->commit, single, tmp, err);
	/* no preferred name: every .safetensors here (the loader judges) */
	for (size_t i = 0; i < p->nfiles && st == VF_OK; i++)
		if (in_folder(p->files[i], prefix) && ends_with(p->files[i], ".safetensors"))
			st = ++*fetched > MAX_FETCH
				     ? vf_error_set(err, VF_ERR, "%s: more than %d files to fetch",
						    s->ref->repo, MAX_FETCH)
				     : fetch_header(s, p->commit, p->files[i], tmp, err);
	return st;
}

/* A diffusers repo: model_index.json and each component folder it names. */
static vf_status fetch_components(struct hub *s, const struct plan *p, const char *tmp,
				  size_t *fetched, struct vf_error *err)
{
	struct vf_buf text;
	vf_buf_init(&text, 0);
	cJSON *j = NULL;
	vf_status st = fetch_json(s, p->commit, "model_index.json", tmp, &text, err);
	if (st == VF_OK)
		st = vf_json_parse(text.data, text.len, "model_index.json", &j, err);
	vf_buf_release(&text);
	const cJSON *c;
	cJSON_ArrayForEach(c, j)
	{
		char prefix[300], cfg[320];
		if (st != VF_OK || !c->string || c->string[0] == '_' || strchr(c->string, '/') ||
		    strstr(c->string, ".."))
			continue;
		snprintf(prefix, sizeof prefix, "%s/", c->string);
		snprintf(cfg, sizeof cfg, "%sconfig.json", prefix);
		if (plan_has(p, cfg))
			st = fetch_folder(s, p, prefix, tmp, fetched, err);
	}
	cJSON_Delete(j);
	return st;
}

/* Move the finished tmp folder to snapshots/<commit> and point
 * refs/<revision> at it (each a rename: readers see all or nothing). */
static vf_status publish(const struct hub *s, const char *repo_dir, const char *tmp,
			 const char *commit, struct vf_hub_place *out, struct vf_error *err)
{
	char snaps[VF_HUB_PATH_MAX + 16], dest[VF_HUB_PATH_MAX + 80];
	snprintf(snaps, sizeof snaps, "%s/snapshots", repo_dir);
	vf_status st = mkdirs(snaps, err);
	if (st != VF_OK)
		return st;
	char suffix[80];
	vf__hub_tag_suffix(s->ref->tag, suffix, sizeof suffix);
	snprintf(dest, sizeof dest, "%s/%s%s", snaps, commit, suffix);
	if (rename(tmp, dest) != 0) {
		if (errno != EEXIST && errno != ENOTEMPTY)
			return vf_error_set(err, VF_ERR, "%s: %s", dest, strerror(errno));
		rm_tree(tmp); /* another run got there first: the same commit */
	}
	if (strcmp(s->ref->revision, commit) != 0) {
		char ref[VF_HUB_PATH_MAX + 200], tref[VF_HUB_PATH_MAX + 220];
		snprintf(ref, sizeof ref, "%s/refs/%s", repo_dir, s->ref->revision);
		snprintf(tref, sizeof tref, "%s.tmp%ld", ref, (long)getpid());
		char *slash = strrchr(ref, '/');
		*slash = '\0';
		st = mkdirs(ref, err);
		*slash = '/';
		FILE *f = st == VF_OK ? fopen(tref, "w") : NULL;
		if (st == VF_OK && !f)
			st = vf_error_set(err, VF_ERR, "%s: %s", tref, strerror(errno));
		if (f) {
			bool ok = fputs(commit, f) >= 0;
			if (fclose(f) != 0 || !ok || rename(tref, ref) != 0) {
				unlink(tref);
				st = vf_error_set(err, VF_ERR, "%s: write failed", ref);
			}
		}
		if (st != VF_OK)
			return st;
	}
	snprintf(out->dir, sizeof out->dir, "%s", dest);
	snprintf(out->commit, sizeof out->commit, "%s", commit);
	snprintf(out->source, sizeof out->source, "hub");
	return VF_OK;
}

/* A GGUF file's header: ranges from byte 0, each four times the last,
 * until it parses (the last range may reach past the header into the
 * first tensor's bytes: those are dropped), kept as a GGUF header stub. */
static vf_status fetch_gguf(struct hub *s, const char *commit, const char *file,
			    const char *tmp, struct vf_error *err)
{
	char url[2048], what[512], range[64];
	resolve_url(s, commit, file, url, sizeof url);
	snprintf(what, sizeof what, "%s/%s", s->ref->repo, file);
	struct vf_buf got;
	vf_buf_init(&got, 0);
	vf_buf_append(&got, VF_GGUF_STUB_MAGIC "\0\0\0\0\0\0\0\0", 16, NULL);
	uint64_t total = 0, want = GGUF_FIRST;
	vf_status st = VF_OK;
	for (;;) {
		uint64_t have = got.len - 16;
		if (total && want > total)
			want = total;
		snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)have,
			 (unsigned long long)(want - 1));
		struct reply r;
		st = get(s, url, range, (size_t)(want - have), file, &r, err);
		if (st == VF_OK && !total)
			total = r.total;
		uint64_t end = total && want > total ? total : want;
		if (st == VF_OK && (!total || r.body.len != (size_t)(end - have)))
			st = vf_error_set(err, VF_ERR, "%s: truncated reply to range %s (%zu bytes)",
					  what, range, r.body.len);
		if (st == VF_OK)
			st = vf_buf_append(&got, r.body.data, r.body.len, err);
		reply_release(&r);
		if (st != VF_OK)
			break;
		struct vf_gguf g;
		st = vf_gguf_parse(got.data + 16, got.len - 16, total, what, &g, err);
		uint64_t header = g.header_bytes;
		vf_gguf_release(&g);
		if (st == VF_OK) {
			for (int i = 0; i < 8; i++)
				got.data[8 + i] = (char)(total >> (8 * i));
			st = write_file(tmp, file, got.data, 16 + (size_t)header, NULL, 0, err);
			break;
		}
		if (st != VF_ENOTFOUND)
			break;
		if (want >= GGUF_MAX || want >= total) {
			st = vf_error_set(err, VF_ERR, "%s: header larger than the limit of %u bytes",
					  what, GGUF_MAX);
			break;
		}
		want *= 4;
	}
	vf_buf_release(&got);
	return st;
}

/* The .gguf file of a GGUF repository: the one whose name holds the tag
 * (case-insensitive), or the only one; split files are not read. */
static vf_status pick_gguf(const struct hub *s, const struct plan *p, const char **out,
			   struct vf_error *err)
{
	const char *tag = s->ref->tag;
	size_t n = 0;
	char names[600] = "";
	*out = NULL;
	for (size_t i = 0; i < p->nfiles; i++) {
		const char *f = p->files[i];
		if (!ends_with(f, ".gguf") || strchr(f, '/'))
			continue;
		if (tag[0] ? !strcasestr(f, tag) : strstr(f, "mmproj") != NULL)
			continue;
		if (strlen(names) + strlen(f) + 3 < sizeof names)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 n ? ", " : "", f);
		*out = f;
		n++;
	}
	if (n == 1 && strstr(*out, "-00001-of-"))
		return vf_error_set(err, VF_ERR, "%s: %s is the first part of a split GGUF (not read)",
				    s->ref->repo, *out);
	if (n == 1)
		return VF_OK;
	if (n == 0)
		return vf_error_set(err, VF_ENOTFOUND, "%s: no .gguf file%s%s%s", s->ref->repo,
				    tag[0] ? " with '" : "", tag, tag[0] ? "' in its name" : "");
	return vf_error_set(err, VF_ERR, "%s: %zu .gguf files%s%s%s (%s); name one: %s:TAG",
			    s->ref->repo, n, tag[0] ? " match '" : "", tag, tag[0] ? "'" : "", names,
			    s->ref->repo);
}

static bool has_gguf(const struct plan *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (ends_with(p->files[i], ".gguf"))
			return true;
	return false;
}

static vf_status fetch_all(struct hub *s, const struct plan *p, const char *tmp,
			   struct vf_error *err)
{
	if (s->ref->tag[0] || (has_gguf(p) && !plan_has(p, "config.json") &&
			       !plan_has(p, "model_index.json"))) {
		const char *f;
		vf_status st = pick_gguf(s, p, &f, err);
		return st == VF_OK ? fetch_gguf(s, p->commit, f, tmp, err) : st;
	}
	size_t fetched = 0;
	if (plan_has(p, "model_index.json"))
		return fetch_components(s, p, tmp, &fetched, err);
	vf_status st = fetch_folder(s, p, "", tmp, &fetched, err);
	if (st == VF_OK && !plan_has(p, "config.json") && fetched == 0 &&
	    !plan_has(p, "model.safetensors") && !plan_has(p, "adapter_config.json"))
		st = vf_error_set(err, VF_ERR,
				  "%s@%s: no config.json, model_index.json or .safetensors weights "
				  "in the repository",
				  s->ref->repo, s->ref->revision);
	return st;
}

vf_status vf_hub_fetch(const struct vf_hub_ref *r, struct vf_hub_place *out, struct vf_error *err)
{
	memset(out, 0, sizeof *out);
	struct hub s;
	struct plan p = {0};
	vf_status st = hub_open(&s, r, err);
	if (st == VF_OK)
		st = model_info(&s, &p, err);
	char root[VF_HUB_PATH_MAX], repo_dir[VF_HUB_PATH_MAX], tmp[VF_HUB_PATH_MAX + 32];
	vf__hub_cache_dir(root, sizeof root);
	vf__hub_repo_dir(root, r->repo, repo_dir, sizeof repo_dir);
	tmp[0] = '\0';
	if (st == VF_OK)
		st = mkdirs(repo_dir, err);
	if (st == VF_OK) {
		snprintf(tmp, sizeof tmp, "%s/tmp.XXXXXX", repo_dir);
		if (!mkdtemp(tmp)) {
			st = vf_error_set(err, VF_ERR, "%s: %s", tmp, strerror(errno));
			tmp[0] = '\0';
		}
	}
	if (st == VF_OK)
		st = fetch_all(&s, &p, tmp, err);
	if (st == VF_OK)
		st = write_file(tmp, VF_HUB_COMPLETE, p.commit, strlen(p.commit), NULL, 0, err);
	if (st == VF_OK)
		st = publish(&s, repo_dir, tmp, p.commit, out, err);
	else if (tmp[0])
		rm_tree(tmp);
	for (size_t i = 0; st == VF_OK && i < p.nfiles && !out->weights; i++)
		out->weights = ends_with(p.files[i], ".safetensors") || ends_with(p.files[i], ".gguf") ||
			       strcmp(p.files[i], "model_index.json") == 0;
	plan_release(&p);
	hub_close(&s);
	return st;
}
