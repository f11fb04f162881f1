// SPDX-License-Identifier: MIT
/*
 * A strategy's summary of a campaign's decision logs (declog_summary.h).
 */
#include "strategies/declog_summary.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/tsa.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/xalloc.h"

struct declog_summary {
	/* How the runs' logged releases were chosen (tsa: enum tsa_rule). */
	uint64_t rules[TSA_RULE__COUNT];
	bool any;
};

struct declog_summary *declog_summary_new(const char *strategy)
{
	/* tsa and tsa-h log DECLOG_RELEASE with the rule in arg. */
	if (!strategy || strncmp(strategy, "tsa", 3))
		return NULL;
	return xcalloc(1, sizeof(struct declog_summary));
}

void declog_summary_add(struct declog_summary *s, const struct declog *dl)
{
	size_t k;

	if (!s)
		return;
	for (k = 0; k < dl->n; k++) {
		if (dl->entries[k].action != DECLOG_RELEASE || dl->entries[k].arg < TSA_RULE_1 ||
		    dl->entries[k].arg > TSA_RULE_RANDOM)
			continue;
		s->rules[dl->entries[k].arg]++;
		s->any = true;
	}
}

void declog_summary_text(const struct declog_summary *s, FILE *f)
{
	if (!s || !s->any)
		return;
	fprintf(f, "releases:  rule 1 %llu, rule 2 %llu, rule 3 %llu, random %llu\n",
		(unsigned long long)s->rules[TSA_RULE_1], (unsigned long long)s->rules[TSA_RULE_2],
		(unsigned long long)s->rules[TSA_RULE_3],
		(unsigned long long)s->rules[TSA_RULE_RANDOM]);
}

void declog_summary_json(const struct declog_summary *s, struct json *j)
{
	if (!s || !s->any) {
		json_kv_null(j, "releases");
		return;
	}
	json_obj_begin(j, "releases");
	json_kv_uint(j, "rule1", s->rules[TSA_RULE_1]);
	json_kv_uint(j, "rule2", s->rules[TSA_RULE_2]);
	json_kv_uint(j, "rule3", s->rules[TSA_RULE_3]);
	json_kv_uint(j, "random", s->rules[TSA_RULE_RANDOM]);
	json_obj_end(j);
}

void declog_summary_free(struct declog_summary *s)
{
	free(s);
}
