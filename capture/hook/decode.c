/* decode.c: a wrapped call's args object, and the handles it named, by the decoder both capture
 * paths share (capture/api/call.h), from the wrapper's argument words. */
#include <string.h>

#include "hook.h"

/* Per id, resolved once: what its calls say and what must be read of them. */
static struct cut_api_desc descs[HOOK_NAPI];
unsigned char hook_decodes[HOOK_NAPI];

void
hook_decode_init(void)
{
	for (int i = 0; i < HOOK_NAPI; i++) {
		cut_api_describe(&descs[i], hook_names[i]);
		hook_decodes[i] = descs[i].decodes;
	}
}

void
hook_decode(enum hook_id id, CUresult r, const uint64_t *a, struct cut_buf *b,
            struct hook_symbol *sym, struct hook_symbol *asked)
{
	const struct cut_api_desc *d = &descs[id];
	struct cut_call c;
	struct cut_api_sym s;
	struct hook_names hn;
	cut_api_read(d, &c, a, d->nparams, r);
	hook_names_begin(&hn);
	cut_api_args(d, &c, 0, &hn.names, b, &s);
	*asked = hn.asked;
	sym->handle = 0;
	if (s.handle) {
		const struct cut_name *n = hook_name_set(s.handle, s.name, s.len);
		if (n)
			*sym = (struct hook_symbol){s.handle, n->raw, s.kind, hook_names[id]};
	}
}
