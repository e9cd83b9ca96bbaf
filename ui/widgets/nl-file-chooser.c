/* nl-file-chooser.c — one modal GtkFileChooserNative for a widget (see
 * nl-file-chooser.h). */
#include "ui/widgets/nl-file-chooser.h"
#include <glib/gi18n.h>

#define PENDING_KEY "nl-file-chooser"

typedef struct {
  GtkWidget *owner;  /* no reference: a weak ref closes the chooser when it goes */
  NlFileChosen done;
  gpointer user;
  GDestroyNotify destroy;
  gboolean closed;
} Pending;

static void
pending_free (gpointer data)
{
  Pending *p = data;
  if (p->destroy)
    p->destroy (p->user);
  g_free (p);
}

static void owner_disposed (gpointer data, GObject *where_the_object_was);

/* Detaches the chooser from its owner, hides it for good and drops the
 * reference it holds on itself (the last one, unless a response is being
 * handled). */
static void
finish (GtkFileChooserNative *chooser, Pending *p)
{
  p->closed = TRUE;
  if (p->owner)
    g_object_weak_unref (G_OBJECT (p->owner), owner_disposed, chooser);
  p->owner = NULL;
  g_signal_handlers_disconnect_by_data (chooser, p);
  gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (chooser));
  g_object_unref (chooser);
}

static void
owner_disposed (gpointer data, GObject *where_the_object_was)
{
  GtkFileChooserNative *chooser = data;
  Pending *p = g_object_get_data (G_OBJECT (chooser), PENDING_KEY);
  p->owner = NULL; /* this weak ref is spent: nothing to remove */
  finish (chooser, p);
}

static void
on_response (GtkNativeDialog *dialog, int response, Pending *p)
{
  /* p and the user data live as long as the chooser: hold it until DONE ran */
  g_autoptr (GtkFileChooserNative) hold = g_object_ref (GTK_FILE_CHOOSER_NATIVE (dialog));
  g_autoptr (GtkWidget) owner = p->owner ? g_object_ref (p->owner) : NULL;
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog))
                                                           : NULL;
  g_autofree char *path = file ? g_file_get_path (file) : NULL;

  /* detached first, so that DONE may open another chooser or dispose the owner */
  finish (hold, p);
  if (owner && path)
    p->done (owner, path, p->user);
}

GtkFileChooserNative *
nl_choose_file (GtkWidget *owner, GtkFileChooserAction action, const char *title, const char *accept_label,
                const char *initial, GtkFileFilter *filter, NlFileChosen done, gpointer user,
                GDestroyNotify destroy)
{
  GtkRoot *root;
  GtkFileChooserNative *chooser;
  Pending *p;

  g_return_val_if_fail (GTK_IS_WIDGET (owner), NULL);
  g_return_val_if_fail (filter == NULL || GTK_IS_FILE_FILTER (filter), NULL);
  g_return_val_if_fail (done != NULL, NULL);

  root = gtk_widget_get_root (owner);
  chooser = gtk_file_chooser_native_new (title, GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, action,
                                         accept_label, _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (filter)
    gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  if (initial && action == GTK_FILE_CHOOSER_ACTION_SAVE)
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), initial);
  else if (initial && g_file_test (initial, G_FILE_TEST_EXISTS))
    {
      g_autoptr (GFile) file = g_file_new_for_path (initial);
      gtk_file_chooser_set_file (GTK_FILE_CHOOSER (chooser), file, NULL);
    }

  p = g_new0 (Pending, 1);
  p->owner = owner;
  p->done = done;
  p->user = user;
  p->destroy = destroy;
  g_object_set_data_full (G_OBJECT (chooser), PENDING_KEY, p, pending_free);
  g_object_weak_ref (G_OBJECT (owner), owner_disposed, chooser);
  g_signal_connect (chooser, "response", G_CALLBACK (on_response), p);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
  return chooser;
}

void
nl_file_chooser_close (GtkFileChooserNative *chooser)
{
  Pending *p;
  g_return_if_fail (GTK_IS_FILE_CHOOSER_NATIVE (chooser));
  p = g_object_get_data (G_OBJECT (chooser), PENDING_KEY);
  g_return_if_fail (p != NULL);
  if (!p->closed)
    finish (chooser, p);
}
