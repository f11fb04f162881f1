// SPDX-License-Identifier: MIT
/* HTML escaping (html.h). */
#include "lib/html.h"

void html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}
