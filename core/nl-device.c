/* nl-device.c — the devices of every registered backend
 * (nl-backend-reg.h) as one list for the CLI, the GUI and --device: their
 * ids parsed, printed and checked through the rows, never by kind here. */
#include "core/nl-device.h"
#include "core/nl-backend-reg.h"

#include <string.h>

G_DEFINE_QUARK (nl-device-error-quark, nl_device_error)

void
nl_device_info_free (NlDeviceInfo *info)
{
  if (!info)
    return;
  g_free (info->id);
  g_free (info->name);
  g_free (info);
}

static NlDevice
row_device (guint row, int index)
{
  return (NlDevice) { (NlDeviceType) row, index };
}

/* Appends the devices of row i to list; the number appended. When none,
 * *reason (free it) says why: the row's count's reason, the last device
 * that could not say what it is, or "no LABEL device". */
static int
row_list (guint i, GPtrArray *list, char **reason)
{
  const NlBackendReg *reg = nl_backend_reg_get (i);
  g_autofree char *why = NULL;
  int n = reg->device_count (&why), listed = 0;

  for (int k = 0; k < n; k++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlDeviceInfo) d = g_new0 (NlDeviceInfo, 1);
      d->device = row_device (i, k);
      d->id = nl_device_to_string (d->device);
      if (!reg->device_info (k, d, &error))
        {
          /* listed by the runtime but unusable: the reason if none is */
          g_free (why);
          why = g_strdup_printf ("%s: %s", d->id, error->message);
          continue;
        }
      g_ptr_array_add (list, g_steal_pointer (&d));
      listed++;
    }
  if (listed == 0 && !why)
    why = g_strdup_printf ("no %s device", reg->label);
  if (reason)
    *reason = listed ? NULL : g_steal_pointer (&why);
  return listed;
}

GPtrArray *
nl_device_list (char **reason)
{
  GPtrArray *list = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_device_info_free);
  g_autoptr (GString) why = g_string_new (NULL);
  int others = 0;

  for (guint i = 0; i < nl_backend_reg_count (); i++)
    {
      g_autofree char *r = NULL;
      gboolean host = nl_backend_reg_get (i)->host;
      int n = row_list (i, list, host ? NULL : &r);
      if (host)
        continue;
      others += n;
      if (r)
        g_string_append_printf (why, "%s%s", why->len ? "; " : "", r);
    }
  if (reason)
    *reason = others || !why->len ? NULL : g_strdup (why->str);
  return list;
}

gboolean
nl_device_parse (const char *text, NlDevice *device, GError **error)
{
  g_autoptr (GString) known = g_string_new (NULL);
  guint n_known = nl_backend_reg_count ();

  for (guint i = 0; text && i < n_known; i++)
    {
      const NlBackendReg *reg = nl_backend_reg_get (i);
      size_t len = strlen (reg->name);
      guint64 index = 0;
      if (!strcmp (text, reg->name)
          || (reg->indexed && !strncmp (text, reg->name, len) && text[len] == ':'
              && g_ascii_string_to_unsigned (text + len + 1, 10, 0, G_MAXINT, &index, NULL)))
        {
          if (device)
            *device = row_device (i, (int) index);
          return TRUE;
        }
    }
  /* "use cpu, cuda or cuda:N" */
  for (guint i = 0; i < n_known; i++)
    {
      const NlBackendReg *reg = nl_backend_reg_get (i);
      gboolean last = i + 1 == n_known;
      g_string_append_printf (known, "%s%s", known->len ? (last && !reg->indexed ? " or " : ", ") : "", reg->name);
      if (reg->indexed)
        g_string_append_printf (known, "%s%s:N", last ? " or " : ", ", reg->name);
    }
  g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_PARSE, "unknown device '%s' (use %s)", text ? text : "",
               known->str);
  return FALSE;
}

char *
nl_device_to_string (NlDevice device)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  if (!reg)
    return g_strdup_printf ("device-type-%d:%d", (int) device.type, device.index);
  return reg->indexed ? g_strdup_printf ("%s:%d", reg->name, device.index) : g_strdup (reg->name);
}

const char *
nl_device_kind (NlDevice device)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  return reg ? reg->name : NULL;
}

gboolean
nl_device_is_host (NlDevice device)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  return reg && reg->host;
}

gboolean
nl_device_check (NlDevice device, GError **error)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  g_autofree char *reason = NULL;
  g_autofree char *id = nl_device_to_string (device);
  int n;

  if (!reg)
    {
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE, "%s: no backend for this device type", id);
      return FALSE;
    }
  if (!reg->indexed)
    return TRUE; /* the kind's one device (the CPU) is always here */
  n = reg->device_count (&reason);
  if (n <= 0)
    {
      g_autofree char *none = g_strdup_printf ("the %s runtime sees none", reg->label);
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE, "%s: no %s device: %s", id, reg->label,
                   reason ? reason : none);
      return FALSE;
    }
  if (device.index < 0 || device.index >= n)
    {
      g_autoptr (GString) names = g_string_new (NULL);
      for (int i = 0; i < n; i++)
        g_string_append_printf (names, "%s%s:%d", i ? ", " : "", reg->name, i);
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE, "%s: no such device (there %s %d: %s)", id,
                   n == 1 ? "is" : "are", n, names->str);
      return FALSE;
    }
  return TRUE;
}

NlDevice
nl_device_for_rank (NlDevice device, int local_rank)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  g_autoptr (GPtrArray) list = NULL;
  int n;

  if (!reg || !reg->indexed)
    return device;
  /* the devices that can say what they are, as `devices` lists them */
  list = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_device_info_free);
  n = row_list ((guint) device.type, list, NULL);
  if (n > 0)
    device.index = local_rank % n;
  return device;
}
