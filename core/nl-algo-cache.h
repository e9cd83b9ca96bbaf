/* nl-algo-cache.h — the convolution algorithms cuDNN's autotuning chose,
 * kept in memory and on disk so each shape is timed once per device and
 * cuDNN version, not once per process (PyTorch's cudnn.benchmark times
 * again in every process). GLib only, no GPU: the CUDA module fills it,
 * the tests and the fuzzer run it on any machine.
 *
 * A key is the device's name, cuDNN's version, the operation (forward,
 * backward data, backward filter), a descriptor of the shapes, data type
 * and precision the caller composes, and whether only deterministic
 * algorithms were allowed. The file, by default
 * g_get_user_cache_dir()/netloom/cudnn-algos.txt, is text:
 *
 *   netloom-algo-cache 1
 *   <device>\t<cudnn>\t<op>\t<det>\t<shape>\t<algo>\t<math>\t<workspace>\t<ms>
 *   ...
 *   end <entries> <sha256 of every byte before this line>
 *
 * (device and shape escaped as g_strescape does). Writers hold an
 * exclusive flock on "<file>.lock", merge what is on disk with what they
 * hold and replace the file atomically, so two processes adding different
 * keys keep both. A file that is truncated, not this format or fails its
 * checksum is ignored with one warning and rewritten whole; a cache
 * folder that cannot be written leaves the cache working in memory, with
 * one warning. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NL_ALGO_OP_FWD,
  NL_ALGO_OP_BWD_DATA,
  NL_ALGO_OP_BWD_FILTER,
} NlAlgoOp;

typedef struct {
  const char *device;     /* the GPU's name, "NVIDIA H200" */
  int cudnn_version;      /* cudnnGetVersion () */
  NlAlgoOp op;
  const char *shape;      /* shapes, strides, dtypes, precision: the caller's words */
  gboolean deterministic; /* chosen among deterministic algorithms only */
} NlAlgoKey;

typedef struct {
  int algo;         /* the cudnnConvolution*Algo_t */
  int math_type;    /* the cudnnMathType_t it was timed with */
  guint64 workspace; /* bytes it needs */
  double ms;        /* its measured time, for the record */
} NlAlgoChoice;

typedef struct NlAlgoCache NlAlgoCache;

/* A cache backed by path (read now, when there); NULL path: memory only. */
NlAlgoCache *nl_algo_cache_new (const char *path);
void nl_algo_cache_free (NlAlgoCache *c);
/* The process's cache at the default path, made on first use; thread-safe. */
NlAlgoCache *nl_algo_cache_default (void);
/* g_get_user_cache_dir()/netloom/cudnn-algos.txt (free it). */
char *nl_algo_cache_default_path (void);

/* Thread-safe. lookup copies the choice into *out when the key is known. */
gboolean nl_algo_cache_lookup (NlAlgoCache *c, const NlAlgoKey *key, NlAlgoChoice *out);
/* Adds (or replaces) the key's choice in memory and writes it through to
 * the file, merged with what other processes wrote there meanwhile. */
void nl_algo_cache_store (NlAlgoCache *c, const NlAlgoKey *key, const NlAlgoChoice *choice);
guint nl_algo_cache_size (NlAlgoCache *c);

/* The file's format in and out, for the fuzzer and the tests: parse adds
 * the entries of text to c (nothing on error, which says what is wrong);
 * to_text gives c's entries in the file's format, sorted by key. */
gboolean nl_algo_cache_parse (NlAlgoCache *c, const char *text, gsize len, GError **error);
char *nl_algo_cache_to_text (NlAlgoCache *c);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlAlgoCache, nl_algo_cache_free)

G_END_DECLS
