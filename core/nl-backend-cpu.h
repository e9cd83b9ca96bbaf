/* nl-backend-cpu.h — the CPU backend's members that live in their own
 * files (private to core/). */
#pragma once

#include "core/nl-backend-reg.h"

G_BEGIN_DECLS

/* the CPU's row of the registry (nl-backend-cpu-device.c) */
extern const NlBackendReg nl_backend_cpu_reg;

gboolean nl_backend_cpu_optim_update (NlBackend *b, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale,
                                      float *w, const float *g, float *const *state, int64_t n, GError **error);
gboolean nl_backend_cpu_sum_squares (NlBackend *b, const float *const *x, const int64_t *n, int n_buffers,
                                     double *out, GError **error);

G_END_DECLS
