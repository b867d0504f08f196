/* cmd-config.c - `vramfit config get|set`: read a key of a YAML config by
 * dotted path, or patch keys byte-exactly (yamldoc), writing atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/base/yamldoc.h"

static const char usage[] =
	"usage: vramfit config get FILE KEY [--json]\n"
	"       vramfit config set FILE KEY=VALUE... [--dry-run] [--json]\n"
	"\n"
	"Read or patch a YAML config (e.g. an LTX-2 trainer config.yaml) by dotted\n"
	"path: model.model_path, validation.video_dims, validation.video_dims.0.\n"
	"\n"
	"get prints a scalar as its value (strings unquoted, null as null) and a\n"
	"sequence or mapping as JSON. set takes VALUE as YAML: null, true, 42,\n"
	"1e-4, \"a string\", plain-string, [960, 544, 89]. Only the bytes of the\n"
	"values change: comments, order, quoting of other keys, blank lines and\n"
	"CRLF/LF stay as they were; a quoted value keeps its quotes. A missing key\n"
	"is added at the end of its mapping with the file's indentation (missing\n"
	"parent mappings too). All changes are applied, then the file is replaced\n"
	"atomically; on any error nothing is written.\n"
	"\n"
	"A key set twice in its mapping is refused by get and set (PyYAML, and so\n"
	"the trainer, keeps the last; remove one). set refuses a key reached\n"
	"through an alias (*a) or a merge key (<<: *a), and a value carrying an\n"
	"anchor (&a): the edit would change the other keys sharing it.\n";

struct config_args {
	bool json, dry;
};

#define OPT_T struct config_args
static const struct vf_option options[] = {
	OPT_BOOL("dry-run", dry, "print the patched file to stdout instead of writing it"),
	OPT_BOOL("json", json, "get: {\"file\",\"key\",\"type\",\"value\"}; set: {\"file\",\"set\":{key: value}}"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"Limits: 16 MiB per file, 1000 aliases, 100 levels of nesting.\n"
	"Exit status: 0 ok, 1 failure (key not found, invalid YAML...), 2 usage.\n";

static int do_get(int argc, char **argv, bool json)
{
	if (argc != 2)
		return vf_cli_usage("config", "get takes FILE KEY");
	struct vf_error err = {0};
	struct vf_yamldoc *d = NULL;
	if (vf_yamldoc_load_file(argv[0], &d, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	/* a key set twice: the trainer reads the last copy; say so rather
	 * than let the user act on either */
	if (vf_yamldoc_check_path(d, argv[1], &err) != VF_OK) {
		vf_yamldoc_free(d);
		return vf_cli_fail_err(&err);
	}
	const struct vf_yaml_node *n = vf_yamldoc_find(d, argv[1]);
	if (!n) {
		vf_yamldoc_free(d);
		return vf_cli_fail("%s: key %s: not found", argv[0], argv[1]);
	}
	cJSON *v = vf_yaml_node_to_json(n);
	if (!v) {
		vf_yamldoc_free(d);
		return vf_cli_fail("%s: key %s: expands to too many nodes", argv[0], argv[1]);
	}
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "file", argv[0]);
		cJSON_AddStringToObject(o, "key", argv[1]);
		cJSON_AddStringToObject(o, "type", vf_yaml_kind_name(vf_yaml_node_kind(n)));
		cJSON_AddItemToObject(o, "value", v);
		vf_cli_print_json(o);
		cJSON_Delete(o);
	} else {
		enum vf_yaml_kind k = vf_yaml_node_kind(n);
		if (k == VF_YAML_SEQ || k == VF_YAML_MAP) {
			char *s = cJSON_PrintUnformatted(v);
			printf("%s\n", s ? s : "");
			free(s);
		} else if (k == VF_YAML_NULL) {
			printf("null\n");
		} else {
			printf("%s\n", vf_yaml_node_str(n));
		}
		cJSON_Delete(v);
	}
	vf_yamldoc_free(d);
	return VF_EXIT_OK;
}

/* KEY[N]: a sequence item is KEY.N here; set would add a key named with
 * the brackets. Returns -1, else the usage error's exit code. */
static int bracket_key(const char *arg, const char *eq)
{
	const char *b = memchr(arg, '[', (size_t)(eq - arg));
	if (!b)
		return -1;
	const char *e = memchr(b, ']', (size_t)(eq - b));
	int n = (int)(b - arg);
	if (!e || e <= b + 1)
		return vf_cli_usage("config", "'%.*s': a sequence item is KEY.N, not KEY[N]", (int)(eq - arg), arg);
	return vf_cli_usage("config", "'%.*s': a sequence item is KEY.N: %.*s.%.*s%.*s", (int)(eq - arg), arg, n,
			    arg, (int)(e - b - 1), b + 1, (int)(eq - e - 1), e + 1);
}

static int do_set(int argc, char **argv, bool json, bool dry)
{
	if (argc < 2)
		return vf_cli_usage("config", "set takes FILE KEY=VALUE...");
	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i])
			return vf_cli_usage("config", "'%s': expected KEY=VALUE", argv[i]);
		int rc = bracket_key(argv[i], eq);
		if (rc >= 0)
			return rc;
	}
	struct vf_error err = {0};
	struct vf_yamldoc *d = NULL;
	if (vf_yamldoc_load_file(argv[0], &d, &err) != VF_OK)
		return vf_cli_fail_err(&err);
	cJSON *set = cJSON_CreateObject();
	int rc = VF_EXIT_OK;
	for (int i = 1; i < argc && rc == VF_EXIT_OK; i++) {
		const char *eq = strchr(argv[i], '=');
		char *key = strndup(argv[i], (size_t)(eq - argv[i]));
		if (vf_yamldoc_set(d, key, eq + 1, &err) != VF_OK) {
			rc = vf_cli_fail_err(&err);
		} else {
			cJSON *v = vf_yaml_node_to_json(vf_yamldoc_find(d, key));
			cJSON_DeleteItemFromObjectCaseSensitive(set, key);
			cJSON_AddItemToObject(set, key, v ? v : cJSON_CreateNull());
		}
		free(key);
	}
	if (rc == VF_EXIT_OK) {
		size_t len;
		const char *text = vf_yamldoc_text(d, &len);
		if (dry) {
			fwrite(text, 1, len, stdout);
		} else if (vf_yamldoc_save(d, argv[0], &err) != VF_OK) {
			rc = vf_cli_fail_err(&err);
		} else if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "file", argv[0]);
			cJSON_AddItemToObject(o, "set", set);
			set = NULL;
			vf_cli_print_json(o);
			cJSON_Delete(o);
		}
	}
	cJSON_Delete(set);
	vf_yamldoc_free(d);
	return rc;
}

static int run(int argc, char **argv)
{
	struct config_args a = {0};
	int n, rc = vf_opt_parse("config", options, &a, argc, argv, 0, &n);
	if (rc >= 0)
		return rc;
	if (n > 256)
		return vf_cli_usage("config", "too many arguments");
	char **args = argv;
	bool json = a.json, dry = a.dry;
	if (n == 0)
		return vf_cli_usage("config", "expected get or set");
	if (strcmp(args[0], "get") == 0) {
		if (dry)
			return vf_cli_usage("config", "--dry-run is for set");
		return do_get(n - 1, args + 1, json);
	}
	if (strcmp(args[0], "set") == 0)
		return do_set(n - 1, args + 1, json, dry);
	return vf_cli_usage("config", "unknown subcommand '%s' (expected get or set)", args[0]);
}

const struct vf_cli_command vf_cmd_config = {
	.name = "config",
	.summary = "read or patch a YAML config by key, byte-exactly",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
