/* nl-cuda-loader.c — nl-cuda.h as every binary links it: each call loads
 * the CUDA backend (libnetloom-cuda.so, with the runtime, cuBLAS and
 * cuDNN behind it) on first use and goes through its table. A CPU-only run
 * therefore never maps the CUDA libraries, and a binary built with CUDA
 * starts where they are missing. When the module cannot be had, every call
 * answers as a build without CUDA does, with the reason.
 *
 * Where the module is: $NETLOOM_CUDA_MODULE (a path), else the build tree's
 * (NL_CUDA_MODULE_BUILD, for uninstalled runs and the tests) when it
 * exists, else the installed one (NL_CUDA_MODULE_INSTALLED). It is never
 * unloaded: its contexts, pools and kernels live as long as the process. */
#include <gmodule.h>

#include "core/cuda/nl-cuda-module.h"

/* the same interned string as the module's, hence the same GQuark */
G_DEFINE_QUARK (nl-cuda-error-quark, nl_cuda_error)

static char *load_reason; /* why the backend is not there; set once by load () */
static const NlCudaModule *loaded; /* set once by load () when it succeeds */

static gpointer
load (gpointer data)
{
#ifndef NL_HAVE_CUDA
  load_reason = g_strdup ("netloom was built without CUDA (no nvcc, CUDA runtime, cuBLAS or cuDNN in "
                          "/usr/local/cuda)");
  return NULL;
#else
  const char *env = g_getenv ("NETLOOM_CUDA_MODULE");
  const char *path = env && *env ? env
                     : g_file_test (NL_CUDA_MODULE_BUILD, G_FILE_TEST_EXISTS) ? NL_CUDA_MODULE_BUILD
                                                                              : NL_CUDA_MODULE_INSTALLED;
  GModule *module;
  NlCudaModuleGetFunc get = NULL;
  const NlCudaModule *backend;

  /* g_module_open would retry with ".so" appended and name that file */
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      load_reason = g_strdup_printf ("the CUDA backend could not be loaded: %s: no such file", path);
      return NULL;
    }
  /* local: the module's symbols (the runtime's too) stay out of the
   * process's global scope */
  module = g_module_open (path, G_MODULE_BIND_LOCAL);
  if (!module)
    {
      load_reason = g_strdup_printf ("the CUDA backend could not be loaded: %s", g_module_error ());
      return NULL;
    }
  if (!g_module_symbol (module, NL_CUDA_MODULE_ENTRY, (gpointer *) &get))
    {
      load_reason = g_strdup_printf ("the CUDA backend could not be loaded: %s", g_module_error ());
      g_module_close (module);
      return NULL;
    }
  backend = get ();
  if (!backend || backend->size != sizeof (NlCudaModule))
    {
      load_reason = g_strdup_printf ("the CUDA backend could not be loaded: %s is from another version of netloom",
                                     path);
      g_module_close (module);
      return NULL;
    }
  g_module_make_resident (module);
  g_atomic_pointer_set (&loaded, backend);
  return (gpointer) backend;
#endif
}

/* NULL (load_reason says why) when there is no backend; loads it once,
 * thread-safe, lock-free afterwards */
static const NlCudaModule *
backend_get (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, load, NULL);
}

/* ---- the answers without a backend (nl-cuda-module.h's fallbacks) ---- */

static gboolean
unavailable (GError **error)
{
  g_set_error_literal (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE, load_reason);
  return FALSE;
}

static gpointer
unavailable_null (GError **error)
{
  unavailable (error);
  return NULL;
}

static int
no_devices (char **reason)
{
  if (reason)
    *reason = g_strdup (load_reason);
  return 0;
}

/* ---- trampolines ---- */

#define TRAMPOLINE(ret, name, params, args, fallback) \
  ret name params \
  { \
    const NlCudaModule *b = backend_get (); \
    if (b) \
      return b->name args; \
    return fallback; \
  }
#define VTRAMPOLINE(name, params, args) \
  void name params \
  { \
    const NlCudaModule *b = backend_get (); \
    if (b) \
      b->name args; \
  }
NL_CUDA_FUNCS (TRAMPOLINE, VTRAMPOLINE)

void
nl_cuda_shutdown (void)
{
  const NlCudaModule *b = g_atomic_pointer_get (&loaded);

  if (b)
    b->shutdown ();
}

gboolean
nl_cuda_compiled (void)
{
#ifdef NL_HAVE_CUDA
  return TRUE;
#else
  return FALSE;
#endif
}

const void *
nl_cuda_op_kernels (int op_id, const char *op_name)
{
  const NlCudaModule *b = backend_get ();

  if (!b || op_id < 0 || op_id >= b->n_op_kernels || g_strcmp0 (b->op_names[op_id], op_name) != 0)
    return NULL;
  return b->op_kernels[op_id];
}
