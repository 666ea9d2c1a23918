/* SPDX-License-Identifier: MIT */
/* A shared object checked before the dynamic loader maps it: the loader
 * trusts the file, and a truncated one makes it fault (SIGBUS) inside
 * dlopen, which would end the host. Only what the loader will touch is
 * checked: the ELF header, the program headers and the file extent of
 * every loadable segment. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/backend.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#endif

#if UINTPTR_MAX == UINT64_MAX
typedef Elf64_Ehdr elf_ehdr;
typedef Elf64_Phdr elf_phdr;
#define HOST_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr elf_ehdr;
typedef Elf32_Phdr elf_phdr;
#define HOST_CLASS ELFCLASS32
#endif

static int read_at(int fd, void *buf, size_t bytes, off_t at) {
    size_t done = 0;
    while (done < bytes) {
        ssize_t got = pread(fd, (char *)buf + done, bytes - done, at + (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

static int check_fd(int fd, char *why, size_t n) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "it is not a regular file");
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    elf_ehdr eh;
    if (size < sizeof eh || read_at(fd, &eh, sizeof eh, 0) != 0) {
        snprintf(why, n, "it is %llu bytes, too short for an ELF header",
                 (unsigned long long)size);
        return -1;
    }
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(why, n, "it is not an ELF shared object (no ELF magic)");
        return -1;
    }
    if (eh.e_ident[EI_CLASS] != HOST_CLASS) {
        snprintf(why, n, "it is a %d-bit ELF file, this host is %d-bit",
                 eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32, HOST_CLASS == ELFCLASS64 ? 64 : 32);
        return -1;
    }
#ifdef HOST_MACHINE
    if (eh.e_machine != HOST_MACHINE) {
        snprintf(why, n, "it is built for another machine (ELF e_machine %u, this host %u)",
                 (unsigned)eh.e_machine, (unsigned)HOST_MACHINE);
        return -1;
    }
#endif
    if (eh.e_type != ET_DYN) {
        snprintf(why, n, "it is an ELF file of type %u, not a shared object", (unsigned)eh.e_type);
        return -1;
    }
    if (eh.e_phentsize != sizeof(elf_phdr) || eh.e_phnum == 0 ||
        eh.e_phoff > size || (uint64_t)eh.e_phnum * sizeof(elf_phdr) > size - eh.e_phoff) {
        snprintf(why, n, "it is truncated or corrupt: its program headers (%u at byte %llu) do "
                         "not lie inside its %llu bytes",
                 (unsigned)eh.e_phnum, (unsigned long long)eh.e_phoff, (unsigned long long)size);
        return -1;
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        elf_phdr ph;
        if (read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != 0) {
            snprintf(why, n, "cannot read its program header %u", i);
            return -1;
        }
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
            snprintf(why, n, "it is truncated: its %s segment %u ends at byte %llu, the file has "
                             "%llu bytes",
                     ph.p_type == PT_LOAD ? "loadable" : "dynamic", i,
                     (unsigned long long)ph.p_offset + (unsigned long long)ph.p_filesz,
                     (unsigned long long)size);
            return -1;
        }
    }
    return 0;
}

int backend_check_elf(const char *path, char *why, size_t n) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, n, "%s", strerror(errno));
        return -1;
    }
    int rc = check_fd(fd, why, n);
    close(fd);
    return rc;
}
