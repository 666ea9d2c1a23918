/* SPDX-License-Identifier: MIT */
/*
 * libclash: one source, built twice (CLASH_VERSION 1 and 2) into two
 * libraries with the same SONAME and the same symbols. Two plugins, each
 * linked against one of them, cannot both get their own copy in one
 * link-map namespace: that is the clash isolated and worker modes avoid.
 */
#ifndef CLASH_VERSION
#error "build with -DCLASH_VERSION=N"
#endif

__attribute__((visibility("default"))) double clash_value(void);

double clash_value(void) { return CLASH_VERSION; }
