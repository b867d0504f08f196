/* cmd-check.c - `vramfit check RUN_DIR`: the self-check of a run's
 * config.yaml before any launch (lib/trainer/check.c); one line per failure naming
 * the key and the rule. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "vramfit/trainer/check.h"
#include "vramfit/trainer/profile.h"

static const char usage[] =
	"usage: vramfit check RUN_DIR [--trainer NAME] [--json]\n"
	"       vramfit check --config FILE [--trainer NAME] [--json]\n"
	"\n"
	"Check a run's config.yaml (as written by `vramfit plan`) before launching\n"
	"the trainer:\n"
	"  - model.model_path is an existing file, model.text_encoder_path an existing\n"
	"    directory, neither a URL; data.preprocessed_data_root exists (or is\n"
	"    reported as pending preprocessing, which is not a failure)\n"
	"  - validation.video_dims: width and height multiples of 32, frames % 8 == 1\n"
	"  - at least one of video and audio is generated (training_strategy.*.is_generated)\n"
	"  - a LoRA run has its lora block; full training has no quantization\n"
	"  - every key is known to the trainer profile's schema (the trainer forbids\n"
	"    extra keys) and holds an allowed value (optimizer, quantization, mixed\n"
	"    precision, training mode, ...)\n"
	"  - RUN_DIR/launch.sbatch, when `vramfit plan --slurm` wrote one: #SBATCH\n"
	"    --nodes, --gres=gpu:N, --time (pending when absent), --output into\n"
	"    RUN_DIR/logs/, RUN_DIR and TRAINER_DIR it names exist, one launcher per\n"
	"    node via srun with the rank from $SLURM_NODEID and the main address from\n"
	"    $SLURM_JOB_NODELIST (lines: RUN_DIR/launch.sbatch:LINE: sbatch: RULE)\n"
	"Each failure is one line: FILE:LINE: KEY: RULE.\n"
	"\n"
	"Options:\n"
	"  --config FILE   check this config file instead of RUN_DIR/config.yaml\n"
	"  --trainer NAME  trainer profile (default ltx2)\n"
	"  --json          {\"config\",\"ok\",\"failures\",\"pending\",\"items\":[{\"level\",\"key\",\"line\",\"rule\"}]}\n"
	"\n"
	"Exit status: 0 every check passed (pending items allowed), 1 a check failed\n"
	"or the config could not be read, 2 usage.\n";

static int run(int argc, char **argv)
{
	const char *dir = NULL, *config = NULL, *trainer = VF_PROFILE_DEFAULT;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "--trainer") == 0) {
			if (i + 1 >= argc)
				return vf_cli_usage("check", "%s needs a value", argv[i]);
			if (argv[i][2] == 'c')
				config = argv[++i];
			else
				trainer = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return vf_cli_usage("check", "unknown option '%s'", argv[i]);
		} else if (!dir) {
			dir = argv[i];
		} else {
			return vf_cli_usage("check", "one RUN_DIR only");
		}
	}
	if (!dir == !config)
		return vf_cli_usage("check", "expected RUN_DIR or --config FILE");
	struct vf_error err = {0};
	struct vf_check c;
	vf_check_init(&c);
	vf_status st;
	if (config) {
		struct vf_yamldoc *doc = NULL;
		st = vf_yamldoc_load_file(config, &doc, &err);
		if (st == VF_OK)
			st = vf_check_config(doc, trainer, &c, &err);
		vf_yamldoc_free(doc);
	} else {
		st = vf_check_run(dir, trainer, &c, &err);
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
			printf("%s%s: %s%s: %s\n", file, line, it->level == VF_CHECK_FAIL ? "" : "pending: ",
			       strcmp(it->key, "launch.sbatch") == 0 ? "sbatch" : it->key, it->rule);
		}
		if (c.failures == 0)
			printf("%s: ok (%zu pending)\n", c.config, c.pending);
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
	.run = run,
};
