/* SPDX-License-Identifier: MIT */
/*
 * TSR_API marks the functions that libtessera exports. The library is
 * compiled with hidden visibility and links with a version script
 * (cmake/libtessera.map): each function declared with TSR_API in
 * <tessera/tessera.h>, <tessera/payload.h> and <tessera/gradcheck.h> is one
 * of its versioned symbols, and nothing else is exported. A host or a
 * plugin compiled with -fvisibility=hidden sees the same default
 * visibility on these declarations. Included by those headers.
 */
#ifndef TESSERA_EXPORT_H
#define TESSERA_EXPORT_H

#ifndef TSR_API
#if defined(__GNUC__)
#define TSR_API __attribute__((visibility("default")))
#else
#define TSR_API
#endif
#endif

#endif /* TESSERA_EXPORT_H */
