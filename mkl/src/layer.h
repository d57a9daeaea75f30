/*
 * Internal header of libspgemm_mkl, the MKL inspector-executor compatibility layer.
 *
 * The layer is a client of libspgemm's public C ABI (include/spgemm.h) and nothing else: it
 * keeps MKL's handle semantics (caller arrays, stages, ownership) and turns each product into
 * calls of spgemm_symbolic_op / spgemm_numeric / spgemm_multiply_op / spgemm_spmm_scaled.
 * Names here are not exported from the shared library (libspgemm_mkl.map).
 */
#ifndef SPGEMM_MKL_LAYER_H
#define SPGEMM_MKL_LAYER_H

#include <spgemm.h>

/* The process-wide libspgemm handle every call of the layer uses (created on first use;
 * libspgemm serialises calls on one handle, so callers' threads stay safe). NULL if it could
 * not be created; *status and spgemm_mkl__init_error() then say why. */
spgemm_handle_t *spgemm_mkl__handle(spgemm_status_t *status);
const char *spgemm_mkl__init_error(void);

/* Thread count MKL callers expect by default: MKL_NUM_THREADS, else OMP_NUM_THREADS (0 when
 * neither holds a positive count, or SPGEMM_NUM_THREADS is set, which libspgemm reads itself). */
int spgemm_mkl__env_threads(void);

#endif /* SPGEMM_MKL_LAYER_H */
