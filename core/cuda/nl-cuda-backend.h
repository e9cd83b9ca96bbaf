/* nl-cuda-backend.h — the CUDA GPUs as backends (core/nl-backend.h): one
 * instance per device, over the CUDA module's calls (nl-cuda.h). */
#pragma once

#include "core/nl-backend-reg.h"

G_BEGIN_DECLS

/* The CUDA GPUs' row of the registry ("cuda", "cuda:N"). */
extern const NlBackendReg nl_cuda_backend_reg;

/* cuda:index's backend, made on first use and kept for the process;
 * NULL with NL_DEVICE_ERROR_UNAVAILABLE saying why when there is none. */
NlBackend *nl_cuda_backend_get (int index, GError **error);
/* Forgets the backends and frees the devices' contexts (nl_cuda_shutdown). */
void nl_cuda_backend_shutdown (void);

G_END_DECLS
