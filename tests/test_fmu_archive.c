/* SPDX-License-Identifier: MIT */
/* fmu_unpack (backends/fmu/fmu_archive.c) on archives made here with
 * libzip: a good one unpacks byte for byte into a scratch folder that
 * fmu_unpacked_free removes, a folder is used in place, and each hostile
 * or broken archive is refused with a message naming it and the entry,
 * with nothing written outside the scratch folder and the scratch folder
 * itself gone (the test's TMPDIR is its own, so the count of
 * tessera-fmu-* in it is exact). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "backends/fmu/fmu.h"
#include "tessera/tessera.h"
#include "temp_dir.h"

static char root[256];     /* the test's folder */
static char scratch[300]; /* TMPDIR while the test runs */

static void setup(void) {
    make_temp_dir(root, sizeof root, "fmu-archive");
    snprintf(scratch, sizeof scratch, "%s/tmp", root);
    cr_assert_eq(mkdir(scratch, 0700), 0);
    cr_assert_eq(setenv("TMPDIR", scratch, 1), 0);
}

static void teardown(void) {
    remove_tree_quietly(root);
}

TestSuite(fmu_archive, .init = setup, .fini = teardown);

enum { FILE_ENTRY, DIR_ENTRY, LINK_ENTRY, DEVICE_ENTRY };

typedef struct zentry {
    const char *name;
    const char *data; /* NULL: "" */
    size_t len;       /* 0 with data: strlen(data) */
    int kind;
    int stored;       /* no compression */
} zentry;

static const char md_xml[] = "<fmiModelDescription fmiVersion=\"3.0\"/>";

/* root/<file> as a zip of the entries; its path in out. */
static void make_zip(const char *file, const zentry *es, size_t count, char *out, size_t size) {
    snprintf(out, size, "%s/%s", root, file);
    int err = 0;
    zip_t *za = zip_open(out, ZIP_CREATE | ZIP_TRUNCATE, &err);
    cr_assert_not_null(za, "zip_open %s: %d", out, err);
    for (size_t i = 0; i < count; i++) {
        const zentry *e = &es[i];
        zip_int64_t idx;
        if (e->kind == DIR_ENTRY) {
            idx = zip_dir_add(za, e->name, ZIP_FL_ENC_UTF_8);
        } else {
            const char *data = e->data ? e->data : "";
            size_t len = e->len ? e->len : strlen(data);
            zip_source_t *src = zip_source_buffer(za, data, len, 0);
            cr_assert_not_null(src);
            idx = zip_file_add(za, e->name, src, ZIP_FL_ENC_UTF_8);
            if (idx < 0) zip_source_free(src);
        }
        cr_assert_geq(idx, 0, "adding '%s': %s", e->name, zip_strerror(za));
        if (e->stored)
            cr_assert_eq(zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0), 0);
        if (e->kind == LINK_ENTRY || e->kind == DEVICE_ENTRY) {
            zip_uint32_t mode = e->kind == LINK_ENTRY ? (S_IFLNK | 0777) : (S_IFCHR | 0666);
            cr_assert_eq(zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                                                          mode << 16),
                         0);
        }
    }
    cr_assert_eq(zip_close(za), 0, "zip_close: %s", zip_strerror(za));
}

static int count_scratch_folders(void) {
    DIR *d = opendir(scratch);
    cr_assert_not_null(d);
    int k = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strncmp(de->d_name, "tessera-fmu-", 12) == 0) k++;
    closedir(d);
    return k;
}

/* The names in root, besides tmp and the archives (*.fmu). */
static int count_strays(void) {
    DIR *d = opendir(root);
    cr_assert_not_null(d);
    int k = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *s = de->d_name;
        size_t len = strlen(s);
        if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strcmp(s, "tmp") == 0) continue;
        if (len > 4 && strcmp(s + len - 4, ".fmu") == 0) continue;
        k++;
    }
    closedir(d);
    return k;
}

/* The archive of the entries is refused with TSR_E_LOAD, its message
 * naming the archive and holding `cause`; nothing is left behind. */
static void expect_refused(const zentry *es, size_t count, uint64_t max_bytes, const char *cause) {
    char path[PATH_MAX], why[512] = "";
    make_zip("bad.fmu", es, count, path, sizeof path);
    fmu_unpacked u = {0};
    int rc = fmu_unpack(path, max_bytes, &u, why, sizeof why);
    cr_assert_eq(rc, TSR_E_LOAD, "rc %d: %s", rc, why);
    cr_assert_null(u.dir);
    cr_assert(strstr(why, path), "the message names the archive: %s", why);
    cr_assert(strstr(why, cause), "'%s' in: %s", cause, why);
    cr_assert_eq(count_scratch_folders(), 0, "the scratch folder is removed");
    cr_assert_eq(count_strays(), 0, "nothing is written beside the archive");
    fmu_unpacked_free(&u);
}

static void read_back(const char *dir, const char *name, char *buf, size_t size, size_t *len,
                      mode_t *mode) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0, "%s exists", path);
    cr_assert(S_ISREG(st.st_mode), "%s is a regular file", path);
    *mode = st.st_mode & 07777;
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    *len = fread(buf, 1, size, f);
    fclose(f);
}

Test(fmu_archive, a_good_archive_unpacks_byte_for_byte_into_a_scratch_folder_removed_on_free) {
    char blob[300];
    for (size_t i = 0; i < sizeof blob; i++) blob[i] = (char)(i * 7 + 3);
    zentry es[] = {
        {.name = "modelDescription.xml", .data = md_xml},
        {.name = "binaries/", .kind = DIR_ENTRY},
        {.name = "binaries/x86_64-linux/m.so", .data = "\177ELF-ish", .stored = 1},
        {.name = "resources/data.bin", .data = blob, .len = sizeof blob},
        {.name = "./resources/empty.txt", .data = ""},
    };
    char path[PATH_MAX], why[512] = "";
    make_zip("good.fmu", es, sizeof es / sizeof *es, path, sizeof path);
    fmu_unpacked u = {0};
    int rc = fmu_unpack(path, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why);
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(u.owned, 1);
    cr_assert_eq(u.dir[0], '/', "absolute: %s", u.dir);
    cr_assert_eq(count_scratch_folders(), 1);
    char *real_scratch = realpath(scratch, NULL);
    cr_assert_not_null(real_scratch);
    cr_assert(strncmp(u.dir, real_scratch, strlen(real_scratch)) == 0, "under TMPDIR: %s", u.dir);
    free(real_scratch);

    char buf[1024];
    size_t len;
    mode_t mode;
    read_back(u.dir, "modelDescription.xml", buf, sizeof buf, &len, &mode);
    cr_assert_eq(len, strlen(md_xml));
    cr_assert_eq(memcmp(buf, md_xml, len), 0);
    cr_assert_eq(mode, 0600);
    read_back(u.dir, "binaries/x86_64-linux/m.so", buf, sizeof buf, &len, &mode);
    cr_assert_eq(len, 8);
    cr_assert_eq(memcmp(buf, "\177ELF-ish", 8), 0);
    cr_assert_eq(mode, 0700, "files under binaries/ may be run: %o", (unsigned)mode);
    read_back(u.dir, "resources/data.bin", buf, sizeof buf, &len, &mode);
    cr_assert_eq(len, sizeof blob);
    cr_assert_eq(memcmp(buf, blob, len), 0);
    read_back(u.dir, "resources/empty.txt", buf, sizeof buf, &len, &mode);
    cr_assert_eq(len, 0);

    char *dir = strdup(u.dir);
    fmu_unpacked_free(&u);
    cr_assert_null(u.dir);
    cr_assert_neq(access(dir, F_OK), 0, "%s is removed", dir);
    cr_assert_eq(count_scratch_folders(), 0);
    free(dir);
    fmu_unpacked_free(&u); /* a zeroed struct is fine */
    fmu_unpacked_free(NULL);
}

Test(fmu_archive, a_folder_is_used_in_place_and_kept_on_free) {
    char dir[PATH_MAX], md[PATH_MAX + 32], why[512] = "";
    snprintf(dir, sizeof dir, "%s/unpacked", root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(md, sizeof md, "%s/modelDescription.xml", dir);
    FILE *f = fopen(md, "w");
    cr_assert_not_null(f);
    fputs(md_xml, f);
    fclose(f);
    char given[PATH_MAX + 8];
    snprintf(given, sizeof given, "%s/./", dir);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(given, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why), 0, "%s", why);
    char *real = realpath(dir, NULL);
    cr_assert_str_eq(u.dir, real);
    cr_assert_eq(u.owned, 0);
    fmu_unpacked_free(&u);
    cr_assert_eq(access(md, F_OK), 0, "the folder is the caller's: kept");
    cr_assert_eq(count_scratch_folders(), 0);
    free(real);
}

Test(fmu_archive, a_folder_without_model_description_is_refused) {
    char dir[PATH_MAX], why[512] = "";
    snprintf(dir, sizeof dir, "%s/empty", root);
    cr_assert_eq(mkdir(dir, 0700), 0);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(dir, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why), TSR_E_LOAD);
    cr_assert(strstr(why, "no modelDescription.xml"), "%s", why);
    cr_assert_null(u.dir);
}

Test(fmu_archive, a_missing_path_is_refused_naming_it) {
    char path[PATH_MAX], why[512] = "";
    snprintf(path, sizeof path, "%s/absent.fmu", root);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(path, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why), TSR_E_LOAD);
    cr_assert(strstr(why, path) && strstr(why, "No such file"), "%s", why);
}

Test(fmu_archive, a_file_that_is_not_a_zip_is_refused) {
    char path[PATH_MAX], why[512] = "";
    snprintf(path, sizeof path, "%s/text.fmu", root);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("this is not a zip archive, only text\n", f);
    fclose(f);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(path, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why), TSR_E_LOAD);
    cr_assert(strstr(why, path) && strstr(why, "not a usable zip archive"), "%s", why);
    cr_assert_eq(count_scratch_folders(), 0);
}

Test(fmu_archive, an_archive_without_model_description_is_refused) {
    zentry es[] = {{.name = "resources/a.txt", .data = "a"},
                   {.name = "sub/modelDescription.xml", .data = md_xml}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "no modelDescription.xml");
}

Test(fmu_archive, an_entry_with_dot_dot_is_refused_and_nothing_lands_outside) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "../evil.txt", .data = "evil"}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "entry '../evil.txt' leaves the archive's folder");
}

Test(fmu_archive, a_dot_dot_deeper_in_the_name_is_refused) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "a/../../b", .data = "evil"}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "entry 'a/../../b' leaves the archive's folder");
}

Test(fmu_archive, an_absolute_name_is_refused_and_not_written) {
    char abs_name[PATH_MAX];
    snprintf(abs_name, sizeof abs_name, "%s/abs-evil.txt", root);
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = abs_name, .data = "evil"}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "has an absolute name");
    cr_assert_neq(access(abs_name, F_OK), 0);
}

Test(fmu_archive, empty_components_and_backslashes_are_refused) {
    zentry empty[] = {{.name = "modelDescription.xml", .data = md_xml},
                      {.name = "a//b.txt", .data = "x"}};
    expect_refused(empty, 2, FMU_MAX_UNPACKED_BYTES, "has an empty component");
    zentry backslash[] = {{.name = "modelDescription.xml", .data = md_xml},
                          {.name = "..\\evil.txt", .data = "x"}};
    expect_refused(backslash, 2, FMU_MAX_UNPACKED_BYTES, "has a backslash");
}

Test(fmu_archive, a_symbolic_link_entry_is_refused) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "resources/link", .data = "/etc/passwd", .kind = LINK_ENTRY}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "entry 'resources/link' is a symbolic link");
}

Test(fmu_archive, a_device_entry_is_refused) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "dev", .data = "", .kind = DEVICE_ENTRY}};
    expect_refused(es, 2, FMU_MAX_UNPACKED_BYTES, "is a device or other special file");
}

Test(fmu_archive, a_name_seen_twice_after_normalising_is_refused) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "resources/a.txt", .data = "first"},
                   {.name = "./resources/a.txt", .data = "second"}};
    expect_refused(es, 3, FMU_MAX_UNPACKED_BYTES, "entry 'resources/a.txt' is in the archive twice");
    zentry file_and_dir[] = {{.name = "modelDescription.xml", .data = md_xml},
                             {.name = "resources", .data = "a file"},
                             {.name = "resources/", .kind = DIR_ENTRY}};
    expect_refused(file_and_dir, 3, FMU_MAX_UNPACKED_BYTES, "is in the archive twice");
}

Test(fmu_archive, a_file_where_a_folder_must_go_is_refused) {
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "resources", .data = "a file"},
                   {.name = "resources/a.txt", .data = "below it"}};
    expect_refused(es, 3, FMU_MAX_UNPACKED_BYTES, "a file of the archive has that name");
}

Test(fmu_archive, more_bytes_than_the_limit_are_refused) {
    char big[4096];
    memset(big, 'z', sizeof big);
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "resources/big.bin", .data = big, .len = sizeof big}};
    expect_refused(es, 2, 1000, "entry 'resources/big.bin' takes the archive over 1000 bytes");
}

Test(fmu_archive, more_entries_than_allowed_are_refused) {
    size_t count = FMU_MAX_ENTRIES + 1;
    zentry *es = calloc(count, sizeof *es);
    char(*names)[24] = calloc(count, sizeof *names);
    cr_assert(es && names);
    es[0].name = "modelDescription.xml";
    es[0].data = md_xml;
    for (size_t i = 1; i < count; i++) {
        snprintf(names[i], sizeof names[i], "r/%zu", i);
        es[i].name = names[i];
    }
    expect_refused(es, count, FMU_MAX_UNPACKED_BYTES, "20001 entries, more than the 20000 allowed");
    free(names);
    free(es);
}

Test(fmu_archive, a_corrupted_byte_in_a_stored_entry_fails_its_crc) {
    static const char payload[] = "PAYLOAD-0123456789-PAYLOAD";
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml},
                   {.name = "resources/p.txt", .data = payload, .stored = 1}};
    char path[PATH_MAX], why[512] = "";
    make_zip("crc.fmu", es, 2, path, sizeof path);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    char bytes[4096];
    size_t len = fread(bytes, 1, sizeof bytes, f);
    char *at = memmem(bytes, len, payload, strlen(payload));
    cr_assert_not_null(at, "the stored entry's bytes are in the file");
    cr_assert_eq(fseek(f, (long)(at - bytes) + 10, SEEK_SET), 0);
    fputc('#', f);
    fclose(f);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(path, FMU_MAX_UNPACKED_BYTES, &u, why, sizeof why), TSR_E_LOAD, "%s",
                 why);
    cr_assert(strstr(why, "entry 'resources/p.txt' is damaged") && strstr(why, "CRC"), "%s", why);
    cr_assert_eq(count_scratch_folders(), 0);
    cr_assert_eq(count_strays(), 0);
}

static void put_le32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Every local and central header of the archive made to declare `size`
 * bytes unpacked (the compressed data left as it is). */
static void declare_size(const char *path, uint32_t size) {
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    static unsigned char bytes[1 << 16];
    size_t len = fread(bytes, 1, sizeof bytes, f);
    cr_assert_lt(len, sizeof bytes);
    int patched = 0;
    for (size_t i = 0; i + 46 <= len; i++) {
        if (memcmp(bytes + i, "PK\3\4", 4) == 0 && memcmp(bytes + i + 30, "resources/", 10) == 0) {
            put_le32(bytes + i + 22, size);
            patched++;
        } else if (memcmp(bytes + i, "PK\1\2", 4) == 0 &&
                   memcmp(bytes + i + 46, "resources/", 10) == 0) {
            put_le32(bytes + i + 24, size);
            patched++;
        }
    }
    cr_assert_eq(patched, 2, "the entry's two headers");
    cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
    cr_assert_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
}

Test(fmu_archive, a_header_that_understates_an_entry_does_not_get_past_the_limit) {
    static char big[8192];
    memset(big, 'z', sizeof big);
    zentry es[] = {{.name = "modelDescription.xml", .data = md_xml, .stored = 1},
                   {.name = "resources/big.bin", .data = big, .len = sizeof big}};
    char path[PATH_MAX], why[512] = "";
    make_zip("lying.fmu", es, 2, path, sizeof path);
    declare_size(path, 10);
    fmu_unpacked u = {0};
    cr_assert_eq(fmu_unpack(path, 1000, &u, why, sizeof why), TSR_E_LOAD, "%s", why);
    cr_assert(strstr(why, "entry 'resources/big.bin' holds more than the 10 bytes its header declares"),
              "%s", why);
    cr_assert_null(u.dir);
    cr_assert_eq(count_scratch_folders(), 0);
    cr_assert_eq(count_strays(), 0);
}
