/* cmd-check.c - `vramfit check RUN_DIR`: the self-check of a run's
 * config.yaml before any launch (lib/trainer/check.c); one line per failure naming
 * the key and the rule. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "parse-options.h"
#include "vramfit/trainer/check.h"
#include "vramfit/trainer/profile.h"

static const char usage[] =
	"usage: vramfit check RUN_DIR [--trainer-dir DIR] [--trainer-validate] [--no-python] [--trainer NAME]\n"
	"                     [--json]\n"
	"       vramfit check --config FILE [--trainer-dir DIR] [--trainer-validate] [--no-python]\n"
	"                     [--trainer NAME] [--json]\n"
	"\n"
	"Check a run's config.yaml (as written by `vramfit plan`) before launching\n"
	"the trainer:\n"
	"  - model.model_path is an existing file, model.text_encoder_path an existing\n"
	"    directory, neither a URL; data.preprocessed_data_root exists (or is\n"
	"    reported as pending preprocessing, which is not a failure)\n"
	"  - validation.video_dims: width and height multiples of 32, frames % 8 == 1\n"
	"  - at least one of video and audio is generated (training_strategy.*.is_generated)\n"
	"  - a LoRA run has its lora block; full training has no quantization\n"
	"  - every key is a field of the trainer's own schema, read from the checkout's\n"
	"    src/ltx_trainer/config.py (pydantic models: nested models, Literal values,\n"
	"    None, lists, tuples, ge/gt/le/lt bounds, discriminated unions; the trainer\n"
	"    forbids extra keys), with a value of the field's type; what vramfit's\n"
	"    reader does not understand is \"not checked\", never a failure\n"
	"  - where the machine's python3 has pydantic 2 and PyYAML (it often has before\n"
	"    the trainer's own environment exists), the trainer's config class itself\n"
	"    judges keys and values instead of vramfit's reader: the checkout's config\n"
	"    module is imported with its heavy imports (torch, diffusers, ...) stubbed,\n"
	"    the file loaded with yaml.safe_load and validated, in a supervised child\n"
	"    (a timeout, memory and output limits); its validators run, so what the\n"
	"    reader calls \"not checked: <validator>\" gets the trainer's verdict. The\n"
	"    output says which answered: \"checked by the trainer's config class ...\"\n"
	"    or \"checked statically\" (with why python3 did not answer)\n"
	"  - the data directories the training strategy reads, and validation media\n"
	"    (pending until preprocessing)\n"
	"  - drift: the trainer's commit or version is named, and a key vramfit's\n"
	"    profile uses that the schema no longer has is reported\n"
	"  - every key is known to the trainer profile's schema (the trainer forbids\n"
	"    extra keys) and holds an allowed value (optimizer, quantization, mixed\n"
	"    precision, training mode, ...)\n"
	"  - RUN_DIR/launch.sbatch, when `vramfit plan --slurm` wrote one: #SBATCH\n"
	"    --nodes, --gres=gpu:N, --time (pending when absent), --output into\n"
	"    RUN_DIR/logs/, RUN_DIR and TRAINER_DIR it names exist, one launcher per\n"
	"    node via srun with the rank from $SLURM_NODEID and the main address from\n"
	"    $SLURM_JOB_NODELIST (lines: RUN_DIR/launch.sbatch:LINE: sbatch: RULE)\n"
	"Each failure is one line: FILE:LINE: KEY: RULE.\n";

struct check_args {
	const char *config, *trainer, *trainer_dir;
	bool json, validate, no_python;
};

#define OPT_T struct check_args
static const struct vf_option options[] = {
	OPT_FILE("config", "FILE", config, "check this config file instead of RUN_DIR/config.yaml"),
	OPT_DIR("trainer-dir", "DIR", trainer_dir,
		"the trainer checkout whose schema is read (default\n"
		"$LTX_TRAINER_DIR, ./packages/ltx-trainer, then .)"),
	OPT_BOOL("trainer-validate", validate,
		 "also run the trainer's own validation (its config class\n"
		 "on the file) with the checkout's environment (.venv), in a\n"
		 "supervised child with a timeout; its errors are reported on\n"
		 "the keys they name. Without an environment: \"not checked\""),
	OPT_BOOL("no-python", no_python,
		 "never run python3: the static reader answers alone (also\n"
		 "VRAMFIT_NO_PYTHON=1; VRAMFIT_PYTHON=PATH names the interpreter)"),
	OPT_STRING("trainer", "NAME", trainer, "trainer profile (default ltx2)"),
	OPT_BOOL("json", json,
		 "{\"config\", \"ok\", \"failures\", \"pending\", \"unchecked\",\n"
		 "\"trainer\": {...}, \"items\": [{\"level\", \"key\", \"line\", \"rule\"}]}"),
	OPT_END(),
};
#undef OPT_T

static const char tail[] =
	"Exit status: 0 every check passed (pending items allowed), 1 a check failed\n"
	"or the config could not be read, 2 usage.\n";

static int run(int argc, char **argv)
{
	struct check_args a = {.trainer = VF_PROFILE_DEFAULT};
	int nargs, prc = vf_opt_parse("check", options, &a, argc, argv, 0, &nargs);
	if (prc >= 0)
		return prc;
	if (nargs > 1)
		return vf_cli_usage("check", "one RUN_DIR only");
	const char *dir = nargs ? argv[0] : NULL, *config = a.config, *trainer = a.trainer,
		   *tdir = a.trainer_dir;
	bool json = a.json, validate = a.validate, no_python = a.no_python;
	if (!dir == !config)
		return vf_cli_usage("check", "expected RUN_DIR or --config FILE");
	struct vf_error err = {0};
	struct vf_check c;
	vf_check_init(&c);
	c.no_python = no_python;
	vf_status st;
	char path[4096];
	if (config) {
		snprintf(path, sizeof path, "%s", config);
		struct vf_yamldoc *doc = NULL;
		st = vf_yamldoc_load_file(config, &doc, &err);
		if (st == VF_OK)
			st = vf_check_config(doc, trainer, tdir, &c, &err);
		vf_yamldoc_free(doc);
	} else {
		st = vf_check_run(dir, trainer, tdir, &c, &err);
		snprintf(path, sizeof path, "%s", c.config);
	}
	if (st == VF_OK && validate) {
		struct vf_yamldoc *doc = NULL;
		st = vf_yamldoc_load_file(path, &doc, &err);
		if (st == VF_OK)
			st = vf_check_trainer_validate(path, doc, trainer, tdir, &c, &err);
		vf_yamldoc_free(doc);
	}
	if (st != VF_OK) {
		vf_check_release(&c);
		return vf_cli_fail_err(&err);
	}
	if (json) {
		cJSON *o = vf_check_to_json(&c);
		vf_cli_print_json(o);
		cJSON_Delete(o);
	} else {
		if (c.trainer_dir[0])
			printf("%s: trainer %s (%s)%s%s%s\n", c.config, c.trainer_dir, c.trainer_version,
			       c.schema_file[0] ? ", schema from " : "", c.schema_file,
			       c.trainer_validated ? ", validated by the trainer itself" : "");
		if (c.checked_by[0])
			printf("%s: keys and values %s%s%s%s\n", c.config, c.checked_by,
			       c.python_note[0] ? " (python3: " : "", c.python_note, c.python_note[0] ? ")" : "");
		for (size_t i = 0; i < c.n; i++) {
			const struct vf_check_item *it = &c.items[i];
			char line[32] = "";
			if (it->line)
				snprintf(line, sizeof line, ":%zu", it->line);
			char file[1100];
			if (strcmp(it->key, "launch.sbatch") == 0 && dir) /* the run's Slurm script */
				snprintf(file, sizeof file, "%s/launch.sbatch", dir);
			else
				snprintf(file, sizeof file, "%s", c.config);
			printf("%s%s: %s%s: %s\n", file, line, it->level == VF_CHECK_PENDING ? "pending: " : "",
			       strcmp(it->key, "launch.sbatch") == 0 ? "sbatch" : it->key, it->rule);
		}
		if (c.failures == 0)
			printf("%s: ok (%zu pending, %zu not checked)\n", c.config, c.pending, c.unchecked);
		else
			fprintf(stderr, "vramfit: error: %s: %zu check%s failed\n", c.config, c.failures,
				c.failures == 1 ? "" : "s");
	}
	int rc = c.failures ? VF_EXIT_FAIL : VF_EXIT_OK;
	vf_check_release(&c);
	return rc;
}

const struct vf_cli_command vf_cmd_check = {
	.name = "check",
	.summary = "self-check a run's trainer config before launch",
	.usage = usage,
	.options = options,
	.tail = tail,
	.run = run,
};
