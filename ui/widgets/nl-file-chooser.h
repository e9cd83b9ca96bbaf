/* nl-file-chooser.h — one modal GtkFileChooserNative for a widget: the
 * build / respond / destroy steps every "choose a file" action shares. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* The user accepted PATH (a local file or folder) in a chooser of OWNER. */
typedef void (*NlFileChosen) (GtkWidget *owner, const char *path, gpointer user);

/* Shows a modal native chooser transient for OWNER's window. INITIAL, may
 * be NULL: for GTK_FILE_CHOOSER_ACTION_SAVE the suggested file name, for
 * the other actions a path selected at first when it exists. FILTER may be
 * NULL (the chooser takes its own reference). When the user accepts a
 * local file, DONE (owner, path, user) runs; DESTROY (user) runs when the
 * chooser goes, whatever the answer. The chooser lives until it answers,
 * nl_file_chooser_close() is called on it, or OWNER is disposed (then DONE
 * does not run). Returns it (transfer none): keep it with
 * g_set_weak_pointer() to close it or to ask whether one is open. */
GtkFileChooserNative *nl_choose_file (GtkWidget *owner, GtkFileChooserAction action, const char *title,
                                      const char *accept_label, const char *initial, GtkFileFilter *filter,
                                      NlFileChosen done, gpointer user, GDestroyNotify destroy);
/* Closes a chooser of nl_choose_file() without an answer: DONE does not run. */
void nl_file_chooser_close (GtkFileChooserNative *chooser);

G_END_DECLS
