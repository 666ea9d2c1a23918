/* SPDX-License-Identifier: MIT */
#include "payload_options.h"

#include <stddef.h>
#include <string.h>

binref_io binref_io_of(tsr_file_io io) {
    switch (io) {
    case TSR_FILE_IO_URING: return BINREF_IO_URING;
    case TSR_FILE_IO_POSIX: return BINREF_IO_POSIX;
    default: return BINREF_IO_AUTO;
    }
}

/* Copy the part of *given that its struct_size covers into *out (zeroed). */
static int copy_sized(const void *given, uint32_t given_size, size_t min, void *out, size_t size,
                      const char *name, const payload_ctx *ctx) {
    memset(out, 0, size);
    if (given == NULL) return 0;
    if (given_size < min)
        return payload_fail(ctx, TSR_E_ARGUMENT, NULL,
                                "%s.struct_size is %u; set it to sizeof the struct", name,
                                given_size);
    memcpy(out, given, given_size < size ? given_size : size);
    return 0;
}

int output_settings(const tsr_output_options *given, array_out *out,
                        binref_sink *sink, const payload_ctx *ctx) {
    tsr_output_options o;
    size_t min = offsetof(tsr_output_options, encoding) + sizeof o.encoding;
    int rc = copy_sized(given, given ? given->struct_size : 0, min, &o, sizeof o,
                        "tsr_output_options", ctx);
    if (rc != 0) return rc;
    if (tsr_encoding_name(o.encoding) == NULL)
        return payload_fail(ctx, TSR_E_ARGUMENT, NULL, "unknown encoding %d", (int)o.encoding);
    if (tsr_file_io_name(o.io) == NULL)
        return payload_fail(ctx, TSR_E_ARGUMENT, NULL, "unknown file I/O choice %d", (int)o.io);
    if (o.file_mode < 0 || o.file_mode > 07777)
        return payload_fail(ctx, TSR_E_ARGUMENT, NULL, "file_mode %o is not a file mode",
                                (unsigned)o.file_mode);
    *out = (array_out){.enc = o.encoding, .lz4 = o.lz4 != 0, .checksum = o.checksum != 0,
                           .sink = o.encoding == TSR_ENCODING_BINREF ? sink : NULL};
    /* json keeps neither, as Tesseract's json encoding does. */
    if (o.encoding == TSR_ENCODING_JSON) out->lz4 = out->checksum = false;
    *sink = (binref_sink){.dir = o.output_dir,
                              .max_file_bytes = o.max_file_bytes ? o.max_file_bytes
                                                                 : BINREF_DEFAULT_MAX_FILE,
                              .mode = o.file_mode ? o.file_mode : 0600,
                              .io = binref_io_of(o.io)};
    if (sink->max_file_bytes == UINT64_MAX) sink->max_file_bytes = 0; /* binref_writer: none */
    return 0;
}

int input_settings(const tsr_input_options *given, tsr_input_options *out,
                       const payload_ctx *ctx) {
    size_t min = offsetof(tsr_input_options, base_dir) + sizeof out->base_dir;
    int rc = copy_sized(given, given ? given->struct_size : 0, min, out, sizeof *out,
                        "tsr_input_options", ctx);
    if (rc != 0) return rc;
    if (tsr_file_io_name(out->io) == NULL)
        return payload_fail(ctx, TSR_E_ARGUMENT, NULL, "unknown file I/O choice %d",
                                (int)out->io);
    return 0;
}
