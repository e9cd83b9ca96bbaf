/* nl-run-args.h — run settings as `netloom-cli train` options: how the GUI
 * hands a run to netloom-cli (under mpirun), so that the CLI trains with
 * exactly the settings the form shows. */
#pragma once

#include "engine/train/nl-run-config.h"

G_BEGIN_DECLS

/* The options of `netloom-cli train` that give rc's settings, as argv
 * strings ("--epochs", "5", ...; NULL-terminated, free with g_strfreev),
 * every setting stated so the CLI's own defaults do not matter. What to
 * train and where (--network, --project, --name) is the caller's. NULL
 * with NL_TRAIN_ERROR_CONFIG naming the setting when netloom-cli has no
 * option for one of rc's values. */
char **nl_run_config_to_cli_args (const NlRunConfig *rc, GError **error);

G_END_DECLS
