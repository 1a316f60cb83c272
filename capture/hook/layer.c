/* layer.c: the row of each of libcuthook's layers (layer.h). */
#include <stdlib.h>

#include "gpu.h"
#include "hook.h"
#include "hooklib.h"
#include "layer.h"

/* A layer's row beyond its name and enum cut_layer: one per name of CUT_HOOK_LAYERS. */
#define HOOK_ROW_api .off_reason = hook_api_off_reason, .rest = true, .calls = true
#define HOOK_ROW_gpu                                                                               \
	.init = hook_gpu_init, .off_reason = hook_gpu_off_reason, .count_on = true,                \
	.stop = hook_gpu_stop, .trailer = hook_gpu_trailer, .fork = hook_gpu_fork
#define HOOK_ROW_nvtx .off_reason = hook_nvtx_off_reason, .unended = hook_nvtx_unended
#define HOOK_ROW_runtime .init = hook_rt_init, .off_reason = hook_rt_off_reason, .calls = true

#define HOOK_ROW(name, layer, only) {#name, layer, HOOK_ROW_##name},
const struct hook_layer hook_layers[] = {CUT_HOOK_LAYERS(HOOK_ROW)};
#undef HOOK_ROW
const size_t hook_nlayers = sizeof(hook_layers) / sizeof(hook_layers[0]);

static const char *
name_of(enum cut_layer l)
{
	for (size_t i = 0; i < hook_nlayers; i++)
		if (hook_layers[i].layer == l)
			return hook_layers[i].name;
	return NULL;
}

bool
hook_layer_wanted(enum cut_layer l)
{
	const char *list = getenv("CUTHOOK_LAYERS"), *name = name_of(l);
	return name && (!list || !*list || cut_hook_listed(list, name));
}

bool
hook_layer_skipped(enum cut_layer l)
{
	const char *name = name_of(l);
	return name && cut_hook_listed(getenv("CUTHOOK_SKIP"), name);
}
