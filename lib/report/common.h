/* common.h - helpers shared by the report renderers (lib/report/): reading
 * numbers out of the data object and formatting them for people. */
#ifndef VRAMFIT_REPORT_COMMON_H
#define VRAMFIT_REPORT_COMMON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vramfit/report/html.h"
#include "vramfit/report/plot.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* obj[key] as a number; NAN when absent or not a number. */
double vf__num(const cJSON *obj, const char *key);
/* obj[key] as a string; dflt when absent. */
const char *vf__str(const cJSON *obj, const char *key, const char *dflt);
/* "3.4 GiB" (one decimal; two under 10 GiB... as needed); "-" for NAN. */
char *vf__gib(char *out, size_t n, double bytes);
/* "0.412 s", "12.3 s", "-" for NAN or negative. */
char *vf__secs(char *out, size_t n, double s);
/* "12,345" (thousands separated, rounded); "-" for NAN. */
char *vf__count(char *out, size_t n, double v);
/* A GPU's short name: "NVIDIA GeForce RTX 4090" -> "RTX 4090". */
char *vf__gpu_short(const char *name, char *out, size_t n);
/* The renderers (report.c dispatches on "report"). */
void vf__report_estimate(struct vf_w *w, const cJSON *d);
void vf__report_fit(struct vf_w *w, const cJSON *d);
void vf__report_run(struct vf_w *w, const cJSON *d);
void vf__report_history(struct vf_w *w, const cJSON *d);
struct vf_trial_patterns;
void vf__report_plan(struct vf_w *w, const cJSON *d);
/* The training of a vramfit run (report_train.c): its "training" data from
 * RUN/run.json and the train logs (NULL when the run has none), and its
 * section of the run page. */
cJSON *vf__training_json(const char *run, const struct vf_trial_patterns *pat);
void vf__report_training(struct vf_w *w, const cJSON *training);
/* The phase chart + table shared by estimate and plan: phases (the
 * "phases" array), capacity lines for gpus (array of {name|id,
 * vram_bytes}). */
void vf__phase_figure(struct vf_w *w, const cJSON *phases, const cJSON *gpus, const char *title);
/* --mode infer: KV cache and users against the context (report_infer.c). */
void vf__infer_figures(struct vf_w *w, const cJSON *d);
/* The estimate page of a serving engine, "vllm" or "llamacpp" (report_engine.c). */
void vf__report_estimate_engine(struct vf_w *w, const cJSON *d, const char *engine);
/* A JSON array of strings as a plain bulleted list, each escaped. */
void vf__string_list(struct vf_w *w, const cJSON *arr);
/* A short label for a memory term key ("optimizer_temp" -> "optimizer
 * temporaries") and its palette colour. */
const char *vf__term_label(const char *key);
int vf__term_color(const char *key);

#endif
