/* nl-test-util.h — helpers shared by the test programs. */
#pragma once

#include <glib.h>

#include "engine/nl-tensor.h"

/* Fill with uniform values in [lo, hi) from a fixed seed. */
void nl_test_fill_uniform (NlTensor *t, float lo, float hi, guint64 seed);
/* Largest |a - b| / (atol + rtol * |b|) over all elements; <= 1 means close. */
double nl_test_close_ratio (const float *a, const float *b, int64_t n, double atol, double rtol);
/* Assert every element of a is close to b, printing the first mismatch. */
#define nl_test_assert_close(a, b, n, atol, rtol) \
  nl_test_assert_close_impl (__FILE__, __LINE__, #a, (a), (b), (n), (atol), (rtol))
void nl_test_assert_close_impl (const char *file, int line, const char *what,
                                const float *a, const float *b, int64_t n, double atol, double rtol);
/* Path under the source tree: nl_test_source_path ("data/networks/mlp.json") */
char *nl_test_source_path (const char *rel);
/* Delete a directory and everything in it (symlinks are not followed). */
void nl_test_remove_tree (const char *dir);
