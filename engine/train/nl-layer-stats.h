/* nl-layer-stats.h — what each layer does during training, read from the
 * planned buffers on chosen steps only: per weight tensor its norm, its
 * gradient's norm, the update-to-weight ratio and histograms of both; per
 * node output its mean, standard deviation and share of exact zeros. And
 * where a NaN or Inf was first made: the step replayed with every node's
 * output checked, forward in order, then backward in order. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-program.h"

G_BEGIN_DECLS

#define NL_LAYER_STATS_BINS 32

typedef struct {
  const char *node;              /* the graph node's id ("fc1"), interned */
  char *tensor;                  /* "fc1.weight" */
  double weight_norm, grad_norm; /* L2, of the weights the step's gradient was taken at */
  double update_ratio;           /* ||w after - w before|| / ||w before|| (NAN: ||w|| = 0) */
  float w_lo, w_hi, g_lo, g_hi;  /* the histograms' ranges: min..max at the step */
  guint32 w_counts[NL_LAYER_STATS_BINS], g_counts[NL_LAYER_STATS_BINS];
} NlTensorStats;

typedef struct {
  const char *node;              /* interned */
  gboolean seen;                 /* the node ran forward on this step */
  double mean, std;              /* over every element of the output, batch included */
  double dead_fraction;          /* share of elements exactly 0 */
} NlActivationStats;

typedef struct {
  int64_t step;                  /* the run's update count */
  int epoch;                     /* 1-based (set by the trainer) */
  int n_tensors, n_nodes;
  const NlTensorStats *tensors;
  const NlActivationStats *nodes;
} NlLayerStatsReport;

typedef enum {
  NL_NONFINITE_NONE,
  NL_NONFINITE_FORWARD = 1,      /* the metric's value: layer/<node>/first_nonfinite */
  NL_NONFINITE_BACKWARD = 2,
} NlNonfiniteWhere;

typedef struct {
  NlNonfiniteWhere where;
  const char *node;              /* interned */
  gboolean is_nan;               /* else an infinity */
} NlNonfinite;

typedef struct NlLayerStats NlLayerStats;

NlLayerStats *nl_layer_stats_new (NlModel *model);
void nl_layer_stats_free (NlLayerStats *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlLayerStats, nl_layer_stats_free)
/* A statistics step with program p: before its forward (the activations
 * are read as each node writes them). */
void nl_layer_stats_begin (NlLayerStats *s, NlProgram *p);
/* After its backward, before the update: gradients and weights (a copy of
 * each weight is kept for the update ratio). grad_scale: the loss scale
 * the gradients carry (1: none). */
gboolean nl_layer_stats_before_update (NlLayerStats *s, NlProgram *p, float grad_scale, GError **error);
/* After the update was pushed: waits for it, then the update ratios; the
 * step's report, valid until the next step. */
gboolean nl_layer_stats_after_update (NlLayerStats *s, int64_t step, const NlLayerStatsReport **report,
                                      GError **error);

/* Replays the step p just ran (its input and label still in place) with
 * every node's output checked, and says where the first NaN or Inf was
 * made: forward (in execution order), else backward (in its order). */
gboolean nl_layer_stats_find_nonfinite (NlProgram *p, NlModel *model, guint64 step, NlNonfinite *found,
                                        GError **error);

/* A fixed-bin histogram of the finite values of x over [*lo, *hi] = their
 * min..max (0..0 when none); a value at hi counts in the last bin, and all
 * go to bin 0 when min = max. */
void nl_layer_stats_histogram (const float *x, int64_t n, float *lo, float *hi, guint32 counts[NL_LAYER_STATS_BINS]);

G_END_DECLS
