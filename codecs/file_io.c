/* SPDX-License-Identifier: MIT */
/* The public face of binref file I/O: names of the choices and what AUTO
 * uses in this process. */
#include <string.h>

#include <tessera/payload.h>

#include "binref_file.h"

TSR_API const char *tsr_file_io_name(tsr_file_io io) {
    switch (io) {
    case TSR_FILE_IO_AUTO: return "auto";
    case TSR_FILE_IO_URING: return "io_uring";
    case TSR_FILE_IO_POSIX: return "posix";
    }
    return NULL;
}

TSR_API int tsr_file_io_from_name(const char *name) {
    if (name == NULL) return -1;
    if (strcmp(name, "auto") == 0) return TSR_FILE_IO_AUTO;
    if (strcmp(name, "io_uring") == 0 || strcmp(name, "uring") == 0) return TSR_FILE_IO_URING;
    if (strcmp(name, "posix") == 0) return TSR_FILE_IO_POSIX;
    return -1;
}

TSR_API const char *tsr_file_io_backend(const char **why_not) {
    return binref_io_name(binref_io_probe(why_not));
}
