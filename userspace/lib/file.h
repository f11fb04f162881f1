/* SPDX-License-Identifier: MIT */
/* One file's bytes: read whole, first line, written out, hashed. */
#ifndef CONCSCHED_FILE_H
#define CONCSCHED_FILE_H

#include <stddef.h>

/* Read a whole small file into a malloc'd NUL-terminated buffer; NULL on error. */
char *file_read(const char *path, size_t *len);
/* First line of a small file, trailing newline removed; NULL on error. */
char *file_read_line(const char *path);
/* Write all n bytes to fd (retrying short writes and EINTR); 0 or -errno. */
int file_write_all(int fd, const void *p, size_t n);
/* SHA-256-free content hash of a file (fnv1a64 over the bytes), 16 hex digits. */
int file_hash_hex(const char *path, char out[17]);

#endif
