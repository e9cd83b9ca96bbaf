/* nl-sweep-space.h — the search space of a sweep: which settings vary and
 * over what. Written as `lr=log:1e-4:1e-1,optimizer=sgd|adam,fc1.units=int:64:512`:
 * a key is a run setting (nl-run-config.h's table, `-` read as `_`) or a
 * network parameter `node.param`; a value is a choice list `a|b|c` (one
 * value: a constant), `uniform:LO:HI`, `log:LO:HI` (log-uniform) or
 * `int:LO:HI`, each range with an optional `:N`, its number of grid points
 * (default 3). A point of the space is one double per parameter: the
 * value of a range, the index of a choice. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-network.h"
#include "engine/train/nl-run-config.h"

G_BEGIN_DECLS

typedef enum {
  NL_SWEEP_CHOICE,
  NL_SWEEP_UNIFORM,
  NL_SWEEP_LOG,
  NL_SWEEP_INT,
} NlSweepKind;

typedef struct {
  char *key;                 /* as the space names it: "lr", "fc1.units" */
  NlSweepKind kind;
  double lo, hi;             /* ranges, inclusive */
  int grid;                  /* grid points of a range (0: 3) */
  GStrv choices;             /* CHOICE: the values as written */
  int n_choices;
  const NlRunField *field;   /* a run setting, or NULL for a network parameter */
  char *node, *param;        /* a network parameter */
} NlSweepParam;

typedef struct {
  GPtrArray *params;         /* NlSweepParam*, in the order written */
} NlSweepSpace;

/* FALSE-y NULL with one message naming the key for a bad space: an
 * unknown setting, a malformed range, a value out of the setting's
 * limits, a key given twice. Network parameters are checked by
 * nl_sweep_space_check_network. */
NlSweepSpace *nl_sweep_space_parse (const char *text, GError **error);
void nl_sweep_space_free (NlSweepSpace *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSweepSpace, nl_sweep_space_free)

static inline int
nl_sweep_space_dim (const NlSweepSpace *s)
{
  return (int) s->params->len;
}

static inline const NlSweepParam *
nl_sweep_space_param (const NlSweepSpace *s, int i)
{
  return g_ptr_array_index (s->params, i);
}

/* Every `node.param` key names a node of NET and a parameter of its op,
 * and the ends of its range (each choice) are values the op accepts. */
gboolean nl_sweep_space_check_network (const NlSweepSpace *s, const NlNetwork *net, GError **error);

/* The point's values written into RC and NET (either may be NULL to skip
 * its keys). An optimizer is set first, so that the rates in the space
 * override its defaults. */
gboolean nl_sweep_space_apply (const NlSweepSpace *s, const double *point, NlRunConfig *rc, NlNetwork *net,
                               GError **error);
/* Parameter i's value at V as text: "0.00123", "adam", "128". */
char *nl_sweep_space_value_text (const NlSweepSpace *s, int i, double v);
/* {"lr":0.00123,"optimizer":"adam","fc1.units":128} and back (FALSE when
 * a key is missing or a value is not in the space). */
char *nl_sweep_space_point_to_json (const NlSweepSpace *s, const double *point);
gboolean nl_sweep_space_point_from_json (const NlSweepSpace *s, const char *json, double *point, GError **error);
/* "lr=0.00123 optimizer=adam fc1.units=128" */
char *nl_sweep_space_point_describe (const NlSweepSpace *s, const double *point);

/* A value in [0, 1) mapped onto parameter i (uniform in its scale). */
double nl_sweep_param_from_unit (const NlSweepParam *p, double u);
/* The grid of parameter i: *n values, ends included (log: geometric). */
double *nl_sweep_param_grid (const NlSweepParam *p, int *n);

G_END_DECLS
