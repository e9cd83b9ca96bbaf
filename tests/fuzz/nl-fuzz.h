/* nl-fuzz.h — what the libFuzzer targets of tests/fuzz share: GLib
 * criticals and warnings made fatal (so they are findings), and one
 * temporary directory per process for readers that need a path. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

/* libFuzzer's entry point, which every target defines (and the replay
 * runner, fuzz-replay.c, calls). */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Once per process: fatal criticals and warnings, the temporary directory
 * (removed at exit). Every target calls it first; cheap after the first. */
void nl_fuzz_init (void);
/* The per-process temporary directory. */
const char *nl_fuzz_dir (void);
/* DIR/REL (REL may name subfolders, created here), written with data;
 * g_free the path. Aborts when the write fails: that is the harness's
 * fault, not the input's. */
char *nl_fuzz_write (const char *rel, const void *data, size_t size);
/* Empties the temporary directory (between inputs that leave files). */
void nl_fuzz_clear (void);

G_END_DECLS

/* The small model that checkpoints and weights files load into (and the
 * seeds are saved from, make-seeds.c): a convolution, batch norm and two
 * dense layers on 1x4x4 samples. */
#define NL_FUZZ_SMALL_NETWORK \
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"small\",\"nodes\":[" \
  "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[1,4,4]}}," \
  "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":2,\"kernel\":[3,3]}}," \
  "{\"id\":\"bn\",\"op\":\"BatchNorm\"}," \
  "{\"id\":\"flat\",\"op\":\"Flatten\"}," \
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":3}}," \
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":2,\"use_bias\":false}}]," \
  "\"edges\":[\"data:0 -> conv:0\",\"conv:0 -> bn:0\",\"bn:0 -> flat:0\",\"flat:0 -> fc1:0\"," \
  "\"fc1:0 -> fc2:0\"]}"

struct NlDataset;
/* Reads the first samples and the last one of ds as the loader would, and
 * aborts when a dataset hands out what it promised not to: a label outside
 * [0, n_classes) or not a whole number (a non-finite one for regression),
 * or a sample value that is not finite. Samples bigger than the harness's
 * memory bound are skipped. */
void nl_fuzz_read_samples (struct NlDataset *ds);
