/* plan_commands.c - the commands of a plan for people who run it by hand
 * (plan_internal.h): the trainer's preprocessing script on the run's
 * dataset with the plan's resolution buckets, the sanity sample, the
 * autotune, and the launch (one GPU; several by the trainer's rules; Slurm
 * through launch.sbatch). The command lines come from the profile
 * (configs.json "preprocess", "launch"); every path and value put into
 * them is shell-quoted (shquote.h) and plan.md's text escaped (md.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "plan_internal.h"
#include "vramfit/base/json.h"
#include "vramfit/base/md.h"
#include "vramfit/base/shquote.h"

/* tmpl with each {name} of pairs replaced by its (already quoted) value,
 * appended to b. */
static void fill(struct vf_buf *b, const char *tmpl, const char *const *pairs)
{
	for (const char *s = tmpl; *s;) {
		size_t l = 0;
		const char *v = NULL;
		if (*s == '{')
			for (size_t i = 0; pairs[i]; i += 2) {
				l = strlen(pairs[i]);
				if (strncmp(s + 1, pairs[i], l) == 0 && s[1 + l] == '}') {
					v = pairs[i + 1];
					break;
				}
			}
		if (v) {
			vf_buf_append(b, v, strlen(v), NULL);
			s += l + 2;
		} else {
			vf_buf_append(b, s++, 1, NULL);
		}
	}
}

/* Quote s into the next slot of q. */
#define Q_LEN (VF_PLAN_PATH * 4 + 8)
static const char *quoted(char q[][Q_LEN], int *n, const char *s)
{
	vf_shell_quote_to(q[*n], Q_LEN, s);
	return q[(*n)++];
}

vf_status vf__plan_preprocess(struct vf_plan *p, const cJSON *cfg, const char *buckets, const char *trigger,
			      struct vf_error *err)
{
	p->preprocess[0] = p->preprocess_line[0] = p->preprocess_dataset[0] = '\0';
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(cfg, "preprocess");
	const char *tmpl = vf_json_get_str(pre, p->gpu_count > 1 ? "multi_gpu" : "single_gpu");
	if (!tmpl)
		return VF_OK;
	const char *dataset = vf_json_get_str(pre, "dataset");
	snprintf(p->preprocess_dataset, sizeof p->preprocess_dataset, "%s/%s", p->run_dir,
		 dataset ? dataset : "dataset/dataset.json");
	if (buckets && buckets[0])
		snprintf(p->preprocess_buckets, sizeof p->preprocess_buckets, "%s", buckets);
	else
		snprintf(p->preprocess_buckets, sizeof p->preprocess_buckets, "%dx%dx%d", p->train_dims[0],
			 p->train_dims[1], p->train_dims[2]);
	char q[8][Q_LEN];
	int nq = 0;
	char n[16];
	snprintf(n, sizeof n, "%d", p->gpu_count);
	const char *pairs[] = {"dataset", quoted(q, &nq, p->preprocess_dataset),
			       "buckets", quoted(q, &nq, p->preprocess_buckets),
			       "model", quoted(q, &nq, p->model),
			       "text_encoder", quoted(q, &nq, p->text_encoder),
			       "video_vae", quoted(q, &nq, p->video_vae),
			       "audio_vae", quoted(q, &nq, p->audio_vae),
			       "trigger", quoted(q, &nq, trigger ? trigger : ""),
			       "num_gpus", n,
			       NULL};
	struct vf_buf b;
	vf_buf_init(&b, sizeof p->preprocess);
	fill(&b, tmpl, pairs);
	const char *split = vf_json_get_str(pre, "split_pack");
	if (p->split_pack && split)
		fill(&b, split, pairs);
	const char *trig = vf_json_get_str(pre, "trigger");
	if (trigger && trigger[0] && trig)
		fill(&b, trig, pairs);
	char cwd[Q_LEN];
	vf_shell_quote_to(cwd, sizeof cwd, p->trainer_dir);
	bool fits = b.data && b.len < sizeof p->preprocess;
	if (fits) {
		memcpy(p->preprocess, b.data, b.len + 1);
		fits = (size_t)snprintf(p->preprocess_line, sizeof p->preprocess_line, "cd %s && %s", cwd,
					p->preprocess) < sizeof p->preprocess_line;
	}
	vf_buf_release(&b);
	if (!fits) {
		p->preprocess[0] = p->preprocess_line[0] = '\0';
		return vf_error_set(err, VF_ERR, "%s: the preprocessing command is longer than %zu bytes once its "
				    "paths are quoted", p->preprocess_dataset, sizeof p->preprocess);
	}
	return VF_OK;
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The launch, in words: which of the trainer's rules it follows. */
static void md_launch_words(struct vf_buf *b, const struct vf_plan *p, const cJSON *launch)
{
	if (p->gpu_count <= 1) {
		vf_md_printf(b, "Train on one GPU:\n\n");
		return;
	}
	if (strcmp(p->training_mode, "full") == 0) {
		const char *fsdp = vf_json_get_str(launch, "fsdp_config");
		vf_md_printf(b, "Train on %d GPUs of one node: a full fine-tune shards the model with FSDP "
			     "through `accelerate launch` and the checkout's `%s`:\n\n",
			     p->gpu_count, fsdp ? fsdp : "(the profile names no FSDP config)");
	} else {
		vf_md_printf(b, "Train on %d GPUs of one node: a LoRA runs data-parallel (DDP) through plain "
			     "`accelerate launch`, one process per GPU:\n\n", p->gpu_count);
	}
}

void vf__plan_md_commands(struct vf_buf *b, const struct vf_plan *p, const cJSON *cfg)
{
	vf_md_printf(b, "\n### Run by Hand\n\n");
	vf_md_printf(b, "The whole flow can be run by hand: paste these commands in this order (each path in "
		     "them is quoted for a POSIX shell). Output to a file: the trainer's progress bars are off. "
		     "`vramfit run %s` runs the same steps, supervised and resumable.\n\n", p->run_dir);
	char log[VF_PLAN_PATH + 32], qlog[Q_LEN], qrun[Q_LEN];
	vf_shell_quote_to(qrun, sizeof qrun, p->run_dir);
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(cfg, "preprocess");
	if (p->preprocess[0]) {
		const char *script = vf_json_get_str(pre, "script");
		char path[VF_PLAN_PATH * 2];
		snprintf(path, sizeof path, "%s/%s", p->trainer_dir, script ? script : "");
		snprintf(log, sizeof log, "%s/logs/preprocess.log", p->run_dir);
		vf_shell_quote_to(qlog, sizeof qlog, log);
		vf_md_printf(b, "1. Preprocess the dataset: the dataset file `%s` (CSV, JSON or JSONL with "
			     "`caption` and `video` columns; paths in it relative to it) is encoded with the "
			     "resolution buckets `%s` into the `.precomputed` directory beside it%s:\n\n"
			     "   ```\n   %s > %s 2>&1\n   ```\n\n",
			     p->preprocess_dataset, p->preprocess_buckets,
			     p->gpu_count > 1 ? ", one process per GPU" : "", p->preprocess_line, qlog);
		if (script && !is_file(path))
			vf_md_printf(b, "   The script `%s` is not in the trainer directory `%s`: check the "
				     "checkout before running this.\n\n", script, p->trainer_dir);
		/* the trainer writes .precomputed beside the dataset file: the
		 * sample's dataset file goes in the folder above the sample's */
		char above[sizeof p->sample_dir];
		snprintf(above, sizeof above, "%s", p->sample_dir);
		char *slash = strrchr(above, '/');
		if (slash)
			*slash = '\0';
		vf_md_printf(b, "   The sanity check's sample: copy one row of the dataset file into `%s/%s/` "
			     "under the same file name (its media paths adjusted) and run the same command on "
			     "that file; it writes `%s/%s`.\n\n", p->run_dir, slash ? above : ".", p->run_dir,
			     p->sample_dir);
	} else {
		vf_md_printf(b, "1. Preprocess the dataset with the trainer's own script (the `%s` profile names "
			     "no preprocessing command, so none is printed here).\n\n", p->trainer);
	}
	vf_md_printf(b, "2. Sanity check and autotune (above):\n\n   ```\n   vramfit tune %s\n   ```\n\n", qrun);
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(cfg, "launch");
	snprintf(log, sizeof log, "%s/logs/train.log", p->run_dir);
	vf_shell_quote_to(qlog, sizeof qlog, log);
	vf_md_printf(b, "3. ");
	md_launch_words(b, p, launch);
	vf_md_printf(b, "   ```\n   %s > %s 2>&1\n   ```\n\n", p->launch_line, qlog);
	if (p->gpu_count > 1)
		vf_md_printf(b, "   The effective batch stays %lld: `gradient_accumulation_steps` is set for %d "
			     "GPUs. For another GPU count, plan again (`--gpu ID:N`) rather than edit this "
			     "command.\n\n", (long long)p->effective_batch, p->gpu_count);
	else
		vf_md_printf(b, "   For several GPUs, plan again with their count (`--gpu ID:N`): the command "
			     "becomes `accelerate launch` (DDP for a LoRA, FSDP for a full fine-tune) and the "
			     "accumulation keeps the effective batch of %lld.\n\n", (long long)p->effective_batch);
	char sb[VF_PLAN_PATH + 32], qsb[Q_LEN];
	snprintf(sb, sizeof sb, "%s/launch.sbatch", p->run_dir);
	vf_shell_quote_to(qsb, sizeof qsb, sb);
	vf_md_printf(b, "   On a Slurm cluster: `vramfit plan --slurm` writes `%s` (one launcher per node through "
		     "`srun`); submit it with:\n\n   ```\n   sbatch %s\n   ```\n\n", sb, qsb);
}
