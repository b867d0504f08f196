/* models-internal.h - the model catalog's entries before their
 * architectures are read (models.c), for the name matching of
 * model-names.c, which reads only ids, names, aliases and Hub ids. Not
 * installed. */
#ifndef VRAMFIT_MODELS_INTERNAL_H
#define VRAMFIT_MODELS_INTERNAL_H

#include "vramfit/model/models.h"

/* The entry with this id or alias (case-insensitive), its architecture
 * perhaps not read yet (vf_models_ready), or NULL (also when the catalog
 * fails to load). Borrowed. */
const struct vf_model_entry *vf__models_locate(const char *id);

/* Every entry, architectures perhaps not read yet; NULL and *n 0 when the
 * catalog fails to load. Borrowed. */
const struct vf_model_entry *vf__models_entries(size_t *n);

#endif
