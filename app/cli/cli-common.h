/* cli-common.h — what the netloom-cli commands share. */
#pragma once

#include <glib.h>

/* Each command: argc/argv start at the command name. Returns the exit status. */
int nl_cli_train (int argc, char **argv);
int nl_cli_plan (int argc, char **argv);
int nl_cli_pack (int argc, char **argv);

/* Print "netloom-cli: MESSAGE" on stderr; returns 1 (or 2 for usage errors). */
int nl_cli_fail (const GError *error);
int nl_cli_usage_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

/* Progress line on a TTY: bar, counters, ETA. */
typedef struct NlProgress NlProgress;
NlProgress *nl_progress_new (void); /* NULL when stderr is not a terminal */
void nl_progress_update (NlProgress *p, const char *label, int64_t done, int64_t total, double elapsed, double loss);
void nl_progress_clear (NlProgress *p);
void nl_progress_free (NlProgress *p);
