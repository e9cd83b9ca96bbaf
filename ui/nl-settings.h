/* nl-settings.h — the application's GSettings, also when run from the
 * build tree (schema compiled there) or in tests (memory backend). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define NL_APP_ID "io.github.netloom.Netloom"

/* A new reference to the shared settings object. */
GSettings *nl_settings_get (void);
/* Puts PATH first in recent-projects (at most 10) and sets last-project. */
void nl_settings_add_recent (const char *path);

G_END_DECLS
