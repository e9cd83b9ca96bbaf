/* nl-training-group.c — the Training form's training group: epochs, seed,
 * threads, the device (listed off the main loop), the processes under
 * mpirun with their host file, and the precision. */
#include "ui/training/nl-training-group.h"
#include <glib/gi18n.h>
#include "core/nl-device.h"
#include "ui/widgets/nl-file-chooser.h"
#include "ui/widgets/nl-form-rows.h"

#include <string.h>

struct _NlTrainingGroup {
  AdwPreferencesGroup parent_instance;
  NlFormRows rows;
  NlWorkspace *ws;             /* kept busy while the devices are listed */
  GtkSpinButton *epochs, *seed, *threads, *processes;
  AdwComboRow *device_row, *precision_row;
  AdwActionRow *hostfile_row;
  char *hostfile;              /* the processes' host file, or NULL: all on this machine */
  char *mpirun;                /* mpirun in PATH, or NULL */
  GtkStringList *devices;      /* the device row's items, one per device_infos entry */
  GPtrArray *device_infos;     /* NlDeviceInfo*: nl_device_list(), read off the main loop */
  char *device_reason;         /* why no GPU is listed, or NULL */
  gboolean devices_loading;
  NlWorkspace *devices_busy_ws; /* kept busy until the list is read (screenshots wait for it) */
  gboolean filling;            /* the device list is being set: no reactions */
};

G_DEFINE_FINAL_TYPE (NlTrainingGroup, nl_training_group, ADW_TYPE_PREFERENCES_GROUP)

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void update_device (NlTrainingGroup *self);

static void
changed (NlTrainingGroup *self)
{
  if (!self->precision_row || self->filling)
    return;  /* still building the rows, or listing devices */
  update_device (self);
  nl_form_set_row_visible (GTK_WIDGET (self->hostfile_row), nl_training_group_get_processes (self) > 1);
  g_signal_emit (self, signals[CHANGED], 0);
}

/* ---- devices: the one place that lists them ---- */

/* nl_device_list() starts the CUDA runtime (up to seconds on a GPU
 * machine): it runs off the main loop, and Start waits for it. */

static void
devices_release (NlTrainingGroup *self)
{
  if (self->devices_busy_ws)
    nl_workspace_busy_pop (self->devices_busy_ws);
  g_clear_object (&self->devices_busy_ws);
}

static void
devices_hold (NlTrainingGroup *self)
{
  if (!self->devices_loading || self->devices_busy_ws == self->ws)
    return;
  devices_release (self);
  if (self->ws)
    nl_workspace_busy_push (self->devices_busy_ws = g_object_ref (self->ws));
}

typedef struct {
  GPtrArray *list;
  char *reason;
} DeviceList;

static void
device_list_free (DeviceList *l)
{
  g_ptr_array_unref (l->list);
  g_free (l->reason);
  g_free (l);
}

static void
devices_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  DeviceList *l = g_new0 (DeviceList, 1);
  l->list = nl_device_list (&l->reason);
  g_task_return_pointer (task, l, (GDestroyNotify) device_list_free);
}

static void
devices_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingGroup *self = NL_TRAINING_GROUP (source);
  DeviceList *l = g_task_propagate_pointer (G_TASK (res), NULL);
  g_autoptr (GPtrArray) titles = g_ptr_array_new_with_free_func (g_free);

  self->devices_loading = FALSE;
  devices_release (self);
  if (!self->rows.fields)
    {
      device_list_free (l); /* disposed meanwhile */
      return;
    }
  for (guint i = 0; i < l->list->len; i++)
    {
      const NlDeviceInfo *d = g_ptr_array_index (l->list, i);
      g_autofree char *mem = g_format_size_full (d->memory_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_ptr_array_add (titles, nl_device_is_host (d->device)
                                 ? g_strdup_printf ("CPU — %s", d->name)
                                 : g_strdup_printf ("%s — %s (%s)", d->id, d->name, mem));
    }
  g_ptr_array_add (titles, NULL);
  g_clear_pointer (&self->device_infos, g_ptr_array_unref);
  self->device_infos = g_ptr_array_ref (l->list);
  g_free (self->device_reason);
  self->device_reason = g_strdup (l->reason);
  self->filling = TRUE;
  gtk_string_list_splice (self->devices, 0, g_list_model_get_n_items (G_LIST_MODEL (self->devices)),
                          (const char *const *) titles->pdata);
  adw_combo_row_set_selected (self->device_row, 0);
  self->filling = FALSE;
  device_list_free (l);
  changed (self);
}

/* The row shows the short id ("CPU", "cuda:0"), the pop-up the whole
 * title: a GPU's long name would squeeze the row's subtitle. */
static void
label_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer full)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_list_item_set_child (item, label);
}

static void
label_bind (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer full)
{
  const char *title = gtk_string_object_get_string (gtk_list_item_get_item (item));
  const char *dash = full ? NULL : strstr (title, " — ");
  g_autofree char *text = dash ? g_strndup (title, dash - title) : g_strdup (title);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static GtkListItemFactory *
label_factory (gboolean full)
{
  GtkListItemFactory *f = gtk_signal_list_item_factory_new ();
  g_signal_connect (f, "setup", G_CALLBACK (label_setup), GINT_TO_POINTER (full));
  g_signal_connect (f, "bind", G_CALLBACK (label_bind), GINT_TO_POINTER (full));
  return f;
}

static void
devices_load (NlTrainingGroup *self)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, devices_done, NULL);
  g_autoptr (GtkListItemFactory) row_factory = label_factory (FALSE), list_factory = label_factory (TRUE);

  adw_combo_row_set_factory (self->device_row, row_factory);
  adw_combo_row_set_list_factory (self->device_row, list_factory);
  /* names and reasons are text, not markup */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (self->device_row), FALSE);
  self->devices_loading = TRUE;
  update_device (self);
  g_task_run_in_thread (task, devices_thread);
}

NlDevice
nl_training_group_device (NlTrainingGroup *self)
{
  guint i = adw_combo_row_get_selected (self->device_row);
  if (self->device_infos && i < self->device_infos->len)
    return ((NlDeviceInfo *) g_ptr_array_index (self->device_infos, i))->device;
  return (NlDevice) { NL_DEVICE_CPU, 0 };
}

void
nl_training_group_select_device (NlTrainingGroup *self, const char *id)
{
  for (guint i = 0; id && self->device_infos && i < self->device_infos->len; i++)
    if (!g_strcmp0 (((NlDeviceInfo *) g_ptr_array_index (self->device_infos, i))->id, id))
      adw_combo_row_set_selected (self->device_row, i);
}

static void
update_device (NlTrainingGroup *self)
{
  guint i = adw_combo_row_get_selected (self->device_row);
  const NlDeviceInfo *d = self->device_infos && i < self->device_infos->len ? g_ptr_array_index (self->device_infos, i)
                                                                            : NULL;
  gboolean cpu = nl_device_is_host (nl_training_group_device (self));
  gboolean half = adw_combo_row_get_selected (self->precision_row) != NL_PRECISION_F32;
  g_autofree char *sub = NULL;

  if (self->devices_loading)
    sub = g_strdup (_("Looking for GPUs…"));
  else if (self->device_reason)
    sub = g_strdup_printf (_("No GPU: %s"), self->device_reason);
  else if (d)
    {
      g_autofree char *mem = g_format_size_full (d->memory_bytes, G_FORMAT_SIZE_IEC_UNITS);
      sub = nl_device_is_host (d->device)
              ? g_strdup_printf (_("%s · %d cores · %s"), d->name, d->cores, mem)
              : g_strdup_printf (_("%s · compute %d.%d · %s"), d->name, d->cc_major, d->cc_minor, mem);
    }
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->device_row), sub ? sub : "");
  /* fp16 and bf16 on the CPU round the same numbers but gain no speed */
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->precision_row),
                               !half ? _("Float32 throughout")
                               : cpu ? _("Dense and Conv2D rounded to the half type; emulated on the CPU, no speed-up")
                                     : _("Dense and Conv2D on tensor cores; weights stay float32"));
}

static void
devices_dispose (NlTrainingGroup *self)
{
  g_clear_object (&self->devices);
  g_clear_pointer (&self->device_infos, g_ptr_array_unref);
  g_clear_pointer (&self->device_reason, g_free);
  devices_release (self);
}

/* ---- processes: N > 1 trains under mpirun (nl-training-page-mpi.c) ---- */

static void
update_hostfile (NlTrainingGroup *self)
{
  g_autofree char *base = self->hostfile ? g_path_get_basename (self->hostfile) : NULL;
  g_autofree char *sub = base ? g_strdup_printf (_("%s: the hosts and their slots"), base) : NULL;
  adw_action_row_set_subtitle (self->hostfile_row, sub ? sub : _("None: every process on this machine"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->hostfile_row), self->hostfile);
}

static void
hostfile_chosen (GtkWidget *owner, const char *path, gpointer user)
{
  nl_training_group_set_hostfile (NL_TRAINING_GROUP (owner), path);
}

static void
hostfile_choose (NlTrainingGroup *self)
{
  nl_choose_file (GTK_WIDGET (self), GTK_FILE_CHOOSER_ACTION_OPEN, _("Choose a Host File"), _("_Choose"),
                  self->hostfile,
                  NULL, hostfile_chosen, NULL, NULL);
}

static void
hostfile_clear (NlTrainingGroup *self)
{
  nl_training_group_set_hostfile (self, NULL);
}

static GtkWidget *
flat_button (const char *icon, const char *tooltip)
{
  GtkWidget *b = gtk_button_new_from_icon_name (icon);
  gtk_widget_set_tooltip_text (b, tooltip);
  gtk_widget_set_valign (b, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (b, "flat");
  return b;
}

/* The processes row, and the host file's below it (shown for N > 1);
 * without mpirun in PATH the row stays at 1 and says why. */
static void
processes_init (NlTrainingGroup *self)
{
  GtkWidget *g = GTK_WIDGET (self), *row, *choose, *clear;

  self->mpirun = g_find_program_in_path ("mpirun");
  self->processes = nl_form_rows_spin (&self->rows, g, "processes", _("Processes (MPI)"),
                                       self->mpirun ? _("1 trains here; more train as netloom-cli under mpirun")
                                                    : _("Open MPI is not installed (no mpirun in PATH)"),
                                       1, 1024, 1, 0, 1);
  row = gtk_widget_get_ancestor (GTK_WIDGET (self->processes), ADW_TYPE_PREFERENCES_ROW);
  gtk_widget_set_sensitive (row, self->mpirun != NULL);

  self->hostfile_row = ADW_ACTION_ROW (adw_action_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->hostfile_row), _("Host File"));
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (self->hostfile_row), FALSE);  /* a file name */
  choose = flat_button ("document-open-symbolic", "Choose a host file (mpirun --hostfile)");
  clear = flat_button ("edit-clear-symbolic", "No host file: every process on this machine");
  g_signal_connect_object (choose, "clicked", G_CALLBACK (hostfile_choose), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (clear, "clicked", G_CALLBACK (hostfile_clear), self, G_CONNECT_SWAPPED);
  adw_action_row_add_suffix (self->hostfile_row, clear);
  adw_action_row_add_suffix (self->hostfile_row, choose);
  adw_action_row_set_activatable_widget (self->hostfile_row, choose);
  nl_form_rows_add (g, GTK_WIDGET (self->hostfile_row));
  g_hash_table_insert (self->rows.fields, (gpointer) "hostfile", self->hostfile_row);
  update_hostfile (self);
  gtk_widget_set_visible (GTK_WIDGET (self->hostfile_row), FALSE);
}

int
nl_training_group_get_processes (NlTrainingGroup *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), 1);
  return self->mpirun ? (int) gtk_spin_button_get_value (self->processes) : 1;
}

const char *
nl_training_group_get_hostfile (NlTrainingGroup *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), NULL);
  return self->hostfile;
}

void
nl_training_group_set_hostfile (NlTrainingGroup *self, const char *path)
{
  g_return_if_fail (NL_IS_TRAINING_GROUP (self));
  if (!g_strcmp0 (path, self->hostfile))
    return;
  g_free (self->hostfile);
  self->hostfile = path && *path ? g_strdup (path) : NULL;
  update_hostfile (self);
  changed (self);
}

const char *
nl_training_group_get_mpirun (NlTrainingGroup *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), NULL);
  return self->mpirun;
}

/* ---- the form's side ---- */

void
nl_training_group_get (NlTrainingGroup *self, NlRunConfig *rc)
{
  g_return_if_fail (NL_IS_TRAINING_GROUP (self));
  rc->epochs = (int) gtk_spin_button_get_value (self->epochs);
  rc->seed = (guint64) gtk_spin_button_get_value (self->seed);
  rc->threads = (int) gtk_spin_button_get_value (self->threads);
  rc->device = nl_training_group_device (self);
  rc->precision = MIN (adw_combo_row_get_selected (self->precision_row), NL_PRECISION_COUNT - 1);
}

void
nl_training_group_set (NlTrainingGroup *self, const NlRunConfig *rc)
{
  g_return_if_fail (NL_IS_TRAINING_GROUP (self));
  gtk_spin_button_set_value (self->epochs, rc->epochs);
  gtk_spin_button_set_value (self->seed, (double) rc->seed);
  gtk_spin_button_set_value (self->threads, rc->threads);
  adw_combo_row_set_selected (self->precision_row, MIN (rc->precision, NL_PRECISION_COUNT - 1));
}

int
nl_training_group_get_epochs (NlTrainingGroup *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), 0);
  return (int) gtk_spin_button_get_value (self->epochs);
}

gboolean
nl_training_group_is_loading (NlTrainingGroup *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), FALSE);
  return self->devices_loading;
}

void
nl_training_group_set_workspace (NlTrainingGroup *self, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_TRAINING_GROUP (self));
  g_set_object (&self->ws, ws);
  devices_hold (self);
}

GtkWidget *
nl_training_group_get_control (NlTrainingGroup *self, const char *name)
{
  g_return_val_if_fail (NL_IS_TRAINING_GROUP (self), NULL);
  return self->rows.fields && name ? g_hash_table_lookup (self->rows.fields, name) : NULL;
}

/* ---- GObject ---- */

static void
nl_training_group_dispose (GObject *object)
{
  NlTrainingGroup *self = NL_TRAINING_GROUP (object);
  g_clear_pointer (&self->rows.fields, g_hash_table_unref);
  devices_dispose (self);
  g_clear_pointer (&self->hostfile, g_free);
  g_clear_pointer (&self->mpirun, g_free);
  g_clear_object (&self->ws);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_TRAINING_GROUP);
  G_OBJECT_CLASS (nl_training_group_parent_class)->dispose (object);
}

static void
nl_training_group_class_init (NlTrainingGroupClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_training_group_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-training-group.ui");
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 0);
}

static void
nl_training_group_init (NlTrainingGroup *self)
{
  GtkWidget *g = GTK_WIDGET (self);
  NlFormRows *r = &self->rows;
  g_autofree char *threads_sub = g_strdup_printf (_("0 uses all %u cores"), g_get_num_processors ());
  /* NlPrecision in order, named as runs store them */
  const char *titles[] = { nl_precision_name (NL_PRECISION_F32), nl_precision_name (NL_PRECISION_BF16),
                           nl_precision_name (NL_PRECISION_F16), NULL };
  g_autoptr (GListModel) precisions = nl_form_strings (titles);
  G_STATIC_ASSERT (NL_PRECISION_COUNT == 3);

  gtk_widget_init_template (g);
  self->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (changed), G_OBJECT (self) };
  self->devices = gtk_string_list_new (NULL);
  self->epochs = nl_form_rows_setting (r, g, "epochs", "epochs", _("Epochs"), NULL, 1, 0);
  self->seed = nl_form_rows_setting (r, g, "seed", "seed", _("Seed"), _("Initialisation, shuffling and dropout"), 1, 0);
  self->threads = nl_form_rows_setting (r, g, "threads", "threads", _("Threads"), threads_sub, 1, 0);
  self->device_row = nl_form_rows_combo (r, g, "device", _("Device"), NULL, G_LIST_MODEL (self->devices));
  processes_init (self);
  self->precision_row = nl_form_rows_combo (r, g, "precision", _("Precision"), NULL, precisions);
  devices_load (self);
}
