/* Manifest components: a legacy routine in a shared library, described by
 * a JSON manifest and called through libffi. What the rest of the core
 * sees of them; docs/manifests.md states the format. */
#ifndef TESSERA_CORE_MANIFEST_H
#define TESSERA_CORE_MANIFEST_H

#include "core/internal.h"

struct manifest;

/* 1 when path names a manifest rather than a plugin: it ends in ".json",
 * or it is a file whose first non-blank byte is '{' (a shared object
 * starts with "\177ELF"). */
int manifest_detect(const char *path);

/* Read and check the manifest at c->path, load the library it names (per
 * c->mode), prepare each endpoint's call and give c a descriptor through
 * descriptor_load, like any plugin. Sets c->manifest, c->dl and c->state;
 * on failure err names the manifest's entry and the cause, and whatever
 * was set is released by manifest_free and dlclose as usual. */
int manifest_open(tsr_component *c, tsr_error *err);

void manifest_free(struct manifest *m);

#endif
