/* nl-test-util.h — helpers shared by the test programs. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-network.h"
#include "core/nl-tensor.h"
#include "engine/train/nl-trainer.h"

/* Fill with uniform values in [lo, hi) from a fixed seed. */
void nl_test_fill_uniform (NlTensor *t, float lo, float hi, guint64 seed);
/* Largest |a - b| / (atol + rtol * |b|) over all elements; <= 1 means close. */
double nl_test_close_ratio (const float *a, const float *b, int64_t n, double atol, double rtol);
/* Assert every element of a is close to b, printing the first mismatch. */
#define nl_test_assert_close(a, b, n, atol, rtol) \
  nl_test_assert_close_impl (__FILE__, __LINE__, #a, (a), (b), (n), (atol), (rtol))
void nl_test_assert_close_impl (const char *file, int line, const char *what,
                                const float *a, const float *b, int64_t n, double atol, double rtol);
/* Ends the test program when ok is FALSE, naming what failed and why. */
void nl_test_ok_or_die (gboolean ok, GError *error, const char *what);
/* The context of cuda:0, or NULL with *reason saying why there is none (no
 * device, or a device whose context failed). */
struct NlCudaCtx *nl_test_cuda_open (char **reason);
/* TRUE when cuda is there; else skips the test, printing the reason. */
gboolean nl_test_need_cuda (struct NlCudaCtx *cuda, const char *reason);
/* A chain of n nodes (at least) with Dense/Activation/Add residual blocks
 * and 3-way Concat branches: what the layout tests and bench-layout use. */
NlNetwork *nl_test_generated_network (int n);
/* "8x3x30x30" as a shape (the op case table, nl-op-cases.c). */
NlShape nl_test_parse_shape (const char *s);
/* Whether a case whose parameters are params (name, value pairs, NULL-
 * ended) runs choice j of the enum parameter s: given by name, or left out
 * and j is the default. */
gboolean nl_test_params_choose (const char *const *params, const NlParamSpec *s, int j);
/* The Python that can import `modules` ("torch, numpy"): Debian's
 * /usr/bin/python3 first (python3-torch and python3-onnx are its), then
 * python3 on PATH; NULL (the caller skips) when neither can. g_free. */
char *nl_test_find_python (const char *modules);

/* Path under the source tree: nl_test_source_path ("data/networks/mlp.json") */
char *nl_test_source_path (const char *rel);
/* Delete a directory and everything in it (symlinks are not followed). */
void nl_test_remove_tree (const char *dir);
/* what is in dir, leaving dir itself */
void nl_test_clear_dir (const char *dir);
/* A network template of data/networks (name without ".json"); fails the
 * test when it does not load. */
NlNetwork *nl_test_load_template (const char *name);
/* The JSON of a long chain network: Input (16 features), n - 2 ReLU
 * Activations "a1".."a<n-2>", each with a canvas position, and a 10-unit
 * Dense "fc"; n >= 3 nodes, n - 1 edges. What big-network tests and
 * bench-network-open load. */
char *nl_test_chain_network_json (int n);

/* The tiny runs that evaluation tests train: a generated 10-class dataset
 * of NL_TEST_IDX_SIDE x NL_TEST_IDX_SIDE images in the MNIST (IDX) layout,
 * n_train training and n_test test samples written into dir, from fixed
 * seeds. Sample i is of class (7i + 3) % 10, drawn as a faint pair of rows
 * at 2 * class under heavy noise: some test samples are misclassified. */
#define NL_TEST_IDX_SIDE 20
void nl_test_write_idx_dataset (const char *dir, int n_train, int n_test);
/* The same with side x side images (28: what the templates' Input expects). */
void nl_test_write_idx_dataset_sized (const char *dir, int side, int n_train, int n_test);
/* The training of those runs on dataset: 3 epochs of batches of 32 (eval
 * batches of 100), SGD at 0.05, seed 5, loading in the training thread. */
void nl_test_tiny_train_config (NlRunConfig *cfg, const char *dataset);
