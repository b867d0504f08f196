/* data.h - the catalogs and trainer profiles embedded from data/ at build
 * time, with user overrides.
 *
 * vf_data_load_json("gpus.json", ...) reads, first found:
 *   $VRAMFIT_DATA_DIR/gpus.json, then $XDG_CONFIG_HOME/vramfit/gpus.json
 *   (default ~/.config/vramfit/gpus.json), then the embedded copy. */
#ifndef VRAMFIT_DATA_H
#define VRAMFIT_DATA_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vramfit/base/buf.h"
#include "vramfit/base/error.h"

/* The embedded bytes of data/<name>, or NULL. Borrowed; static. */
const unsigned char *vf_data_embedded(const char *name, size_t *len);
/* Iterate the embedded names: i = 0.. until NULL. */
const char *vf_data_embedded_name(size_t i);
/* The tree image (vf__json_doc_from_image) of the embedded data/<name>, a
 * .json file, or NULL; vf_data_load_doc reads the embedded copy from it.
 * Borrowed; static. For the tests and tests/fuzz. */
const unsigned char *vf__data_embedded_image(const char *name, size_t *len);

/* The override directories, in order: $VRAMFIT_DATA_DIR, then
 * $XDG_CONFIG_HOME/vramfit (default ~/.config/vramfit). Returns how many. */
size_t vf_data_override_dirs(char dirs[2][4096]);

/* Load data/<name> as JSON, honouring the overrides above. *source is set to
 * the path read or "embedded" (borrowed static string or caller's env).
 * Caller owns *out; cJSON_Delete(). */
vf_status vf_data_load_json(const char *name, cJSON **out, char *source, size_t source_len,
			    struct vf_error *err);

/* The same, as a read-only tree in an arena (vf_json_doc_parse): for the
 * catalogs read at start. Caller owns *out; vf_json_doc_free(). */
struct vf_json_doc;
vf_status vf_data_load_doc(const char *name, struct vf_json_doc **out, char *source,
			   size_t source_len, struct vf_error *err);

/* Append the bytes of data/<name> (any file: a script the tool runs), with
 * the same overrides, to out; at most cap bytes (VF_ERR when larger).
 * VF_ENOTFOUND when neither an override nor the embedded copy exists. */
vf_status vf_data_load_text(const char *name, struct vf_buf *out, size_t cap, struct vf_error *err);

#endif
