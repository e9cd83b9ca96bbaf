/* nl-lr-schedule.c — learning-rate schedules. Rates are computed in double
 * from the step number alone (no state), so any step can be asked for in
 * any order, e.g. when a run resumes. */
#include "engine/train/nl-lr-schedule.h"
#include "core/nl-spec.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

G_DEFINE_QUARK (nl-lr-schedule-error-quark, nl_lr_schedule_error)

typedef enum {
  SCHED_CONSTANT,
  SCHED_FACTOR,
  SCHED_MULTIFACTOR,
  SCHED_COSINE,
  SCHED_POLY,
} SchedKind;

struct NlLrSchedule {
  SchedKind kind;
  double base;
  int64_t total;
  int64_t step;    /* factor */
  double factor;   /* factor, multifactor */
  double stop;     /* factor */
  int64_t *steps;  /* multifactor */
  int n_steps;
  double final;    /* cosine, poly */
  double power;    /* poly */
  int64_t warmup;
  double warmup_begin;
  char *desc;
};

/* learning-rate schedule "SPEC": what is wrong */
static const NlSpecErrors spec_errors = {
  nl_lr_schedule_error_quark, NL_LR_SCHEDULE_ERROR_INVALID, "learning-rate schedule \"", "\"",
};

static gboolean
parse_count (const char *s, int64_t min, int64_t *out)
{
  guint64 v;
  if (!g_ascii_string_to_unsigned (s, 10, (guint64) min, G_MAXINT64, &v, NULL))
    return FALSE;
  *out = (int64_t) v;
  return TRUE;
}

static void
append_number (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%g", v));
}

static gboolean
parse_main (NlLrSchedule *s, const char *spec, char *main, GError **error)
{
  g_auto (GStrv) p = g_strsplit (main, ":", -1);
  int n_opts;
  const char *name;

  for (int i = 0; p[i]; i++)
    g_strstrip (p[i]);
  n_opts = (int) g_strv_length (p) - 1;
  name = p[0];

#define TOO_MANY(max, usage)                                                              \
  if (n_opts > (max))                                                                     \
    return nl_spec_fail (error, &spec_errors, spec, "unexpected '%s' (usage: %s)", p[(max) + 1], usage)

  if (g_ascii_strcasecmp (name, "constant") == 0)
    {
      TOO_MANY (0, "constant");
      s->kind = SCHED_CONSTANT;
    }
  else if (g_ascii_strcasecmp (name, "factor") == 0)
    {
      const char *usage = "factor:STEP:FACTOR[:STOP_LR]";
      TOO_MANY (3, usage);
      s->kind = SCHED_FACTOR;
      s->stop = 1e-8;
      if (n_opts < 2)
        return nl_spec_fail (error, &spec_errors, spec, "factor needs STEP and FACTOR (usage: %s)", usage);
      if (!parse_count (p[1], 1, &s->step))
        return nl_spec_fail (error, &spec_errors, spec, "STEP '%s' is not a whole number >= 1", p[1]);
      if (!nl_parse_double (p[2], &s->factor) || !(s->factor > 0 && s->factor <= 1))
        return nl_spec_fail (error, &spec_errors, spec, "FACTOR '%s' is not a number in (0, 1]", p[2]);
      if (n_opts >= 3 && (!nl_parse_double (p[3], &s->stop) || s->stop < 0))
        return nl_spec_fail (error, &spec_errors, spec, "STOP_LR '%s' is not a number >= 0", p[3]);
    }
  else if (g_ascii_strcasecmp (name, "multifactor") == 0)
    {
      const char *usage = "multifactor:S1,S2,...:FACTOR";
      g_auto (GStrv) steps = NULL;
      TOO_MANY (2, usage);
      s->kind = SCHED_MULTIFACTOR;
      if (n_opts < 2)
        return nl_spec_fail (error, &spec_errors, spec, "multifactor needs steps and FACTOR (usage: %s)", usage);
      steps = g_strsplit (p[1], ",", -1);
      s->n_steps = (int) g_strv_length (steps);
      s->steps = g_new (int64_t, MAX (s->n_steps, 1));
      if (s->n_steps == 0)
        return nl_spec_fail (error, &spec_errors, spec, "no steps given (usage: %s)", usage);
      for (int i = 0; i < s->n_steps; i++)
        {
          g_strstrip (steps[i]);
          if (!parse_count (steps[i], 1, &s->steps[i]))
            return nl_spec_fail (error, &spec_errors, spec, "step '%s' is not a whole number >= 1", steps[i]);
          if (i > 0 && s->steps[i] <= s->steps[i - 1])
            return nl_spec_fail (error, &spec_errors, spec,
                                 "steps must increase, but %s follows %s", steps[i], steps[i - 1]);
        }
      if (!nl_parse_double (p[2], &s->factor) || !(s->factor > 0 && s->factor <= 1))
        return nl_spec_fail (error, &spec_errors, spec, "FACTOR '%s' is not a number in (0, 1]", p[2]);
    }
  else if (g_ascii_strcasecmp (name, "cosine") == 0 || g_ascii_strcasecmp (name, "poly") == 0)
    {
      gboolean cosine = g_ascii_strcasecmp (name, "cosine") == 0;
      const char *usage = cosine ? "cosine[:FINAL_LR]" : "poly[:POWER[:FINAL_LR]]";
      int fi = cosine ? 1 : 2; /* where FINAL_LR sits */
      TOO_MANY (fi, usage);
      s->kind = cosine ? SCHED_COSINE : SCHED_POLY;
      s->power = 2;
      if (!cosine && n_opts >= 1 && (!nl_parse_double (p[1], &s->power) || !(s->power > 0)))
        return nl_spec_fail (error, &spec_errors, spec, "POWER '%s' is not a positive number", p[1]);
      if (n_opts >= fi)
        {
          if (!nl_parse_double (p[fi], &s->final) || s->final < 0)
            return nl_spec_fail (error, &spec_errors, spec, "FINAL_LR '%s' is not a number >= 0", p[fi]);
          if (s->final > s->base)
            return nl_spec_fail (error, &spec_errors, spec, "FINAL_LR %s is above the base rate %g", p[fi], s->base);
        }
    }
  else
    return nl_spec_fail (error, &spec_errors, spec,
                         "unknown schedule '%s' (valid: constant, factor, multifactor, cosine, poly)", name);
#undef TOO_MANY
  return TRUE;
}

static gboolean
parse_warmup (NlLrSchedule *s, const char *spec, char *part, GError **error)
{
  const char *usage = "+warmup:STEPS[:BEGIN_LR]";
  g_auto (GStrv) p = g_strsplit (part, ":", -1);
  int n_opts;

  for (int i = 0; p[i]; i++)
    g_strstrip (p[i]);
  n_opts = (int) g_strv_length (p) - 1;
  if (g_ascii_strcasecmp (p[0], "warmup") != 0)
    return nl_spec_fail (error, &spec_errors, spec, "unknown modifier '+%s' (only %s)", p[0], usage);
  if (s->warmup > 0)
    return nl_spec_fail (error, &spec_errors, spec, "warm-up given twice");
  if (n_opts < 1 || n_opts > 2)
    return nl_spec_fail (error, &spec_errors, spec, "'+%s' should be %s", part, usage);
  if (!parse_count (p[1], 0, &s->warmup))
    return nl_spec_fail (error, &spec_errors, spec, "warm-up STEPS '%s' is not a whole number >= 0", p[1]);
  if (n_opts >= 2 && (!nl_parse_double (p[2], &s->warmup_begin) || s->warmup_begin < 0))
    return nl_spec_fail (error, &spec_errors, spec, "warm-up BEGIN_LR '%s' is not a number >= 0", p[2]);
  return TRUE;
}

static char *
describe (const NlLrSchedule *s)
{
  GString *d = g_string_new (NULL);
  switch (s->kind)
    {
    case SCHED_CONSTANT:
      g_string_append (d, "constant");
      break;
    case SCHED_FACTOR:
      g_string_append_printf (d, "factor:%" G_GINT64_FORMAT ":", s->step);
      append_number (d, s->factor);
      g_string_append_c (d, ':');
      append_number (d, s->stop);
      break;
    case SCHED_MULTIFACTOR:
      g_string_append (d, "multifactor:");
      for (int i = 0; i < s->n_steps; i++)
        g_string_append_printf (d, "%s%" G_GINT64_FORMAT, i ? "," : "", s->steps[i]);
      g_string_append_c (d, ':');
      append_number (d, s->factor);
      break;
    case SCHED_COSINE:
      g_string_append (d, "cosine:");
      append_number (d, s->final);
      break;
    case SCHED_POLY:
      g_string_append (d, "poly:");
      append_number (d, s->power);
      g_string_append_c (d, ':');
      append_number (d, s->final);
      break;
    }
  if (s->warmup > 0)
    {
      g_string_append_printf (d, "+warmup:%" G_GINT64_FORMAT ":", s->warmup);
      append_number (d, s->warmup_begin);
    }
  return g_string_free (d, FALSE);
}

NlLrSchedule *
nl_lr_schedule_new (const char *spec, float base_lr, int64_t total_updates, GError **error)
{
  g_autoptr (NlLrSchedule) s = g_new0 (NlLrSchedule, 1);
  g_auto (GStrv) parts = NULL;

  if (spec == NULL || *spec == '\0')
    {
      nl_spec_fail (error, &spec_errors,
                    "", "empty spec (try constant, factor:STEP:FACTOR, multifactor:S1,S2:FACTOR, cosine or poly)");
      return NULL;
    }
  if (!isfinite (base_lr) || base_lr < 0)
    {
      nl_spec_fail (error, &spec_errors, spec, "the base rate %g is not a number >= 0", base_lr);
      return NULL;
    }
  s->base = base_lr;
  s->total = total_updates;
  parts = g_strsplit (spec, "+", -1);
  if (!parse_main (s, spec, parts[0], error))
    return NULL;
  for (int i = 1; parts[i]; i++)
    if (!parse_warmup (s, spec, parts[i], error))
      return NULL;
  if ((s->kind == SCHED_COSINE || s->kind == SCHED_POLY) && total_updates <= s->warmup)
    {
      const char *name = s->kind == SCHED_COSINE ? "cosine" : "poly";
      if (s->warmup > 0)
        nl_spec_fail (error, &spec_errors, spec, "%s needs the run to be longer than the warm-up: %" G_GINT64_FORMAT
                      " updates in all, %" G_GINT64_FORMAT " of warm-up", name, total_updates, s->warmup);
      else
        nl_spec_fail (error, &spec_errors, spec, "%s needs the run's length, but it is %" G_GINT64_FORMAT " updates",
                      name, total_updates);
      return NULL;
    }
  s->desc = describe (s);
  return g_steal_pointer (&s);
}

/* The schedule without warm-up at update n. */
static double
value_at (const NlLrSchedule *s, int64_t n)
{
  switch (s->kind)
    {
    case SCHED_CONSTANT:
      return s->base;
    case SCHED_FACTOR:
      {
        int64_t k = n / s->step;
        double lr = s->base * pow (s->factor, (double) k);
        return k > 0 && lr < s->stop ? s->stop : lr;
      }
    case SCHED_MULTIFACTOR:
      {
        int k = 0;
        while (k < s->n_steps && s->steps[k] <= n)
          k++;
        return s->base * pow (s->factor, k);
      }
    case SCHED_COSINE:
    case SCHED_POLY:
      {
        double t = (double) (n - s->warmup), T = (double) (s->total - s->warmup);
        if (t >= T)
          return s->final;
        if (s->kind == SCHED_COSINE)
          return s->final + (s->base - s->final) * (1 + cos (G_PI * t / T)) / 2;
        return s->final + (s->base - s->final) * pow (1 - t / T, s->power);
      }
    }
  g_return_val_if_reached (s->base);
}

float
nl_lr_schedule_get (const NlLrSchedule *s, int64_t num_update)
{
  g_return_val_if_fail (s != NULL, 0.0f);
  if (num_update < 0)
    num_update = 0;
  if (num_update < s->warmup)
    {
      double target = value_at (s, s->warmup);
      return (float) (s->warmup_begin + (target - s->warmup_begin) * (double) num_update / (double) s->warmup);
    }
  return (float) value_at (s, num_update);
}

const char *
nl_lr_schedule_describe (const NlLrSchedule *s)
{
  g_return_val_if_fail (s != NULL, NULL);
  return s->desc;
}

void
nl_lr_schedule_free (NlLrSchedule *s)
{
  if (s == NULL)
    return;
  g_free (s->steps);
  g_free (s->desc);
  g_free (s);
}
