/* SPDX-License-Identifier: MIT */
/*
 * Tessera payloads: Tesseract's JSON requests, responses and encoded arrays.
 *
 * A request is the JSON object Tesseract's endpoints take:
 *
 *   apply, abstract_eval  {"inputs": {...}}
 *   jacobian              {"inputs": {...}, "jac_inputs": [...], "jac_outputs": [...]}
 *   jvp                   {"inputs": {...}, "jvp_inputs": [...], "jvp_outputs": [...],
 *                          "tangent_vector": {"<input>": array, ...}}
 *   vjp                   {"inputs": {...}, "vjp_inputs": [...], "vjp_outputs": [...],
 *                          "cotangent_vector": {"<output>": array, ...}}
 *   hvp                   {"inputs": {...}, "hvp_inputs": [...], "hvp_outputs": [...],
 *                          "cotangent_vector": {"<output>": array, ...},
 *                          "tangent_vector": {"<input>": array, ...}}
 *
 * Inputs nest as JSON objects following the dots of the field names
 * ({"mesh": {"nodes": ...}} is field "mesh.nodes"); the keys of the
 * wrt lists and of tangent_vector / cotangent_vector are the dotted names.
 * An array is either an encoded array
 *
 *   {"object_type": "array", "shape": [2, 3], "dtype": "float64",
 *    "data": {"buffer": ..., "encoding": "json" | "base64" | "binref",
 *             "compression": "lz4", "checksum": "xxh3:<16 hex digits>"}}
 *
 * (json: the values as a nested or flat list in C order, or a bare number
 * for a single element; base64: the raw little-endian C-order bytes;
 * binref: "<path>:<offset>" where those bytes lie in a file, or
 * "<path>:<offset>:<size>" with the stored size when compressed), or a
 * plain JSON number, boolean or nested list that takes the field's dtype.
 * "compression" (base64 and binref only; absent or null: none) stores
 * the bytes as one lz4 frame. "checksum" (base64 and binref only,
 * optional) is the XXH3-64 of the array's raw bytes before compression;
 * it is verified on read. Tesseract writes no checksum and its readers
 * (tesseract-core 1.15) refuse unknown keys, so a payload for Tesseract
 * must be written without one.
 *
 * Binref paths that are relative resolve against the input directory
 * (tsr_input_options.base_dir; default the current directory, as
 * Tesseract's --input-path). Unless allow_escape is set, the file must
 * lie inside that directory once '..' and symlinks are followed, so an
 * absolute path elsewhere, '../x' or a symlink out is refused. A missing
 * file, an offset past its end, a file too short for the array, a size
 * that disagrees with shape x dtype, a bad lz4 frame and a checksum
 * mismatch are errors naming the array's field.
 * For abstract_eval an array may also be given as {"shape": [...],
 * "dtype": "..."}. An array whose dtype differs from the field's is
 * converted when numpy's "same_kind" rule allows it (bool < integers <
 * floats < complex) and every value fits; otherwise it is refused with
 * TSR_E_DTYPE naming the element and its value (the rule of the option
 * casting=same_kind, tessera.h). Plain values are first read as numpy
 * reads them (all booleans: bool; any number with a fraction or exponent:
 * float64; else int64), so that 2.0 is no int32 and 1 no bool, as in
 * Tesseract.
 *
 * Numbers in JSON text: a float is written with the fewest digits that
 * read back to the same double (a float32 as the double it widens to, as
 * numpy's tolist() gives it), always with a '.' or an exponent, and read
 * correctly rounded, whatever the locale: a json round trip of an array
 * is exact to the bit. Long numeric lists are read straight from the text
 * into the array (never one JSON value per element) and written straight
 * into the output (figures: bench/README.md, bench_json_arrays).
 *
 * Limits, each refused with a message that says so: complex values have no
 * json form (Tesseract's json encoding has none either; use base64); NaN and
 * infinities are not JSON and cannot be written in json encoding; json
 * buffers cannot be compressed (as in Tesseract); integers beyond the
 * int64 range cannot be read from JSON text (use base64).
 *
 * Responses follow Tesseract's output form:
 *   apply          the outputs object, nested by the dots of the names
 *   abstract_eval  the same, each array as {"shape": [...], "dtype": "..."}
 *   jvp            {"<jvp_output>": array, ...}
 *   vjp            {"<vjp_input>": array, ...}
 *   hvp            {"<hvp_input>": array, ...}
 *   jacobian       {"<jac_output>": {"<jac_input>": array, ...}, ...}
 *
 * Errors: functions return 0 or a negative TSR_E_* code and fill the
 * tsr_error (when not NULL) with a message naming the component, the
 * endpoint, the field path within the payload and the cause, and with the
 * loc of the field at fault ("inputs.mesh.nodes", "jvp_inputs.1"; "" when
 * the fault is not one place, e.g. malformed JSON, which is reported with
 * its line and column). Text returned by these
 * functions is released with tsr_json_free(), array buffers with
 * tsr_array_buffer_free(). Nothing here writes
 * to stdout or keeps global state; distinct objects may be used from
 * distinct threads.
 */
#ifndef TESSERA_PAYLOAD_H
#define TESSERA_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How arrays are written in a response. */
typedef enum tsr_encoding {
    TSR_ENCODING_JSON = 0,   /* values as nested JSON lists ("json") */
    TSR_ENCODING_BASE64 = 1, /* raw little-endian bytes in base64 ("json+base64") */
    TSR_ENCODING_BINREF = 2  /* raw bytes appended to .bin files ("json+binref") */
} tsr_encoding;

/* The name of an encoding.
 * Thread: any thread.
 * Ownership: the string is static.
 * Returns: "json", "base64" or "binref" (static); NULL if invalid. */
TSR_API const char *tsr_encoding_name(tsr_encoding enc);
/* The encoding a name stands for. Accepts "json", "base64", "binref" and
 * Tesseract's format names "json+base64", "json+binref".
 * Thread: any thread.
 * Returns: a tsr_encoding, or -1 if unknown or NULL. */
TSR_API int tsr_encoding_from_name(const char *name);

/* How binref files are written and read. */
typedef enum tsr_file_io {
    TSR_FILE_IO_AUTO = 0,  /* io_uring where it works here, else pread/pwrite; a
                              batch of under 256 KiB takes pread/pwrite anyway
                              (one system call either way, and cheaper) */
    TSR_FILE_IO_URING = 1, /* io_uring, or TSR_E_IO where it does not work */
    TSR_FILE_IO_POSIX = 2  /* pread/pwrite */
} tsr_file_io;

/* The name of a file I/O path.
 * Thread: any thread.
 * Ownership: the string is static.
 * Returns: "auto", "io_uring" or "posix" (static); NULL if invalid. */
TSR_API const char *tsr_file_io_name(tsr_file_io io);
/* The file I/O path a name stands for: "auto", "io_uring" (or "uring"),
 * "posix".
 * Thread: any thread.
 * Returns: a tsr_file_io, or -1 if unknown or NULL. */
TSR_API int tsr_file_io_from_name(const char *name);

/*
 * What TSR_FILE_IO_AUTO uses in this process: "io_uring" or
 * "pread/pwrite". Probed once (the kernel switch
 * /proc/sys/kernel/io_uring_disabled, setting up a ring, the opcodes
 * needed, one round trip), then cached; thread-safe. When it is not
 * io_uring and why_not is not NULL, *why_not says why (e.g.
 * "io_uring_setup refused (EPERM): a seccomp filter or a security policy
 * forbids it"); otherwise *why_not is set to NULL.
 * Thread: any thread (the probe runs once, guarded).
 * Ownership: both strings are static.
 * Returns: "io_uring" or "pread/pwrite".
 */
TSR_API const char *tsr_file_io_backend(const char **why_not);

/*
 * Options for writing arrays. struct_size first, so that the struct can
 * grow: members past struct_size, and members left zero, take their
 * defaults, so
 *     tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF};
 * writes binref files into the current directory. NULL means all defaults
 * (json).
 */
typedef struct tsr_output_options {
    uint32_t struct_size;
    tsr_encoding encoding;   /* default json */
    int32_t lz4;             /* base64, binref: each array's bytes as one lz4 frame
                                ("compression": "lz4"); ignored by json, as by Tesseract */
    int32_t checksum;        /* base64, binref: add "checksum": "xxh3:..." */
    const char *output_dir;  /* binref: where the .bin files go (must exist);
                                NULL: the current directory */
    uint64_t max_file_bytes; /* binref: the next array goes to a new file when it
                                would take the current one past this; 0: 100 MiB
                                (Tesseract's limit); UINT64_MAX: never */
    int32_t file_mode;       /* binref: mode of new files, then umask; 0: 0600 */
    tsr_file_io io;          /* binref: default auto */
} tsr_output_options;

/* Options for reading arrays; the same conventions (NULL: defaults). */
typedef struct tsr_input_options {
    uint32_t struct_size;
    const char *base_dir;    /* where relative binref paths resolve; NULL: the
                                current directory */
    int32_t allow_escape;    /* binref paths may lead outside base_dir */
    tsr_file_io io;          /* default auto */
    int32_t refuse_files;    /* binref arrays are refused: no file is read at all
                                (a server without an input directory) */
} tsr_input_options;

/* ---- requests ------------------------------------------------------------ */

typedef struct tsr_payload tsr_payload;

/*
 * Parse the request text (len bytes, need not be NUL-terminated) for
 * endpoint ep of component c, validate its structure against the schema
 * (known keys, known fields, differentiable wrt fields, tangents and
 * cotangents matching the wrt lists) and decode every array into buffers
 * the payload owns, aligned to 64 bytes. Shapes and dtypes against the
 * schema's symbolic dimensions are left to tsr_call_run. c must outlive
 * the payload. On failure *out is NULL.
 * Thread: any thread; c may be called from other threads meanwhile.
 * Ownership: text is read during the call only; *out belongs to the
 *   caller until tsr_payload_free, and borrows c.
 * Returns: 0, or TSR_E_PAYLOAD, _UNKNOWN_FIELD, _MISSING, _DTYPE,
 *   _NOT_DIFFERENTIABLE, _LIMIT, _IO, _NOMEM with err set.
 */
TSR_API int tsr_payload_parse(const tsr_component *c, tsr_endpoint ep, const char *text, size_t len,
                              tsr_payload **out, tsr_error *err);
/* The same, with binref reading as opts say (NULL: defaults). Binref
 * arrays are read in one batch once the whole request has been decoded.
 * Thread: as tsr_payload_parse.
 * Ownership: as tsr_payload_parse; opts is read during the call only.
 * Returns: as tsr_payload_parse. */
TSR_API int tsr_payload_parse_ex(const tsr_component *c, tsr_endpoint ep, const char *text,
                                 size_t len, const tsr_input_options *opts, tsr_payload **out,
                                 tsr_error *err);
/* Free a payload and its buffers. Accepts NULL.
 * Thread: the owner's thread, once no call bound from it runs. */
TSR_API void tsr_payload_free(tsr_payload *p);

/* The endpoint the payload was parsed for.
 * Thread: a payload is read-only once parsed: any number of threads.
 * Returns: the endpoint. */
TSR_API tsr_endpoint tsr_payload_endpoint(const tsr_payload *p);
/* A decoded input by field name, or NULL when the payload does not give it.
 * For abstract_eval, data is NULL. A TEXT or JSON input is a uint8 rank-1
 * array of its text (a JSON value as compact JSON, its arrays in base64),
 * NUL-terminated after shape[0] bytes, as tsr_call_set_input binds such a
 * field.
 * Thread: any number of threads.
 * Ownership: the array and its data belong to p and live as long as it.
 * Returns: the array, or NULL. */
TSR_API const tsr_array *tsr_payload_input(const tsr_payload *p, const char *name);
/* jvp: the tangent of an input; vjp and hvp: the cotangent of an output.
 * Thread: any number of threads.
 * Ownership: belongs to p and lives as long as it.
 * Returns: the array, or NULL when the payload has none for name. */
TSR_API const tsr_array *tsr_payload_seed(const tsr_payload *p, const char *name);
/* hvp: the tangent of an input (tangent_vector[name]).
 * Thread: any number of threads.
 * Ownership: belongs to p and lives as long as it.
 * Returns: the array, or NULL when the payload has none for name. */
TSR_API const tsr_array *tsr_payload_tangent(const tsr_payload *p, const char *name);
/* The wrt lists in the order given (a field named twice in one list is
 * refused by tsr_payload_parse, as Tesseract refuses it, with the loc of
 * its second mention, e.g. "vjp_inputs.1"):
 * jac_inputs / jvp_inputs / vjp_inputs / hvp_inputs, and jac_outputs /
 * jvp_outputs / vjp_outputs / hvp_outputs. Zero and NULL for apply and abstract_eval.
 * Thread: any number of threads.
 * Ownership: the names belong to p and live as long as it.
 * Returns: the count, or the k-th name (NULL for k out of range). */
TSR_API int32_t tsr_payload_n_wrt_inputs(const tsr_payload *p);
TSR_API const char *tsr_payload_wrt_input(const tsr_payload *p, int32_t k);
TSR_API int32_t tsr_payload_n_wrt_outputs(const tsr_payload *p);
TSR_API const char *tsr_payload_wrt_output(const tsr_payload *p, int32_t k);

/*
 * Bind the payload into call, which must have been made with
 * tsr_call_new(c, ep) for the same component and endpoint: every input
 * (inputs the payload lacks are unbound), the wrt lists and the seeds. The
 * call borrows the payload's buffers: p must outlive every tsr_call_run
 * that uses them.
 * Thread: the thread that uses call (one at a time, as for every call).
 * Ownership: call borrows p's buffers until its next binding or its free.
 * Returns: 0 or a negative TSR_E_* code, with err set.
 */
TSR_API int tsr_payload_bind(const tsr_payload *p, tsr_call *call, tsr_error *err);

/* ---- responses ------------------------------------------------------------- */

/*
 * Write the results of the last successful tsr_call_run of call (bound
 * from p) in Tesseract's output form as compact JSON, without a trailing
 * newline. Floating-point values are written with the fewest digits that
 * read back to the same value (at most 17).
 * Thread: the thread that uses call.
 * Ownership: *out belongs to the caller: release it with tsr_json_free.
 * Returns: 0, or TSR_E_ARGUMENT (no successful run), _NOMEM, _IO with err set.
 */
TSR_API int tsr_payload_format_results(const tsr_payload *p, const tsr_call *call, tsr_encoding enc,
                                       char **out, tsr_error *err);
/*
 * The same with options (NULL: json). With binref encoding, every array of
 * the response is appended to "<output_dir>/<uuid>-<k>.bin" (k counts the
 * files as they roll over at max_file_bytes; files are created, never
 * overwritten, and not synced to disk) and "buffer" names the file
 * relative to output_dir, as Tesseract writes it. On failure the files
 * written so far are removed.
 * Thread: the thread that uses call.
 * Ownership: as tsr_payload_format_results; opts is read during the call.
 * Returns: as tsr_payload_format_results.
 */
TSR_API int tsr_payload_format_results_ex(const tsr_payload *p, const tsr_call *call,
                                          const tsr_output_options *opts, char **out,
                                          tsr_error *err);

/*
 * The schema of a component as compact JSON:
 *   {"name", "version", "description",
 *    "inputs": [{"name", "dtype", "shape", "differentiable", "doc", "required"
 *                [, "default"]}, ...],
 *    "outputs": [...], "endpoints": ["apply", ...]}
 * where shape lists an int for a fixed dimension, the symbol's name for a
 * symbolic one and null for a wildcard; doc and description are null when
 * the plugin gives none. An input is required unless it has a default or
 * is optional (TSR_FIELD_OPTIONAL); "default" is there only when it has
 * one, as a plain value (number, bool or nested list, as
 * tsr_array_from_json reads it), or as an encoded array where a plain
 * value cannot hold it (complex, NaN, infinities). Outputs have neither key.
 * Thread: any thread.
 * Ownership: *out belongs to the caller: release it with tsr_json_free.
 * Returns: 0, or TSR_E_ARGUMENT / TSR_E_NOMEM with err set.
 */
TSR_API int tsr_schema_to_json(const tsr_component *c, char **out, tsr_error *err);

/* ---- single arrays -------------------------------------------------------- */

/* One array as an encoded-array object. a->data may be NULL only when the
 * array has no elements.
 * Thread: any thread.
 * Ownership: a is read during the call; *out belongs to the caller
 *   (tsr_json_free).
 * Returns: 0, or TSR_E_ARGUMENT / TSR_E_NOMEM with err set. */
TSR_API int tsr_array_to_json(const tsr_array *a, tsr_encoding enc, char **out, tsr_error *err);
/* The same with options (NULL: json); binref writes one file of its own.
 * Thread: any thread.
 * Ownership: as tsr_array_to_json.
 * Returns: as tsr_array_to_json, or TSR_E_IO for a binref file. */
TSR_API int tsr_array_to_json_ex(const tsr_array *a, const tsr_output_options *opts, char **out,
                                 tsr_error *err);

/*
 * Decode one array from JSON text: an encoded array, or a plain number,
 * boolean or nested list. dtype is the element type wanted (converted as
 * described above); TSR_DTYPE_INVALID keeps an encoded array's own dtype
 * and gives plain values bool, int64 or float64 after what they hold.
 * On success *out describes the array and *buffer holds its data (64-byte
 * aligned, never NULL).
 * Thread: any thread.
 * Ownership: text is read during the call; *buffer belongs to the caller
 *   (tsr_array_buffer_free), and out->data points into it.
 * Returns: 0, or TSR_E_PAYLOAD, _DTYPE, _LIMIT, _NOMEM with err set.
 */
TSR_API int tsr_array_from_json(const char *text, size_t len, tsr_dtype dtype, tsr_array *out,
                                void **buffer, tsr_error *err);
/* The same, reading binref buffers as opts say (NULL: defaults).
 * Thread: any thread.
 * Ownership: as tsr_array_from_json.
 * Returns: as tsr_array_from_json, or TSR_E_IO for a binref file. */
TSR_API int tsr_array_from_json_ex(const char *text, size_t len, tsr_dtype dtype,
                                   const tsr_input_options *opts, tsr_array *out, void **buffer,
                                   tsr_error *err);

/* ---- errors ------------------------------------------------------------- */

#define TSR_ERROR_INPUT_MAX 256
/*
 * A failure as Tesseract answers a request it refuses (HTTP 422), one line
 * of compact JSON without a newline:
 *   {"detail":[{"type":...,"loc":["body",...],"msg":...,"input":...}]}
 * type is tsr_error_type(code); loc lists "body" and then the parts of loc
 * (tsr_error.loc, tsr_call_errloc: "inputs.x" gives ["body","inputs","x"],
 * a part of digits an integer: "jvp_inputs.1" gives
 * ["body","jvp_inputs",1]); msg is message with braces made parentheses
 * (clients read it as a template); input is the JSON value found at loc in
 * request (request_len bytes, may be NULL) when it is at most
 * TSR_ERROR_INPUT_MAX bytes as compact JSON and the request at most
 * 16 MiB, else null. `tessera serve` answers its 422s with this body and
 * the CLI writes it with --error-format json.
 * Thread: any thread.
 * Ownership: loc, message and request are read during the call; *out
 *   belongs to the caller (tsr_json_free).
 * Returns: 0, TSR_E_ARGUMENT (out NULL) or TSR_E_NOMEM.
 */
TSR_API int tsr_error_detail_json(int code, const char *loc, const char *message,
                                  const char *request, size_t request_len, char **out);
/* The same with the type the failure carries (tsr_call_errtype: the one
 * an endpoint gave when it refused a value); NULL, "" or the code's own
 * name for tsr_error_type(code). For TSR_E_VALUE, msg is the cause alone
 * (pydantic's sentence, the library's "component ..., endpoint ...: "
 * lead and any further lines left out); without a type of the endpoint's,
 * the type is read from that sentence ("string_type", "string_unicode",
 * "literal_error", else "value_error"), and a literal_error has
 * "ctx": {"expected": ...} as pydantic writes it.
 * Thread: any thread.
 * Ownership: as tsr_error_detail_json.
 * Returns: as tsr_error_detail_json. */
TSR_API int tsr_error_detail_json_typed(const char *type, int code, const char *loc,
                                        const char *message, const char *request,
                                        size_t request_len, char **out);

/* Release JSON text returned by this header's functions. Accepts NULL.
 * Thread: any thread, once. */
TSR_API void tsr_json_free(char *text);
/* Release the data buffer of tsr_array_from_json(_ex). Accepts NULL.
 * Thread: any thread, once. */
TSR_API void tsr_array_buffer_free(void *buffer);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PAYLOAD_H */
