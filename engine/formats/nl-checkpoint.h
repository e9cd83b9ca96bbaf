/* nl-checkpoint.h — saving and resuming training, and exchanging weights.
 *
 * A checkpoint is one safetensors file (nl-safetensors.h) holding
 * everything needed to resume bit for bit:
 *   "<node>.<weight>"               weights ("fc1.weight", "fc1.bias")
 *   "<node>.<aux>"                  running statistics ("bn1.running_mean")
 *   "optimizer/<weight name>/<s>"   optimizer state s of that weight ("optimizer/fc1.weight/0")
 * and metadata (all strings): format "netloom.checkpoint", version "2",
 * epoch, updates, seed, optimizer, network_hash, extra (when set), and
 * crc32: zlib's crc32 of the data section (the tensor bytes), 8 lowercase
 * hex digits, checked on load (version 1 checkpoints have none and load
 * unchecked).
 * A checkpoint taken inside an epoch (by time) also holds where in it:
 * "batch" (batches of that epoch done) and the epoch's running sums
 * "epoch_loss", "epoch_seen", "epoch_correct", "epoch_counted",
 * "epoch_seconds"; fp16 runs add "loss_scale_good_steps" and
 * "loss_scale_bad_steps" so the scale moves on exactly as if never stopped.
 *
 * network_hash is the SHA-256 of nl_network_to_json() of the network with
 * canvas positions and the network name left out, so moving nodes or
 * renaming the document keeps its checkpoints loadable.
 *
 * Weights files ("netloom.weights") hold weights and running statistics
 * only and are what other tools exchange: any safetensors reader reads them.
 *
 * Every function first waits for the model's pending scheduler work
 * (nl_model_sync), so queued weight updates land before weights are read or
 * overwritten. Loading validates the whole file against the model before
 * copying anything: on error the model is unchanged. */
#pragma once

#include <glib.h>

#include "engine/formats/nl-safetensors.h"
#include "engine/graph/nl-model.h"

G_BEGIN_DECLS

#define NL_CHECKPOINT_ERROR (nl_checkpoint_error_quark ())
GQuark nl_checkpoint_error_quark (void);
/* Files that are not valid safetensors fail with NL_SAFETENSORS_ERROR. */
typedef enum {
  NL_CHECKPOINT_ERROR_FORMAT,   /* valid safetensors, but not a netloom checkpoint (metadata) */
  NL_CHECKPOINT_ERROR_VERSION,  /* written by a newer netloom */
  NL_CHECKPOINT_ERROR_MISMATCH, /* a tensor missing, extra, of another shape or dtype */
  NL_CHECKPOINT_ERROR_NETWORK,  /* saved from another network (hash) */
  NL_CHECKPOINT_ERROR_DAMAGED,  /* its tensor bytes fail their checksum */
} NlCheckpointError;

#define NL_CHECKPOINT_FORMAT "netloom.checkpoint"
#define NL_WEIGHTS_FORMAT "netloom.weights"
#define NL_CHECKPOINT_VERSION 2
#define NL_CHECKPOINT_STATE_PREFIX "optimizer/"

typedef struct NlTrainPosition {
  int epoch;
  gint64 updates;     /* optimizer steps done, t */
  guint64 seed;
  char *optimizer;    /* kind name ("adam"); NULL saves as "" */
  char *extra_json;   /* opaque to the checkpoint (schedule state ...); NULL: none */
  double loss_scale;  /* fp16's dynamic loss scale for the next step; 0: none (not stored) */
  gint64 skipped;     /* fp16 steps skipped for overflow so far (with loss_scale) */
  int good_steps, bad_steps; /* fp16: the scale's streaks (with loss_scale) */
  /* Inside epoch `epoch` (0-based, the next one to finish): batches done
   * (0: at the epoch's start, nothing below is stored) and the epoch's
   * sums so far, so that its report comes out as if never stopped. */
  gint64 batch;
  double epoch_loss;      /* summed batch losses */
  gint64 epoch_seen;      /* samples */
  double epoch_correct;   /* the accuracy metric's sum and count */
  gint64 epoch_counted;
  double epoch_seconds;   /* training time so far */
} NlTrainPosition;

void nl_train_position_clear (NlTrainPosition *pos);

/* SHA-256 hex of the network's structure (see above). */
char *nl_checkpoint_network_hash (const NlNetwork *net);

/* Every weight, aux and optimizer state tensor the model holds; pos NULL
 * saves a zero position. */
GBytes *nl_checkpoint_save (const NlModel *m, const NlTrainPosition *pos, GError **error);
/* Validates then loads into m, whose optimizer state must already be
 * prepared like the saved one: every tensor name, dtype and shape must match
 * exactly (errors name the tensor: "checkpoint tensor 'fc1.weight' has
 * shape (256, 700) but the network needs (256, 784)"), and the network hash
 * unless allow_other_network. pos_out (may be NULL) is overwritten on
 * success only; free its strings with nl_train_position_clear.
 * Optimizer state is checked by name and shape only: two kinds with as many
 * states (Adam and RMSProp with momentum) fit each other, so the caller
 * compares pos_out->optimizer with the optimizer it resumes with. */
gboolean nl_checkpoint_load (NlModel *m, GBytes *blob, gboolean allow_other_network, NlTrainPosition *pos_out,
                             GError **error);

/* Whether blob is a whole netloom checkpoint as saved: valid safetensors,
 * format and version readable, its data matching its crc32 (version 2).
 * Needs no model: a damaged checkpoint fails here (with
 * NL_CHECKPOINT_ERROR_DAMAGED when only its checksum tells), one that is
 * sound but of another network does not. nl_checkpoint_load and
 * nl_weights_export_from_checkpoint check the same. */
gboolean nl_checkpoint_verify (GBytes *blob, GError **error);

/* Weights and running statistics (no optimizer state) in memory, with
 * metadata network_hash, crc32 (as checkpoints) and METADATA: key, value
 * pairs, NULL-terminated, "format" among them. The base of files that carry
 * a model's weights with more (netloom.int8, nl-int8-model.h). */
GBytes *nl_weights_save_bytes (const NlModel *m, const char *const *metadata, GError **error);
/* Checks ST (parsed from BLOB) against m in full: its network_hash is m's,
 * it holds every weight and running statistic of m by name, dtype and
 * shape and nothing else, and its crc32 matches; then loads it. On error
 * m is unchanged (NL_CHECKPOINT_ERROR codes; messages call it WHAT, "INT8 model"). */
gboolean nl_weights_load_parsed (NlModel *m, const NlSafetensors *st, GBytes *blob, const char *what,
                                 GError **error);

/* Weights and running statistics, no optimizer state, written atomically. */
gboolean nl_weights_export (const NlModel *m, const char *path, GError **error);
/* The same from a checkpoint blob (its optimizer tensors filtered out). */
gboolean nl_weights_export_from_checkpoint (GBytes *checkpoint, const char *path, GError **error);
/* Loads the tensors of path into m by name (weights and running statistics;
 * optimizer state is left alone). Appends newly allocated names (give the
 * arrays g_free as free function; either may be NULL) of tensors the model
 * has but the file lacks to missing, and those the file has but the model
 * lacks to extra, on success and on error alike. A dtype or shape mismatch
 * is always an error; missing is one unless allow_missing, extra unless
 * ignore_extra (Gluon's load_parameters flags). On error m is unchanged. */
gboolean nl_weights_import (NlModel *m, const char *path, gboolean allow_missing, gboolean ignore_extra,
                            GPtrArray *missing, GPtrArray *extra, GError **error);

G_END_DECLS
