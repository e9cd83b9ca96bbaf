/* nl-palette.h — the layer palette: every operator grouped by its
 * registry category, filtered by a search entry; rows are drag sources
 * ("netloom-op:NAME" strings the canvas accepts) and activating a row
 * (double-click, Enter) emits ::op-activated (const char *op). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_PALETTE (nl_palette_get_type ())
G_DECLARE_FINAL_TYPE (NlPalette, nl_palette, NL, PALETTE, GtkWidget)

#define NL_PALETTE_DND_PREFIX "netloom-op:"

GtkWidget *nl_palette_new (void);
void nl_palette_set_filter (NlPalette *palette, const char *text);
/* Names of the ops currently shown, in display order (NULL-terminated, free with g_strfreev). */
char **nl_palette_dup_visible_ops (NlPalette *palette);
/* Moves keyboard focus to the search entry. */
void nl_palette_focus_search (NlPalette *palette);
/* Emits ::op-activated as a double-click on the op's row would. */
gboolean nl_palette_activate_op (NlPalette *palette, const char *op);

G_END_DECLS
