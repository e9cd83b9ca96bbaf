/* nl-settings.c — find the schema installed or in the build tree. */
#include "ui/nl-settings.h"

#define NL_RECENT_MAX 10

GSettings *
nl_settings_get (void)
{
  static GSettings *settings;
  if (!settings)
    {
      GSettingsSchemaSource *def = g_settings_schema_source_get_default ();
      g_autoptr (GSettingsSchema) schema = def ? g_settings_schema_source_lookup (def, NL_APP_ID, TRUE) : NULL;
      if (!schema && g_file_test (NL_SCHEMA_BUILD_DIR "/gschemas.compiled", G_FILE_TEST_EXISTS))
        {
          /* uninstalled: the schema meson compiled next to the build */
          g_autoptr (GSettingsSchemaSource) src
            = g_settings_schema_source_new_from_directory (NL_SCHEMA_BUILD_DIR, def, FALSE, NULL);
          if (src)
            schema = g_settings_schema_source_lookup (src, NL_APP_ID, FALSE);
        }
      if (!schema)
        g_error ("GSettings schema %s is neither installed nor in %s", NL_APP_ID, NL_SCHEMA_BUILD_DIR);
      settings = g_settings_new_full (schema, NULL, NULL);
    }
  return g_object_ref (settings);
}

void
nl_settings_add_recent (const char *path)
{
  g_autoptr (GSettings) s = nl_settings_get ();
  g_auto (GStrv) old = g_settings_get_strv (s, "recent-projects");
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_auto (GStrv) list = NULL;
  int n = 1;
  g_return_if_fail (path != NULL);
  g_strv_builder_add (b, path);
  for (int i = 0; old[i] && n < NL_RECENT_MAX; i++)
    if (g_strcmp0 (old[i], path) != 0)
      {
        g_strv_builder_add (b, old[i]);
        n++;
      }
  list = g_strv_builder_end (b);
  g_settings_set_strv (s, "recent-projects", (const char *const *) list);
  g_settings_set_string (s, "last-project", path);
}
