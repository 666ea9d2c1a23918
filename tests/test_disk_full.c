/* SPDX-License-Identifier: MIT */
/*
 * A full disk under binref files: a child process mounts a small tmpfs
 * (64 KiB) in a private mount namespace and writes an array of 1 MiB as
 * json+binref into it, with each file path (pread/pwrite and io_uring).
 * The write fails with TSR_E_IO saying the device is full, and leaves no
 * file behind; a small array still fits afterwards. Skipped without the
 * privilege to mount.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/mount.h>

#include <tessera/payload.h>

#include "child_verdict.h"
#include "dir_entries.h"
#include "private_tmpfs.h"
#include "temp_dir.h"
#include "test_util.h"

TestSuite(disk_full, .timeout = 60);

/* In the 64 KiB tmpfs at dir: a 1 MiB array fails cleanly, a small one
 * still fits afterwards. */
static const char *full_disk_in(const char *dir, tsr_file_io io) {
    static double big[131072]; /* 1 MiB */
    tsr_array a = {big, TSR_FLOAT64, 1, {131072}};
    tsr_output_options o = {.struct_size = sizeof o, .encoding = TSR_ENCODING_BINREF,
                            .output_dir = dir, .io = io};
    char *text = NULL;
    tsr_error err = {0};
    int rc = tsr_array_to_json_ex(&a, &o, &text, &err);
    CHECK(rc == TSR_E_IO && text == NULL, "a 1 MiB array on 64 KiB: code %d: %s", rc,
          err.message);
    CHECK(strstr(err.message, "No space left on device"), "the message does not say why: %s",
          err.message);
    CHECK(dir_entries(dir, "") == 0, "%d files left after the failure", dir_entries(dir, ""));
    tsr_array small = {big, TSR_FLOAT64, 1, {16}};
    rc = tsr_array_to_json_ex(&small, &o, &text, &err);
    tsr_json_free(text);
    CHECK(rc == 0, "a small array after it: %s", err.message);
    return "ok";
}

static const char *write_into_a_full_disk(tsr_file_io io) {
    char dir[256];
    if (try_make_temp_dir(dir, sizeof dir, "tessera-full") != 0) return "mkdtemp failed";
    const char *v = private_tmpfs(dir, 0, "size=64k,mode=0700");
    if (!v) {
        v = full_disk_in(dir, io);
        umount(dir);
    }
    rmdir(dir);
    return v;
}

static const char *posix_full(void) { return write_into_a_full_disk(TSR_FILE_IO_POSIX); }
static const char *auto_full(void) { return write_into_a_full_disk(TSR_FILE_IO_AUTO); }

static void in_child(const char *(*fn)(void)) {
    run_in_child(fn, "no privilege to mount a small tmpfs");
}

Test(disk_full, binref_files_with_pread_pwrite_fail_cleanly) { in_child(posix_full); }

Test(disk_full, binref_files_with_the_automatic_path_fail_cleanly) { in_child(auto_full); }
