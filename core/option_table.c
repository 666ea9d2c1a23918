/* SPDX-License-Identifier: MIT */
/* The library options: key, values, default, where each applies and what
 * it does. tsr_options_set refuses a key that is not here; the CLI prints
 * this table (`tessera help options`) and docs/reference/options.md is
 * generated from it. */
#include <stddef.h>

#include "tessera/option_table.h"

#define SIZE_VALUES "a byte count, K, M, G or T suffix (powers of 1024); 0: no limit"
#define RLIMIT_VALUES "a count (K, M, G or T suffix allowed); 0: inherited"

static const tsr_option_info table[] = {
    {"mode", "inproc, isolated, worker", "inproc", "inproc", "every mode",
     "where the component runs: this process, a new link-map namespace, or worker processes",
     "inproc loads it with dlopen in this process; isolated with dlmopen in a new link-map "
     "namespace; worker in separate worker processes (tessera-worker).",
     "worker"},
    {"log_level", "debug, info, warn, error, off", "warn", "$TESSERA_LOG, else warn", "every mode",
     "the lowest level passed to the log function",
     "off passes nothing. The environment variable TESSERA_LOG (same values, capitals "
     "accepted) sets the default for any host; this option wins over it. An invalid "
     "TESSERA_LOG gives one warning per process on stderr and leaves warn. At debug, each call "
     "logs one line: \"call apply rc=0 ms=0.123\", ms= as in tessera serve's access log.",
     "debug"},
    {"workers", "an integer from 1 to 256", "1", "1", "worker",
     "pool size: concurrent calls from several threads spread across the pool", "", "2"},
    {"spawn", "exec, fork", "exec", "exec", "worker", "how a worker is started",
     "exec: posix_spawn of tessera-worker. fork: a plain fork, faster to start; refused at "
     "tsr_open when the host has more than one thread.",
     "fork"},
    {"worker_exe", "a path", NULL, "$TESSERA_WORKER, else found next to libtessera", "worker",
     "path of tessera-worker",
     "By default $TESSERA_WORKER, else found relative to libtessera.so, or to the executable of "
     "a host linked with libtessera.a installed in the prefix's bin/, else under the prefix "
     "configured at build time.",
     "/usr/local/bin/tessera-worker"},
    {"cwd", "a path", NULL, "inherited", "worker", "the worker's working directory", "", "/"},
    {"clear_env", "0, 1", "0", "0", "worker",
     "1: the worker starts with an empty environment",
     "Plus what tsr_options_set_env adds.", "1"},
    {"timeout_ms", "an integer from 0 to 86400000", "0", "0 (none)", "worker",
     "per-call limit in milliseconds",
     "A call running longer fails with TSR_E_TIMEOUT and its worker is killed.", "5000"},
    {"start_timeout_ms", "an integer from 1 to 86400000", "30000", "30000", "worker",
     "limit for a worker to load the component, in milliseconds", "", "60000"},
    {"cancel_grace_ms", "an integer from 1 to 86400000", "25", "25 (TSR_CANCEL_GRACE_MS)",
     "worker", "how long a cancelled call's worker has to stop, in milliseconds",
     "After tsr_call_cancel the worker is asked to stop; one that has not answered within this "
     "is killed (worker_deaths) and another starts at the next call. Either way the call fails "
     "with TSR_E_CANCELLED, its message saying which.",
     "1000"},
    {"restart", "auto, never", "never", "never", "worker",
     "whether a worker that died is started again",
     "auto: a worker that died is started again at the next call that needs it. never: a dead "
     "worker is skipped, the others of the pool serve, and once none is left calls fail with "
     "TSR_E_WORKER until tsr_component_restart. Either way each death is counted "
     "(worker_deaths) and logged once (WARN); a call that was running in the worker fails, a "
     "request the worker never took goes to another.",
     "auto"},
    {"spin_ns", "an integer from 0 to 1000000000", NULL, "adaptive", "worker",
     "how long a waiting side spins before it sleeps, in nanoseconds",
     "Given, it is used as it is (0 sleeps at once); by default the spin adapts to about twice "
     "the recent waits (20 to 200 us), yields the CPU past its first 20 us (at once when the "
     "other side has kept to the same CPU for hundreds of waits), sleeps instead for a while once a yield finds the "
     "CPUs crowded, and the worker's thread and each host thread that waits on a worker ask "
     "Linux (6.12 and later) for a 100 us time slice, so that a woken side runs soon beside "
     "busy processes (bench_gaps).",
     "0"},
    {"rlimit_as", RLIMIT_VALUES, "0", "0 (inherited)", "worker",
     "address space limit in bytes the worker sets on itself before it loads the component",
     "It must leave room for the arena, which the worker maps.", "8G"},
    {"rlimit_cpu", RLIMIT_VALUES, "0", "0 (inherited)", "worker",
     "CPU seconds the worker may use",
     "A component past them is killed by SIGXCPU: TSR_E_WORKER naming the signal.", "600"},
    {"rlimit_nofile", RLIMIT_VALUES, "0", "0 (inherited)", "worker",
     "open files the worker may hold", "", "1024"},
    {"transport", "auto, shm, files", "auto", "auto", "worker",
     "how arrays cross between host and worker",
     "auto: shared memory, or files when it cannot be had at tsr_open (memfd_create refused, or "
     "too little memory for the arena; logged at INFO). shm: shared memory or TSR_E_SHM. files: "
     "binref files in a spool directory, no shared memory at all: the worker reads inputs into "
     "its own memory and writes results back, one copy each way through the page cache; results "
     "are still views the call owns, tsr_component_alloc gives ordinary memory.",
     "files"},
    {"spool_dir", "a path", NULL, "$TMPDIR, else /tmp", "worker, transport=files",
     "where each component makes its spool",
     "A private directory (mode 0700, unguessable name) emptied after every call, also after a "
     "crash or timeout, and removed at tsr_close.",
     "/tmp"},
    {"file_io", "auto, io_uring, posix", "auto", "auto", "worker, transport=files",
     "how spool files are read and written",
     "auto: io_uring where it works. io_uring: TSR_E_IO at tsr_open where it does not. posix: "
     "pread/pwrite.",
     "posix"},
    {"casting", "exact, same_kind", "exact", "exact", "every mode",
     "an input, tangent or cotangent whose dtype is not the field's",
     "exact refuses it with TSR_E_DTYPE. same_kind converts it at each run by numpy's same_kind "
     "rule, as Tesseract does (bool < integers, signed and unsigned alike < floats < complex; "
     "narrowing within a kind allowed), into a buffer the call keeps for its next runs. An "
     "element that does not fit (an integer out of the target's range, a finite float that "
     "would become infinite; NaN and infinities carry over) is refused with TSR_E_DTYPE naming "
     "the field, its index and its value. Arrays of the field's dtype are passed on as with "
     "exact, without a copy.",
     "same_kind"},
    {"unwritten", "zero, check, keep", "zero", "zero", "every mode",
     "what a result holds before the endpoint writes it",
     "Result buffers are reused from call to call (in a worker's arena, from caller to caller), "
     "so by default (zero) every result is cleared before each run: a component that returns 0 "
     "without writing one hands back zeros, never another call's bytes. check fills results "
     "with a marker (a signalling NaN for floats, 0xA5 bytes otherwise) and fails a run that "
     "leaves any element of one unwritten with TSR_E_PLUGIN_RESULT naming it (\"output 'y': 3 "
     "of 3 elements left unwritten\"): for testing a component. keep clears nothing, for a host "
     "that trusts its component to write every result (clearing costs a memset of each result "
     "per call: about 75 ns for 8 KB, 80 us for 8 MB, bench_inproc).",
     "check"},
    {"call_timing", "on, off", "on", "on", "every mode",
     "whether each call's wall time is measured for tsr_component_stats",
     "on: every call reads CLOCK_MONOTONIC on entry and return (endpoint_ns; about 46 ns a call "
     "on a KVM guest, bench_inproc). off: calls and errors are still counted and endpoint_ns "
     "stays 0, for a host whose calls take a few tens of nanoseconds. At log_level debug calls "
     "are timed whatever it says.",
     "off"},
    {"hvp_fallback", "auto, off", "auto", "auto", "every mode",
     "how hvp is served for a component without a native hvp",
     "auto: by central differences of its vjp, (vjp(x + h v) - vjp(x - h v)) / 2h (two vjp calls; "
     "a vjp served from its jacobian counts), else, for a component that declares an fd_method, "
     "by central second differences of apply (1 + 4n apply calls for n input elements); "
     "tsr_component_hvp_source says which. off: no fallback, hvp of such a component fails with "
     "TSR_E_UNSUPPORTED like any endpoint it lacks.",
     "off"},
    {"fd_method", "declared, central, forward", "declared", "declared", "every mode",
     "finite differences of apply that the host serves jvp, vjp and jacobian by",
     "declared: as the component declares (a plugin's or manifest's fd_method; a Python "
     "component declares none). central: (f(x + h e_i) - f(x - h e_i)) / 2h, 2n apply calls for "
     "n input elements; forward: (f(x + h e_i) - f(x)) / h, 1 + n. Either serves the derivative "
     "endpoints the component lacks (fd_endpoints=all: all three), with the step fd_step "
     "and fd_step_rule say, and hvp from them as hvp_fallback says. With workers=N > 1 the columns of "
     "a vjp or jacobian are split across N threads, each driving its own worker; the result is "
     "bit-identical to one worker's.",
     "central"},
    {"fd_step", "a number in [0, 1)", "0", "0 (the method's default)", "every mode",
     "the step of the host's finite differences",
     "h = fd_step * max(|x_i|, 1) for element x_i (fd_step_rule=absolute: h = fd_step). 0: "
     "the component's declared step, else "
     "cbrt(epsilon) for central and sqrt(epsilon) for forward differences (epsilon of the "
     "input's dtype). Applies to any component the host differentiates by fd_method.",
     "1e-6"},
    {"fd_step_rule", "relative, absolute", "relative", "relative", "every mode",
     "whether the host's finite-difference step scales with the element",
     "relative: h = fd_step * max(|x_i|, 1) (a jvp: one step, by the largest element and "
     "tangent). absolute: h = fd_step whatever x_i, as a component that takes its own step "
     "in the input's units does (e.g. bar_geometry's fd_step). For jvp, vjp and jacobian; "
     "hvp's second differences keep their own rule.",
     "absolute"},
    {"fd_endpoints", "missing, all", "missing", "missing", "every mode",
     "which derivative endpoints the host's finite differences serve",
     "missing: only jvp, vjp and jacobian the component lacks. all: those three always, the "
     "component's own left unused (tsr_component_has_native_endpoint then says 0), e.g. to "
     "run a component's sequential differences on a pool of workers instead. Needs an "
     "fd_method (declared or set); refused at tsr_open without one.",
     "all"},
    {"python", "a path", NULL, "$TESSERA_PYTHON, else the component's environment",
     "Python components", "the interpreter to run the component under",
     "A venv's python runs it with that venv's packages. By default $TESSERA_PYTHON, else an "
     "environment built from the folder's tesseract_requirements.txt, else the Python Tessera "
     "was built with. In-process in a host that already runs Python, the host's interpreter is "
     "used.",
     "/usr/bin/python3"},
    {"python_env", "auto, none", "auto", "auto", "Python components",
     "whether an environment is built from the requirements file",
     "auto: build one at first use, cached by its hash under $TESSERA_ENV_DIR (default "
     "~/.cache/tessera/envs). none: never build one.",
     "none"},
    {"umbridge_model", "a name", NULL, "none", "UM-Bridge models",
     "the UM-Bridge model to open at an http:// or https:// URL",
     "Set, the URL is opened as a UM-Bridge server (GET /Info) and this model of it as the "
     "component, as the URL's fragment (http://host:4242#name) does; a fragment naming another "
     "model is refused. Not carried to worker processes: in worker mode name the model in the "
     "fragment. The configuration (tsr_options_set_config) is sent as the model's config "
     "object, each value as JSON when it reads as JSON, else as a string.",
     "forward"},
    {"max_array_bytes", SIZE_VALUES, "64G", "64G", "every mode",
     "bytes of one array: an input, a tangent or cotangent, a result",
     "Refused with TSR_E_LIMIT naming the option, before anything is allocated.", "512M"},
    {"max_call_bytes", SIZE_VALUES, "64G", "64G", "every mode",
     "bytes of all arrays of one call together",
     "Refused with TSR_E_LIMIT naming the option, before anything is allocated.", "1G"},
    {"max_payload_bytes", SIZE_VALUES, "1G", "1G", "every mode",
     "length of a JSON payload given to tsr_payload_parse",
     "Refused with TSR_E_LIMIT naming the option.", "16M"},
    {"max_payload_values", SIZE_VALUES, "1M", "1M (1048576)", "every mode",
     "JSON values of one payload held as a parsed tree",
     "Every key, string, number, list and object counts, except that a list of numbers (or "
     "true/false, nested or not) of 64 values or more, read straight from the text into its "
     "array, counts as one (the tree costs up to ~150 bytes a value). Counted before parsing. "
     "The arrays a payload decodes are held to max_array_bytes and max_call_bytes before each "
     "is allocated.",
     "4M"},
    {"max_arena_bytes", SIZE_VALUES, "64G", "64G", "worker",
     "the shared-memory arena does not grow past this",
     "Beyond it allocations fail with TSR_E_SHM naming the option.", "2G"},
};

TSR_API const tsr_option_info *tsr_option_info_at(size_t index) {
    return index < sizeof table / sizeof table[0] ? &table[index] : NULL;
}
