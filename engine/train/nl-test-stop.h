/* nl-test-stop.h — NETLOOM_TEST_STOP_AT_STEP=N[,M...]: the update counts at
 * which a training process stops itself (SIGSTOP), so that tests pin a
 * moment of training by its step count, never by how fast the machine
 * trains. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The steps asked for (int64_t), or NULL when none. */
GArray *nl_test_stops_parse (void);
/* Stops the process when `updates` is one of stops (and forgets it);
 * quiet(user, TRUE) before and quiet(user, FALSE) after, when not NULL. */
void nl_test_stop_maybe (GArray *stops, int64_t updates, void (*quiet) (gpointer user, gboolean quiet),
                         gpointer user);

G_END_DECLS
