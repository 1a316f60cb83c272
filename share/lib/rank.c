/* rank.c: rank, local rank and world size from a launcher's environment variables. */
#include <string.h>

#include "rank.h"

static const char *const rank_vars[] = {"RANK",      "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "PMIX_RANK", "SLURM_PROCID",         "MV2_COMM_WORLD_RANK",
                                        NULL};
static const char *const local_vars[] = {
    "LOCAL_RANK",    "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
    "SLURM_LOCALID", "MV2_COMM_WORLD_LOCAL_RANK",  NULL};
static const char *const size_vars[] = {"WORLD_SIZE",   "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "SLURM_NTASKS", "MV2_COMM_WORLD_SIZE",  NULL};

static int64_t
first_number(const char *const *vars, cut_env_get *get, void *arg)
{
	for (; *vars; vars++) {
		const char *v = get(*vars, arg);
		if (!v || !*v)
			continue;
		int64_t n = 0;
		size_t i = 0;
		for (; v[i] >= '0' && v[i] <= '9' && i < 9; i++)
			n = n * 10 + (v[i] - '0');
		if (!v[i])
			return n;
	}
	return -1;
}

bool
cut_rank_read(struct cut_rank *r, cut_env_get *get, void *arg)
{
	r->rank = first_number(rank_vars, get, arg);
	r->local_rank = first_number(local_vars, get, arg);
	r->world_size = first_number(size_vars, get, arg);
	return r->rank >= 0;
}

const char *
cut_env_block_get(const char *name, void *arg)
{
	const struct cut_env_block *b = arg;
	size_t n = strlen(name);
	for (size_t i = 0; i < b->len;) {
		const char *s = b->s + i;
		size_t l = strnlen(s, b->len - i);
		if (l > n && memcmp(s, name, n) == 0 && s[n] == '=')
			return s + n + 1;
		i += l + 1;
	}
	return NULL;
}
