/* nl-lr-schedule.h — learning-rate schedules (MXNet's lr_scheduler). */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define NL_LR_SCHEDULE_ERROR (nl_lr_schedule_error_quark ())
GQuark nl_lr_schedule_error_quark (void);
typedef enum {
  NL_LR_SCHEDULE_ERROR_INVALID,
} NlLrScheduleError;

typedef struct NlLrSchedule NlLrSchedule;

/* spec: "constant"
 *   | "factor:STEP:FACTOR[:STOP_LR]"  lr = base * FACTOR^floor (n / STEP), not below
 *                                     STOP_LR (default 1e-8, as MXNet)
 *   | "multifactor:S1,S2,...:FACTOR"  lr = base * FACTOR^(number of Si <= n); S increasing
 *   | "cosine[:FINAL_LR]"             final + (base - final) * (1 + cos (pi * t / T)) / 2
 *   | "poly[:POWER[:FINAL_LR]]"       final + (base - final) * (1 - t / T)^POWER, POWER default 2
 * each optionally followed by "+warmup:STEPS[:BEGIN_LR]": for n < STEPS,
 * lr = BEGIN_LR + (target - BEGIN_LR) * n / STEPS (BEGIN_LR default 0), where
 * target is the schedule's value at n = STEPS, so the rate is continuous.
 *
 * n is num_update (from 0). factor and multifactor count n from the start of
 * the run (as MXNet); cosine and poly count t = n - STEPS and
 * T = total_updates - STEPS after the warm-up and stay at FINAL_LR from
 * t >= T. FACTOR must be in (0, 1], FINAL_LR at most base_lr. cosine and poly
 * need total_updates > STEPS. Names are case-insensitive. Errors name the
 * bad part. */
NlLrSchedule *nl_lr_schedule_new (const char *spec, float base_lr, int64_t total_updates, GError **error);
float nl_lr_schedule_get (const NlLrSchedule *s, int64_t num_update); /* num_update counts from 0 */
const char *nl_lr_schedule_describe (const NlLrSchedule *s);        /* normalised spec for logs */
void nl_lr_schedule_free (NlLrSchedule *s);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlLrSchedule, nl_lr_schedule_free)

G_END_DECLS
