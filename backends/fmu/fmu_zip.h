/* SPDX-License-Identifier: MIT */
/* libzip, loaded when the first FMU archive is unpacked rather than
 * linked: libtessera is in every worker process and every Python host,
 * and libzip brings libcrypto (some 4 MB, with relocations every process
 * pays for in private memory) which a process that opens no FMU should
 * not carry. Built against libzip's header; the library is libzip.so.4. */
#ifndef TESSERA_BACKENDS_FMU_ZIP_H
#define TESSERA_BACKENDS_FMU_ZIP_H

#include <stddef.h>

#include <zip.h>

typedef struct fmu_zip_api {
    __typeof__(zip_open) *open;
    __typeof__(zip_discard) *discard;
    __typeof__(zip_strerror) *strerror;
    __typeof__(zip_error_init_with_code) *error_init_with_code;
    __typeof__(zip_error_strerror) *error_strerror;
    __typeof__(zip_error_fini) *error_fini;
    __typeof__(zip_get_num_entries) *get_num_entries;
    __typeof__(zip_get_name) *get_name;
    __typeof__(zip_stat_init) *stat_init;
    __typeof__(zip_stat_index) *stat_index;
    __typeof__(zip_file_get_external_attributes) *file_get_external_attributes;
    __typeof__(zip_fopen_index) *fopen_index;
    __typeof__(zip_fread) *fread;
    __typeof__(zip_fclose) *fclose;
    __typeof__(zip_file_get_error) *file_get_error;
} fmu_zip_api;

/* libzip's functions, loaded at the first call (thread-safe; kept loaded).
 * NULL with the cause in why when it cannot be loaded. */
const fmu_zip_api *fmu_zip_load(char *why, size_t n);

#endif
