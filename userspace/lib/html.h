/* SPDX-License-Identifier: MIT */
/* HTML escaping. */
#ifndef CONCSCHED_HTML_H
#define CONCSCHED_HTML_H

#include <stdio.h>

/* s with <, >, &, " and ' escaped for HTML/SVG text and attributes. */
void html_escape(FILE *f, const char *s);

#endif
