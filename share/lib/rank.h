/* rank.h: a process's place in a distributed job (rank, local rank, world size) from the usual
 * launcher variables of its environment: one list for both capture paths (cut-events(5)). */
#ifndef CUT_RANK_H
#define CUT_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each member -1 when no variable of its list is set to a number. */
struct cut_rank {
	int64_t rank, local_rank, world_size;
};

/* Reads a variable: the value of name, or NULL when it is unset. */
typedef const char *cut_env_get(const char *name, void *arg);

/*
 * Fills *r from the environment that get reads (arg passed on): each member from the first
 * variable of its list set to a decimal number of at most 9 digits, in this order:
 * rank: RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID, MV2_COMM_WORLD_RANK;
 * local_rank: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID,
 * MV2_COMM_WORLD_LOCAL_RANK; world_size: WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 * SLURM_NTASKS, MV2_COMM_WORLD_SIZE. Returns whether a rank was found. Allocates nothing.
 */
bool cut_rank_read(struct cut_rank *r, cut_env_get *get, void *arg);

/* An environment block as /proc/PID/environ holds it: NUL-terminated NAME=value strings. */
struct cut_env_block {
	const char *s;
	size_t len;
};
/* A cut_env_get over a struct cut_env_block (arg). */
const char *cut_env_block_get(const char *name, void *arg);

#endif
