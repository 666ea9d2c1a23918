/* SPDX-License-Identifier: MIT */
/*
 * The public tsr_output_options / tsr_input_options read into complete
 * settings: struct_size honoured, zeros replaced by defaults, values
 * checked.
 */
#ifndef TESSERA_CODECS_OPTIONS_H
#define TESSERA_CODECS_OPTIONS_H

#include <tessera/payload.h>

#include "array_encode.h"
#include "binref_file.h"
#include "payload_error.h"

/* Tesseract's MAX_BINREF_BUFFER_SIZE. */
#define BINREF_DEFAULT_MAX_FILE ((uint64_t)100 * 1024 * 1024)

/* given may be NULL. Fills out (array settings) and sink (binref files). */
int output_settings(const tsr_output_options *given, array_out *out,
                        binref_sink *sink, const payload_ctx *ctx);

/* given may be NULL. */
int input_settings(const tsr_input_options *given, tsr_input_options *out,
                       const payload_ctx *ctx);

binref_io binref_io_of(tsr_file_io io);

#endif /* TESSERA_CODECS_OPTIONS_H */
