/* SPDX-License-Identifier: MIT */
/* `tessera info`: what this build and this machine offer: version, plugin
 * ABI, the file I/O that binref files use (and why not io_uring when it is
 * not), whether worker mode's shared memory (memfd) works, the kernel. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"

/* MemAvailable of /proc/meminfo in bytes, or -1. */
static double mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "re");
    if (f == NULL) return -1;
    char line[128];
    double kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

/* Worker mode needs a memfd it can create, reserve and map; try one page. */
static void shm_status(char *buf, size_t size) {
    int fd = memfd_create("tessera-info", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(buf, size, "not usable: memfd_create: %s", strerror(errno));
        return;
    }
    const char *failed = NULL;
    int err = 0;
    void *p = MAP_FAILED;
    if ((err = posix_fallocate(fd, 0, 4096)) != 0) failed = "posix_fallocate";
    else if ((p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        failed = "mmap", err = errno;
    if (p != MAP_FAILED) {
        memset(p, 1, 4096);
        munmap(p, 4096);
    }
    close(fd);
    if (failed != NULL) {
        snprintf(buf, size, "not usable: %s: %s", failed, strerror(err));
        return;
    }
    double avail = mem_available();
    if (avail >= 0)
        snprintf(buf, size, "usable (memfd; %.1f GiB of memory available)",
                 avail / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, size, "usable (memfd)");
}

static int print_info(const cli_options *o) {
    const char *why_not = NULL;
    const char *backend = tsr_file_io_backend(&why_not);
    char shm[160];
    shm_status(shm, sizeof shm);
    struct utsname u;
    int have_uname = uname(&u) == 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        cli_error("info", "out of memory");
        return CLI_OUTPUT;
    }
    fprintf(f, "tessera: %d.%d.%d\n", TSR_VERSION_MAJOR, TSR_VERSION_MINOR, TSR_VERSION_PATCH);
    fprintf(f, "plugin ABI: %u\n", TSR_PLUGIN_ABI_VERSION);
    if (why_not != NULL) fprintf(f, "file I/O: %s (io_uring unavailable: %s)\n", backend, why_not);
    else fprintf(f, "file I/O: %s\n", backend);
    fprintf(f, "shm: %s\n", shm);
    if (have_uname) fprintf(f, "kernel: %s %s %s", u.sysname, u.release, u.machine);
    else fprintf(f, "kernel: unknown");
    if (fclose(f) != 0 || text == NULL) {
        free(text);
        cli_error("info", "out of memory");
        return CLI_OUTPUT;
    }
    int rc = cli_write_output(o, text);
    free(text);
    return rc;
}

int cli_cmd_info(int argc, char **argv) {
    cli_options o;
    int rc = cli_parse_options(argc, argv, false, &o);
    if (rc == CLI_OK && o.help) cli_print_info_help();
    else if (rc == CLI_OK && o.n_positional != 0) rc = cli_usage_error("info", "takes no arguments");
    else if (rc == CLI_OK) rc = print_info(&o);
    cli_options_free(&o);
    return rc;
}
