/* SPDX-License-Identifier: MIT */
/*
 * `tessera init`: writing the templates of a kind (init_templates.h) into
 * a new folder, all or nothing.
 *   cmd_init.c     the command: its arguments, the name, the checks, help
 *   init_write.c   the files written, never over anything, undone on failure
 */
#ifndef TESSERA_CLI_INIT_WRITE_H
#define TESSERA_CLI_INIT_WRITE_H

/* Write every template of kind (and the common ones) into dir, which must
 * not exist or be an empty folder, with "{{name}}" replaced by name; its
 * missing parents are made. Once all are written, each path goes to
 * cli_out. On a
 * failure what was written and made is removed again, the cause printed,
 * and CLI_OUTPUT returned; else CLI_OK. */
int init_write(const char *dir, const char *kind, const char *name);

#endif /* TESSERA_CLI_INIT_WRITE_H */
