/* SPDX-License-Identifier: MIT */
/* Elements of an array (as Linux's linux/array_size.h). */
#ifndef CONCSCHED_ARRAY_SIZE_H
#define CONCSCHED_ARRAY_SIZE_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
