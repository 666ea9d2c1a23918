/* SPDX-License-Identifier: MIT */
/*
 * The files `tessera init` writes, compiled in from init_templates/ by
 * embed_templates.cmake (so the command needs no data files at run time).
 * init_templates/KIND/PATH is written for --kind KIND, init_templates/common/PATH
 * for every kind; "{{name}}" in a path or a text becomes the component's name.
 */
#ifndef TESSERA_CLI_INIT_TEMPLATES_H
#define TESSERA_CLI_INIT_TEMPLATES_H

#include <stddef.h>

typedef struct init_template {
    const char *kind; /* "plugin", "python", "manifest" or "common" */
    const char *path; /* relative to the new folder, '/'-separated */
    const char *text; /* NUL-terminated */
    size_t len;
} init_template;

extern const init_template init_templates[];
extern const size_t init_template_count;

#endif /* TESSERA_CLI_INIT_TEMPLATES_H */
