/* test-network-doc.c — NlNetworkDoc: every edit, its refusals, undo/redo to
 * the exact JSON, groups, selection, clipboard, saved point, auto-layout.
 * No display needed (plain g_test_init). */
#include <math.h>
#include <string.h>

#include "ui/network/nl-network-doc-private.h"
#include "nl-test-util.h"

typedef struct {
  int changed, selection;
} Counts;

static void
on_changed (NlNetworkDoc *doc, Counts *c)
{
  (void) doc;
  c->changed++;
}

static void
on_selection (NlNetworkDoc *doc, Counts *c)
{
  (void) doc;
  c->selection++;
}

static NlNetworkDoc *
new_doc (NlNetwork *net, Counts *c)
{
  NlNetworkDoc *doc = nl_network_doc_new (net);
  if (c)
    {
      g_signal_connect (doc, "changed", G_CALLBACK (on_changed), c);
      g_signal_connect (doc, "selection-changed", G_CALLBACK (on_selection), c);
    }
  return doc;
}

static char *
doc_json (NlNetworkDoc *doc)
{
  return nl_network_to_json (nl_network_doc_get_network (doc));
}

static int
find (NlNetworkDoc *doc, const char *id)
{
  return nl_network_find (nl_network_doc_get_network (doc), id);
}

static int
add (NlNetworkDoc *doc, const char *op, const char *id, double x, double y)
{
  g_autoptr (GError) error = NULL;
  int i = nl_network_doc_add_node (doc, op, x, y, &error);
  g_assert_no_error (error);
  g_assert_cmpint (i, >=, 0);
  if (id)
    {
      g_assert_true (nl_network_doc_rename_node (doc, i, id, &error));
      g_assert_no_error (error);
    }
  return i;
}

static void
connect_ok (NlNetworkDoc *doc, const char *a, int ap, const char *b, int bp)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (nl_network_doc_connect (doc, find (doc, a), ap, find (doc, b), bp, &error));
  g_assert_no_error (error);
}

/* The refusal leaves the network and the history alone and names both. */
static void
connect_refused (NlNetworkDoc *doc, Counts *c, int from, int fp, int to, int tp, const char *expect)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) error2 = NULL;
  g_autofree char *before = doc_json (doc);
  g_autofree char *after = NULL;
  int changed = c->changed;
  const char *undo_label = nl_network_doc_get_undo_label (doc);

  g_assert_false (nl_network_doc_can_connect (doc, from, fp, to, tp, &error2));
  g_assert_false (nl_network_doc_connect (doc, from, fp, to, tp, &error));
  g_assert_nonnull (error);
  if (!strstr (error->message, expect))
    g_error ("expected '%s' in '%s'", expect, error->message);
  g_assert_cmpstr (error->message, ==, error2->message);
  after = doc_json (doc);
  g_assert_cmpstr (before, ==, after);
  g_assert_cmpint (c->changed, ==, changed);
  g_assert_true (undo_label == nl_network_doc_get_undo_label (doc));
}

/* ---- adding ---- */

static void
test_add_nodes (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  g_autoptr (GError) error = NULL;
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int a, b, bad;

  g_assert_cmpstr (nl_network_doc_get_name (doc), ==, "untitled");
  g_assert_false (nl_network_doc_can_undo (doc));
  a = nl_network_doc_add_node (doc, "Conv2D", 10, 20, &error);
  g_assert_no_error (error);
  b = nl_network_doc_add_node (doc, "Conv2D", 30, 40, &error);
  g_assert_no_error (error);
  g_assert_cmpint (a, ==, 0);
  g_assert_cmpint (b, ==, 1);
  g_assert_cmpstr (nl_network_node (net, 0)->id, ==, "conv2d");
  g_assert_cmpstr (nl_network_node (net, 1)->id, ==, "conv2d_2");
  g_assert_cmpfloat (nl_network_node (net, 1)->x, ==, 30);
  g_assert_cmpfloat (nl_network_node (net, 1)->y, ==, 40);
  g_assert_true (nl_network_node (net, 1)->has_position);
  g_assert_cmpint (c.changed, ==, 2);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Add Conv2D");

  bad = nl_network_doc_add_node (doc, "Conv9D", 0, 0, &error);
  g_assert_cmpint (bad, ==, -1);
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_UNKNOWN_OP);
  g_assert_nonnull (strstr (error->message, "Conv9D"));
  g_assert_cmpint (nl_network_n_nodes (net), ==, 2);
  g_assert_cmpint (c.changed, ==, 2);

  nl_network_doc_undo (doc);
  g_assert_cmpint (nl_network_n_nodes (net), ==, 1);
  g_assert_cmpstr (nl_network_doc_get_redo_label (doc), ==, "Add Conv2D");
  nl_network_doc_redo (doc);
  g_assert_cmpint (nl_network_n_nodes (net), ==, 2);
  g_assert_cmpstr (nl_network_node (net, 1)->id, ==, "conv2d_2");
  g_assert_cmpint (c.changed, ==, 4);
}

/* ---- connecting ---- */

static void
test_connect (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int data, conv1, relu1, fc2, add1, loss, label;

  data = add (doc, "Input", "data", 0, 0);
  conv1 = add (doc, "Conv2D", "conv1", 0, 100);
  relu1 = add (doc, "Activation", "relu1", 0, 200);
  fc2 = add (doc, "Dense", "fc2", 0, 300);
  add1 = add (doc, "Add", "add1", 0, 400);
  loss = add (doc, "SoftmaxCrossEntropy", "loss", 0, 500);
  label = add (doc, "Input", "label", 300, 400);

  connect_refused (doc, &c, conv1, 0, conv1, 0, "conv1");
  connect_refused (doc, &c, data, 0, conv1, 1, "conv1 has 1 input");
  connect_refused (doc, &c, data, 1, conv1, 0, "data has 1 output");
  connect_refused (doc, &c, conv1, 0, data, 0, "data is an Input");
  connect_refused (doc, &c, conv1, 0, label, 0, "label is an Input");

  connect_ok (doc, "conv1", 0, "relu1", 0);
  connect_ok (doc, "relu1", 0, "fc2", 0);
  g_assert_cmpint (net->edges->len, ==, 2);
  connect_refused (doc, &c, data, 0, relu1, 0, "relu1's input 'data' is already connected to conv1");
  connect_refused (doc, &c, fc2, 0, conv1, 0, "connecting fc2 to conv1 would make a cycle");
  connect_refused (doc, &c, fc2, 0, relu1, 0, "relu1's input 'data' is already connected to conv1");
  connect_ok (doc, "data", 0, "conv1", 0);

  g_assert_cmpint (nl_network_doc_free_input_port (doc, data), ==, -1);
  g_assert_cmpint (nl_network_doc_free_input_port (doc, relu1), ==, -1);
  g_assert_cmpint (nl_network_doc_free_input_port (doc, loss), ==, 0);
  /* variadic: ports 0 .. NL_MAX_PORTS - 1, each once */
  for (int p = 0; p < NL_MAX_PORTS; p++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_cmpint (nl_network_doc_free_input_port (doc, add1), ==, p);
      g_assert_true (nl_network_doc_can_connect (doc, p % 2 ? fc2 : relu1, 0, add1, p, &error));
      g_assert_true (nl_network_doc_connect (doc, p % 2 ? fc2 : relu1, 0, add1, p, &error));
      g_assert_no_error (error);
    }
  connect_refused (doc, &c, data, 0, add1, NL_MAX_PORTS, "add1 takes at most 16 inputs");
  connect_refused (doc, &c, data, 0, add1, 3, "add1's input 'data' (port 3) is already connected to fc2");
  connect_refused (doc, &c, add1, 0, conv1, 0, "conv1");
  /* a cycle through a variadic merge */
  {
    g_autoptr (NlNetworkDoc) d2 = new_doc (NULL, &c);
    int x = add (d2, "Add", "x", 0, 0), z;
    add (d2, "Dense", "y", 0, 0);
    z = add (d2, "Concat", "z", 0, 0);
    connect_ok (d2, "x", 0, "y", 0);
    connect_ok (d2, "y", 0, "z", 5);
    connect_refused (d2, &c, z, 0, x, 2, "connecting z to x would make a cycle");
  }

  /* losses: pred and label */
  g_assert_cmpint (nl_network_doc_free_input_port (doc, add1), ==, -1);
  connect_ok (doc, "add1", 0, "loss", 0);
  g_assert_cmpint (nl_network_doc_free_input_port (doc, loss), ==, 1);
  connect_ok (doc, "label", 0, "loss", 1);
  connect_refused (doc, &c, data, 0, loss, 2, "loss has 2 inputs");
  connect_refused (doc, &c, data, 0, loss, 1, "loss's input 'label' is already connected to label");
  connect_refused (doc, &c, data, 0, loss, 0, "loss's input 'pred' is already connected to add1");
  connect_refused (doc, &c, 99, 0, loss, 0, "99");

  /* the result is a valid network */
  {
    g_autoptr (GError) error = NULL;
    g_assert_true (nl_network_set_param ((NlNetwork *) net, conv1, "channels", "4", NULL));
    g_assert_true (nl_network_set_param ((NlNetwork *) net, conv1, "kernel", "3", NULL));
    g_assert_true (nl_network_set_param ((NlNetwork *) net, fc2, "units", "4", NULL));
    g_assert_true (nl_network_validate (net, NULL, &error));
    g_assert_no_error (error);
  }

  /* disconnect and its undo put the edge back at its index */
  {
    g_autofree char *before = doc_json (doc);
    g_autofree char *after = NULL;
    g_autofree char *undone = NULL;
    NlEdge e = g_array_index (net->edges, NlEdge, 1);
    nl_network_doc_disconnect (doc, 1);
    after = doc_json (doc);
    g_assert_cmpint (net->edges->len, ==, 2 + 1 + NL_MAX_PORTS + 2 - 1);
    g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Disconnect relu1 from fc2");
    nl_network_doc_undo (doc);
    undone = doc_json (doc);
    g_assert_cmpstr (undone, ==, before);
    g_assert_cmpint (g_array_index (net->edges, NlEdge, 1).from, ==, e.from);
    g_assert_cmpint (g_array_index (net->edges, NlEdge, 1).to, ==, e.to);
  }
}

/* ---- parameters and names ---- */

static void
test_set_param (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int conv = add (doc, "Conv2D", "conv1", 0, 0);
  int act = add (doc, "Activation", "relu1", 0, 0);
  int leaky = add (doc, "LeakyReLU", "leaky", 0, 0);
  NlNode *n = nl_network_node (net, conv);
  int k_kernel = nl_catalog_param_index (n->def, "kernel");
  int k_channels = nl_catalog_param_index (n->def, "channels");
  NlParamValue old = n->params[k_kernel];
  g_autofree char *before = doc_json (doc);
  struct { int node; const char *name, *value, *expect; } bad[] = {
    { conv, "kernel", "abc", "kernel" },
    { conv, "kernel", "5x5x5", "kernel" },
    { conv, "kernel", "0", "out of range" },
    { conv, "channels", "-3", "out of range" },
    { conv, "channels", "12abc", "channels" },
    { conv, "channelz", "3", "channelz" },
    { act, "act_type", "swish", "relu" },
    { leaky, "alpha", "nan", "alpha" },
  };

  g_assert_false (old.set);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *now = NULL;
      NlNode *b = nl_network_node (net, bad[i].node);
      g_autofree NlParamValue *copy = g_memdup2 (b->params, sizeof (NlParamValue) * b->def->n_params);
      g_assert_false (nl_network_doc_set_param (doc, bad[i].node, bad[i].name, bad[i].value, &error));
      g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARAM);
      if (!strstr (error->message, bad[i].expect) || !strstr (error->message, b->id))
        g_error ("%s=%s: unexpected message '%s'", bad[i].name, bad[i].value, error->message);
      g_assert_cmpmem (copy, sizeof (NlParamValue) * b->def->n_params, b->params,
                       sizeof (NlParamValue) * b->def->n_params);
      now = doc_json (doc);
      g_assert_cmpstr (now, ==, before);
    }
  g_assert_cmpint (c.changed, ==, 6); /* the adds and renames only */

  {
    g_autoptr (GError) error = NULL;
    g_autofree char *after = NULL;
    g_autofree char *undone = NULL;
    g_autofree char *redone = NULL;
    g_assert_true (nl_network_doc_set_param (doc, conv, "kernel", "5x3", &error));
    g_assert_no_error (error);
    g_assert_true (n->params[k_kernel].set);
    g_assert_cmpint (n->params[k_kernel].v[0], ==, 5);
    g_assert_cmpint (n->params[k_kernel].v[1], ==, 3);
    g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Change kernel of conv1");
    g_assert_cmpint (c.changed, ==, 7);
    after = doc_json (doc);
    g_assert_nonnull (strstr (after, "\"kernel\""));
    /* the same value again: nothing to undo */
    g_assert_true (nl_network_doc_set_param (doc, conv, "kernel", "5,3", &error));
    g_assert_cmpint (c.changed, ==, 7);
    nl_network_doc_undo (doc);
    undone = doc_json (doc);
    g_assert_cmpstr (undone, ==, before);
    /* exactly the old value, "unset" included */
    g_assert_cmpmem (&old, sizeof old, &n->params[k_kernel], sizeof old);
    g_assert_false (n->params[k_kernel].set);
    nl_network_doc_redo (doc);
    redone = doc_json (doc);
    g_assert_cmpstr (redone, ==, after);
    g_assert_true (nl_network_doc_set_param (doc, conv, "channels", "20", &error));
    g_assert_cmpint (n->params[k_channels].i, ==, 20);
    g_assert_true (nl_network_doc_set_param (doc, act, "act_type", "tanh", &error));
    g_assert_true (nl_network_doc_set_param (doc, leaky, "alpha", "0.2", &error));
    g_assert_no_error (error);
  }
}

static void
test_rename (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int a = add (doc, "Dense", "fc1", 0, 0);
  int b = add (doc, "Activation", "relu1", 0, 0);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *undone = NULL;
  struct { const char *id, *expect; } bad[] = {
    { "relu1", "relu1" }, { "", "fc1" }, { "a b", "a b" }, { "x:1", "x:1" }, { "a->b", "a->b" }, { "ü", "ü" },
  };

  connect_ok (doc, "fc1", 0, "relu1", 0);
  before = doc_json (doc);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *now = NULL;
      g_assert_false (nl_network_doc_rename_node (doc, a, bad[i].id, &error));
      g_assert_nonnull (error);
      if (!strstr (error->message, bad[i].expect))
        g_error ("rename to '%s': unexpected message '%s'", bad[i].id, error->message);
      now = doc_json (doc);
      g_assert_cmpstr (now, ==, before);
    }
  {
    g_autoptr (GError) error = NULL;
    g_assert_true (nl_network_doc_rename_node (doc, a, "Dense_1.a", &error));
    g_assert_no_error (error);
  }
  g_assert_cmpstr (nl_network_node (net, a)->id, ==, "Dense_1.a");
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Rename fc1 to Dense_1.a");
  after = doc_json (doc);
  g_assert_nonnull (strstr (after, "Dense_1.a:0 -> relu1:0"));
  /* the renamed network reads back */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (NlNetwork) back = nl_network_load_data (after, -1, &error);
    g_assert_no_error (error);
    g_assert_cmpint (nl_network_find (back, "Dense_1.a"), ==, 0);
  }
  nl_network_doc_undo (doc);
  undone = doc_json (doc);
  g_assert_cmpstr (undone, ==, before);
  (void) b;

  nl_network_doc_set_name (doc, "my net");
  g_assert_cmpstr (nl_network_doc_get_name (doc), ==, "my net");
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Rename network");
  nl_network_doc_undo (doc);
  g_assert_cmpstr (nl_network_doc_get_name (doc), ==, "untitled");
}

/* ---- undo/redo of every kind of edit ---- */

typedef void (*EditFunc) (NlNetworkDoc *doc);

static NlNetworkDoc *
sample_doc (void)
{
  NlNetworkDoc *doc = new_doc (NULL, NULL);
  add (doc, "Input", "data", 0, 0);
  add (doc, "Conv2D", "conv1", 0, 120);
  add (doc, "Activation", "relu1", 0, 240);
  add (doc, "Dense", "fc1", 0, 360);
  add (doc, "Dense", "fc2", 240, 360);
  add (doc, "Add", "sum", 0, 480);
  connect_ok (doc, "data", 0, "conv1", 0);
  connect_ok (doc, "conv1", 0, "relu1", 0);
  connect_ok (doc, "relu1", 0, "fc1", 0);
  connect_ok (doc, "relu1", 0, "fc2", 0);
  connect_ok (doc, "fc1", 0, "sum", 0);
  connect_ok (doc, "fc2", 0, "sum", 1);
  g_assert_true (nl_network_doc_set_param (doc, 1, "kernel", "3", NULL));
  return doc;
}

static void edit_add (NlNetworkDoc *d) { add (d, "Dropout", NULL, 5, 5); }
static void edit_remove (NlNetworkDoc *d) { int v[] = { 2, 4 }; nl_network_doc_remove_nodes (d, v, 2); }
static void edit_move (NlNetworkDoc *d) { int v[] = { 0, 3 }; nl_network_doc_move_nodes (d, v, 2, 7.5, -3); }
static void edit_positions (NlNetworkDoc *d)
{
  int v[] = { 5, 1 };
  double xy[] = { 1, 2, 3, 4 };
  nl_network_doc_set_positions (d, v, 2, xy);
}
static void edit_connect (NlNetworkDoc *d) { connect_ok (d, "data", 0, "sum", 2); }
static void edit_disconnect (NlNetworkDoc *d) { nl_network_doc_disconnect (d, 2); }
static void edit_param (NlNetworkDoc *d) { g_assert_true (nl_network_doc_set_param (d, 3, "units", "7", NULL)); }
static void edit_rename (NlNetworkDoc *d) { g_assert_true (nl_network_doc_rename_node (d, 2, "act", NULL)); }
static void edit_name (NlNetworkDoc *d) { nl_network_doc_set_name (d, "renamed"); }
static void edit_layout (NlNetworkDoc *d) { nl_network_doc_auto_layout (d, NULL, 0); }
static void edit_paste (NlNetworkDoc *d)
{
  int v[] = { 1, 2, 3 };
  g_autofree char *json = nl_network_doc_copy_json (d, v, 3);
  g_assert_true (nl_network_doc_paste_json (d, json, 10, 10, NULL));
}
static void edit_duplicate (NlNetworkDoc *d)
{
  int v[] = { 0, 1 };
  nl_network_doc_select (d, v, 2);
  g_assert_true (nl_network_doc_duplicate_selection (d, NULL));
}

static void
test_undo_redo_each (void)
{
  struct { const char *name; EditFunc f; } edits[] = {
    { "add", edit_add }, { "remove", edit_remove }, { "move", edit_move }, { "positions", edit_positions },
    { "connect", edit_connect }, { "disconnect", edit_disconnect }, { "param", edit_param },
    { "rename", edit_rename }, { "name", edit_name }, { "layout", edit_layout }, { "paste", edit_paste },
    { "duplicate", edit_duplicate },
  };
  for (guint i = 0; i < G_N_ELEMENTS (edits); i++)
    {
      g_autoptr (NlNetworkDoc) doc = sample_doc ();
      g_autofree char *before = doc_json (doc);
      g_autofree char *after = NULL;
      g_autofree char *undone = NULL;
      g_autofree char *redone = NULL;
      g_autofree char *undone2 = NULL;
      const char *label;

      g_test_message ("edit %s", edits[i].name);
      edits[i].f (doc);
      after = doc_json (doc);
      g_assert_cmpstr (after, !=, before);
      label = nl_network_doc_get_undo_label (doc);
      g_assert_nonnull (label);
      nl_network_doc_undo (doc);
      undone = doc_json (doc);
      g_assert_cmpstr (undone, ==, before);
      g_assert_cmpstr (nl_network_doc_get_redo_label (doc), ==, label);
      nl_network_doc_redo (doc);
      redone = doc_json (doc);
      g_assert_cmpstr (redone, ==, after);
      g_assert_false (nl_network_doc_can_redo (doc));
      nl_network_doc_undo (doc);
      undone2 = doc_json (doc);
      g_assert_cmpstr (undone2, ==, before);
      /* a new edit drops the redo history */
      edit_name (doc);
      g_assert_false (nl_network_doc_can_redo (doc));
    }
}

/* Every step of building a network undone brings back the empty document;
 * redone, the same network. */
static void
test_undo_all_back (void)
{
  g_autoptr (NlNetworkDoc) empty_doc = new_doc (NULL, NULL);
  g_autofree char *empty = doc_json (empty_doc);
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  g_autofree char *full = NULL;
  g_autofree char *undone = NULL;
  g_autofree char *redone = NULL;
  int steps = 0;

  edit_paste (doc);
  edit_move (doc);
  edit_remove (doc);
  edit_layout (doc);
  edit_disconnect (doc);
  full = doc_json (doc);
  while (nl_network_doc_can_undo (doc))
    {
      nl_network_doc_undo (doc);
      steps++;
    }
  undone = doc_json (doc);
  g_assert_cmpstr (undone, ==, empty);
  while (nl_network_doc_can_redo (doc))
    nl_network_doc_redo (doc);
  redone = doc_json (doc);
  g_assert_cmpstr (redone, ==, full);
  /* 6 adds and 6 renames, 6 connections, 1 parameter, then 5 edits */
  g_assert_cmpint (steps, ==, 24);
}

/* ---- groups ---- */

static void
test_group (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *undone = NULL;
  g_autofree char *redone = NULL;

  add (doc, "Input", "data", 0, 0);
  before = doc_json (doc);
  c.changed = 0;
  nl_network_doc_begin_group (doc, "Add a block");
  add (doc, "Dense", "fc", 0, 100);
  nl_network_doc_begin_group (doc, "inner"); /* nests */
  add (doc, "Activation", "act", 0, 200);
  connect_ok (doc, "data", 0, "fc", 0);
  nl_network_doc_end_group (doc);
  connect_ok (doc, "fc", 0, "act", 0);
  g_assert_cmpint (c.changed, ==, 0);
  nl_network_doc_end_group (doc);
  g_assert_cmpint (c.changed, ==, 1);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Add a block");
  after = doc_json (doc);
  nl_network_doc_undo (doc);
  undone = doc_json (doc);
  g_assert_cmpstr (undone, ==, before);
  g_assert_cmpint (c.changed, ==, 2);
  nl_network_doc_redo (doc);
  redone = doc_json (doc);
  g_assert_cmpstr (redone, ==, after);

  /* an empty group leaves no step and says nothing */
  c.changed = 0;
  nl_network_doc_begin_group (doc, "nothing");
  nl_network_doc_end_group (doc);
  g_assert_cmpint (c.changed, ==, 0);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Add a block");
}

static void
test_move_merge (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, &c);
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int sel[] = { 1, 0 };
  int other[] = { 2 };
  Step *top;
  g_autofree char *before = NULL;

  add (doc, "Input", "a", 0, 0);
  add (doc, "Dense", "b", 100, 100);
  add (doc, "Dense", "c", 200, 200);
  before = doc_json (doc);

  /* a drag: many small moves, one step of one operation */
  nl_network_doc_begin_group (doc, "Move");
  for (int i = 0; i < 50; i++)
    nl_network_doc_move_nodes (doc, sel, 2, 1, 2);
  nl_network_doc_end_group (doc);
  top = g_ptr_array_index (doc->undo, doc->undo->len - 1);
  g_assert_cmpuint (top->ops->len, ==, 1);
  g_assert_cmpfloat (nl_network_node (net, 0)->x, ==, 50);
  g_assert_cmpfloat (nl_network_node (net, 1)->y, ==, 200);
  nl_network_doc_undo (doc);
  {
    g_autofree char *undone = doc_json (doc);
    g_assert_cmpstr (undone, ==, before);
  }
  nl_network_doc_redo (doc);
  g_assert_cmpfloat (nl_network_node (net, 0)->x, ==, 50);

  /* another set breaks the run; still one step */
  nl_network_doc_begin_group (doc, "Move");
  nl_network_doc_move_nodes (doc, sel, 2, 1, 0);
  nl_network_doc_move_nodes (doc, other, 1, 1, 0);
  nl_network_doc_move_nodes (doc, sel, 2, 1, 0);
  nl_network_doc_end_group (doc);
  top = g_ptr_array_index (doc->undo, doc->undo->len - 1);
  g_assert_cmpuint (top->ops->len, ==, 3);
  g_assert_cmpfloat (nl_network_node (net, 0)->x, ==, 52);

  /* outside a group each move is a step of its own */
  nl_network_doc_move_nodes (doc, sel, 2, 10, 0);
  nl_network_doc_move_nodes (doc, sel, 2, 10, 0);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Move 2 layers");
  nl_network_doc_undo (doc);
  g_assert_cmpfloat (nl_network_node (net, 0)->x, ==, 62);
  nl_network_doc_undo (doc);
  nl_network_doc_undo (doc);
  nl_network_doc_undo (doc);
  {
    g_autofree char *undone = doc_json (doc);
    g_assert_cmpstr (undone, ==, before);
  }
}

/* ---- removing and the selection ---- */

static void
test_remove_restores (void)
{
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  const NlNetwork *net = nl_network_doc_get_network (doc);
  g_autofree char *before = doc_json (doc);
  g_autofree char *undone = NULL;
  g_autofree char *after = NULL;
  g_autofree char *redone = NULL;
  int gone[] = { 4, 2 }; /* relu1, fc2 */

  nl_network_doc_remove_nodes (doc, gone, 2);
  g_assert_cmpint (nl_network_n_nodes (net), ==, 4);
  g_assert_cmpint (find (doc, "relu1"), ==, -1);
  g_assert_cmpint (find (doc, "fc1"), ==, 2);
  g_assert_cmpint (find (doc, "sum"), ==, 3);
  /* left: data->conv1, fc1->sum (renumbered) */
  g_assert_cmpint (net->edges->len, ==, 2);
  g_assert_cmpint (g_array_index (net->edges, NlEdge, 1).from, ==, 2);
  g_assert_cmpint (g_array_index (net->edges, NlEdge, 1).to, ==, 3);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Remove 2 layers");
  after = doc_json (doc);
  nl_network_doc_undo (doc);
  undone = doc_json (doc);
  g_assert_cmpstr (undone, ==, before); /* nodes and edges at their indices */
  nl_network_doc_redo (doc);
  redone = doc_json (doc);
  g_assert_cmpstr (redone, ==, after);
}

static void
test_selection (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  const int *s;
  int n;
  int pick[] = { 5, 1, 3, 3 };
  int same[] = { 3, 5, 1 };
  int gone[] = { 2 };
  int gone2[] = { 1 };

  g_signal_connect (doc, "changed", G_CALLBACK (on_changed), &c);
  g_signal_connect (doc, "selection-changed", G_CALLBACK (on_selection), &c);
  nl_network_doc_select (doc, pick, 4);
  g_assert_cmpint (c.selection, ==, 1);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (s[0], ==, 1);
  g_assert_cmpint (s[1], ==, 3);
  g_assert_cmpint (s[2], ==, 5);
  nl_network_doc_select (doc, same, 3);
  g_assert_cmpint (c.selection, ==, 1); /* no change, no signal */
  g_assert_true (nl_network_doc_is_selected (doc, 3));
  g_assert_false (nl_network_doc_is_selected (doc, 2));

  nl_network_doc_remove_nodes (doc, gone, 1); /* relu1: 3, 5 shift down */
  g_assert_cmpint (c.selection, ==, 2);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (s[0], ==, 1);
  g_assert_cmpint (s[1], ==, 2);
  g_assert_cmpint (s[2], ==, 4);

  nl_network_doc_remove_nodes (doc, gone2, 1); /* a selected one */
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (s[0], ==, 1);
  g_assert_cmpint (s[1], ==, 3);
  g_assert_cmpint (c.selection, ==, 3);

  /* undo restores the selection each step started with */
  nl_network_doc_undo (doc);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (s[0], ==, 1);
  g_assert_cmpint (s[2], ==, 4);
  nl_network_doc_undo (doc);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (s[1], ==, 3);
  g_assert_cmpint (s[2], ==, 5);
  g_assert_cmpint (c.selection, ==, 5);
  nl_network_doc_redo (doc);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (s[2], ==, 4);

  /* a move leaves the selection, and says nothing about it */
  c.selection = 0;
  nl_network_doc_move_nodes (doc, s, n, 5, 5);
  g_assert_cmpint (c.selection, ==, 0);

  nl_network_doc_select_all (doc);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, nl_network_n_nodes (nl_network_doc_get_network (doc)));
  nl_network_doc_select (doc, NULL, 0);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 0);
  g_assert_cmpint (c.selection, ==, 2);

  /* set_network clears it (and the history) */
  nl_network_doc_select_all (doc);
  nl_network_doc_set_network (doc, NULL);
  nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 0);
  g_assert_false (nl_network_doc_can_undo (doc));
  g_assert_false (nl_network_doc_is_modified (doc));
  g_assert_cmpint (c.selection, ==, 4);
}

/* ---- clipboard ---- */

static void
test_copy_paste (void)
{
  g_autoptr (NlNetworkDoc) a = sample_doc ();
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) b = new_doc (NULL, &c);
  const NlNetwork *nb = nl_network_doc_get_network (b);
  int pick[] = { 3, 1, 2 }; /* conv1, relu1, fc1 */
  g_autofree char *json = nl_network_doc_copy_json (a, pick, 3);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *undone = NULL;
  g_autoptr (NlNetwork) clip = NULL;
  const int *s;
  int n, c1;

  /* the clipboard: only those nodes and the edges among them */
  clip = nl_network_load_data (json, -1, NULL);
  g_assert_nonnull (clip);
  g_assert_cmpint (nl_network_n_nodes (clip), ==, 3);
  g_assert_cmpint (clip->edges->len, ==, 2);
  g_assert_cmpfloat (nl_network_node (clip, 2)->y, ==, 360);
  g_assert_nonnull (strstr (json, "\"format\" : \"netloom.network\""));
  g_assert_nonnull (strstr (json, "conv1:0 -> relu1:0"));
  g_assert_null (strstr (json, "data"));

  add (b, "Input", "data", 0, 0);
  add (b, "Conv2D", "conv1", 0, 100);
  add (b, "Conv2D", "conv1_2", 0, 200);
  before = doc_json (b);
  c.changed = c.selection = 0;
  g_assert_true (nl_network_doc_paste_json (b, json, 40, 50, NULL));
  g_assert_cmpint (c.changed, ==, 1);
  g_assert_cmpint (c.selection, ==, 1);
  g_assert_cmpint (nl_network_n_nodes (nb), ==, 6);
  c1 = find (b, "conv1_3");
  g_assert_cmpint (c1, ==, 3);
  g_assert_cmpint (find (b, "relu1"), ==, 4);
  g_assert_cmpint (find (b, "fc1"), ==, 5);
  g_assert_cmpfloat (nl_network_node (nb, c1)->x, ==, 40);
  g_assert_cmpfloat (nl_network_node (nb, c1)->y, ==, 170);
  g_assert_cmpint (nb->edges->len, ==, 2);
  after = doc_json (b);
  g_assert_nonnull (strstr (after, "conv1_3:0 -> relu1:0"));
  g_assert_nonnull (strstr (after, "relu1:0 -> fc1:0"));
  /* the pasted conv kept its parameters */
  g_assert_cmpint (nl_network_node (nb, c1)->params[nl_catalog_param_index (nl_network_node (nb, c1)->def, "kernel")].v[0],
                   ==, 3);
  s = nl_network_doc_get_selection (b, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (s[0], ==, 3);
  g_assert_cmpint (s[2], ==, 5);
  g_assert_cmpstr (nl_network_doc_get_undo_label (b), ==, "Paste 3 layers");

  /* again: every id collides now */
  g_assert_true (nl_network_doc_paste_json (b, json, 80, 100, NULL));
  g_assert_cmpint (find (b, "conv1_4"), ==, 6);
  g_assert_cmpint (find (b, "relu1_2"), ==, 7);
  g_assert_cmpint (find (b, "fc1_2"), ==, 8);
  {
    g_autofree char *twice = doc_json (b);
    g_assert_nonnull (strstr (twice, "conv1_4:0 -> relu1_2:0"));
  }
  nl_network_doc_undo (b);
  nl_network_doc_undo (b);
  undone = doc_json (b);
  g_assert_cmpstr (undone, ==, before);
  nl_network_doc_get_selection (b, &n);
  g_assert_cmpint (n, ==, 0);
}

static void
test_paste_bad (void)
{
  Counts c = { 0 };
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  g_autofree char *before = doc_json (doc);
  const char *bad[] = {
    "not json at all",
    "[1, 2, 3]",
    "{\"format\": \"other\", \"nodes\": []}",
    "{\"format\": \"netloom.network\", \"version\": 1, \"nodes\": []}",
    "{\"format\": \"netloom.network\", \"version\": 1, \"nodes\": [{\"id\": \"x\", \"op\": \"Warp\"}]}",
    "{\"format\": \"netloom.network\", \"version\": 1, \"nodes\": [{\"id\": \"x\", \"op\": \"Dense\"}],"
    " \"edges\": [\"x:0 -> y:0\"]}",
    "{\"format\": \"netloom.network\", \"version\": 1, \"nodes\": [{\"id\": \"p\", \"op\": \"Add\"},"
    " {\"id\": \"q\", \"op\": \"Dense\"}], \"edges\": [\"p:0 -> q:0\", \"q:0 -> p:1\"]}",
  };
  const char *expect[] = { "JSON", "not a netloom network", "not a netloom network", "no layers", "Warp", "'y'",
                           "cycle" };

  g_signal_connect (doc, "changed", G_CALLBACK (on_changed), &c);
  g_signal_connect (doc, "selection-changed", G_CALLBACK (on_selection), &c);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *now = NULL;
      g_assert_false (nl_network_doc_paste_json (doc, bad[i], 10, 10, &error));
      g_assert_nonnull (error);
      if (!strstr (error->message, expect[i]))
        g_error ("paste %u: expected '%s' in '%s'", i, expect[i], error->message);
      now = doc_json (doc);
      g_assert_cmpstr (now, ==, before);
    }
  g_assert_cmpint (c.changed, ==, 0);
  g_assert_cmpint (c.selection, ==, 0);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Change kernel of conv1");
}

static void
test_duplicate (void)
{
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  const NlNetwork *net = nl_network_doc_get_network (doc);
  g_autoptr (GError) error = NULL;
  int pick[] = { 1, 2 };
  int n;
  const int *s;

  g_assert_false (nl_network_doc_duplicate_selection (doc, &error));
  g_assert_nonnull (strstr (error->message, "select"));
  g_clear_error (&error);
  nl_network_doc_select (doc, pick, 2);
  g_assert_true (nl_network_doc_duplicate_selection (doc, &error));
  g_assert_no_error (error);
  g_assert_cmpint (nl_network_n_nodes (net), ==, 8);
  g_assert_cmpstr (nl_network_node (net, 6)->id, ==, "conv1_2");
  g_assert_cmpstr (nl_network_node (net, 7)->id, ==, "relu1_2");
  g_assert_cmpfloat (nl_network_node (net, 6)->x, >, nl_network_node (net, 1)->x);
  g_assert_cmpfloat (nl_network_node (net, 6)->y, >, nl_network_node (net, 1)->y);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Duplicate 2 layers");
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (s[0], ==, 6);
  {
    const NlEdge *e = &g_array_index (net->edges, NlEdge, net->edges->len - 1);
    g_assert_cmpint (e->from, ==, 6);
    g_assert_cmpint (e->to, ==, 7);
  }
  nl_network_doc_undo (doc);
  g_assert_cmpint (nl_network_n_nodes (net), ==, 6);
  s = nl_network_doc_get_selection (doc, &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (s[0], ==, 1);
}

/* ---- saved point ---- */

static void
test_modified (void)
{
  g_autoptr (NlNetworkDoc) doc = new_doc (NULL, NULL);
  int moved[] = { 0 };

  g_assert_false (nl_network_doc_is_modified (doc));
  add (doc, "Input", "data", 0, 0);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_mark_saved (doc);
  g_assert_false (nl_network_doc_is_modified (doc));
  nl_network_doc_move_nodes (doc, moved, 1, 5, 5);
  nl_network_doc_move_nodes (doc, moved, 1, 5, 5);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_undo (doc);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_undo (doc);
  g_assert_false (nl_network_doc_is_modified (doc)); /* back at the saved point */
  nl_network_doc_undo (doc);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_undo (doc);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_redo (doc);
  nl_network_doc_redo (doc);
  g_assert_false (nl_network_doc_is_modified (doc));
  /* the saved state's redo branch is dropped by a new edit: modified for good */
  nl_network_doc_undo (doc);
  nl_network_doc_set_name (doc, "other");
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_undo (doc);
  g_assert_true (nl_network_doc_is_modified (doc));
  nl_network_doc_mark_saved (doc);
  g_assert_false (nl_network_doc_is_modified (doc));

  /* at most 200 steps are kept */
  nl_network_doc_set_network (doc, NULL);
  add (doc, "Input", "data", 0, 0);
  nl_network_doc_mark_saved (doc);
  for (int i = 0; i < 250; i++)
    nl_network_doc_move_nodes (doc, moved, 1, 1, 0);
  for (int i = 0; i < 200; i++)
    {
      g_assert_true (nl_network_doc_can_undo (doc));
      nl_network_doc_undo (doc);
    }
  g_assert_false (nl_network_doc_can_undo (doc));
  g_assert_cmpfloat (nl_network_node (nl_network_doc_get_network (doc), 0)->x, ==, 50);
  g_assert_true (nl_network_doc_is_modified (doc));
}

/* ---- layout ---- */

static void
assert_laid_out (const NlNetwork *net, const int *nodes, int n)
{
  g_autofree int *all = NULL;
  g_autofree gboolean *in = g_new0 (gboolean, nl_network_n_nodes (net) + 1);

  if (n == 0)
    {
      n = nl_network_n_nodes (net);
      all = g_new (int, n);
      for (int i = 0; i < n; i++)
        all[i] = i;
      nodes = all;
    }
  for (int i = 0; i < n; i++)
    in[nodes[i]] = TRUE;
  for (guint k = 0; k < net->edges->len; k++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      if (in[e->from] && in[e->to])
        g_assert_cmpfloat (nl_network_node (net, e->to)->y, >, nl_network_node (net, e->from)->y);
    }
  for (int i = 0; i < n; i++)
    {
      const NlNode *a = nl_network_node (net, nodes[i]);
      g_assert_true (a->has_position);
      for (int j = i + 1; j < n; j++)
        {
          const NlNode *b = nl_network_node (net, nodes[j]);
          if (fabs (a->x - b->x) < NL_CARD_WIDTH && fabs (a->y - b->y) < NL_CARD_HEIGHT)
            g_error ("%s (%g, %g) and %s (%g, %g) overlap", a->id, a->x, a->y, b->id, b->x, b->y);
        }
    }
}

static void
test_layout_generated (void)
{
  g_autoptr (NlNetworkDoc) doc = new_doc (nl_test_generated_network (300), NULL);
  const NlNetwork *net = nl_network_doc_get_network (doc);
  g_autofree char *before = doc_json (doc);
  g_autofree char *after = NULL;
  g_autofree char *again = NULL;
  g_autofree char *undone = NULL;
  gboolean wide = FALSE;

  nl_network_doc_auto_layout (doc, NULL, 0);
  assert_laid_out (net, NULL, 0);
  g_assert_cmpstr (nl_network_doc_get_undo_label (doc), ==, "Arrange layers");
  /* branches sit side by side, the top-left is the origin (no positions before) */
  for (int i = 1; i < nl_network_n_nodes (net); i++)
    wide = wide || nl_network_node (net, i)->x != nl_network_node (net, 0)->x;
  g_assert_true (wide);
  {
    double minx = G_MAXDOUBLE, miny = G_MAXDOUBLE;
    for (int i = 0; i < nl_network_n_nodes (net); i++)
      minx = MIN (minx, nl_network_node (net, i)->x), miny = MIN (miny, nl_network_node (net, i)->y);
    g_assert_cmpfloat (minx, ==, 0);
    g_assert_cmpfloat (miny, ==, 0);
  }
  after = doc_json (doc);
  nl_network_doc_auto_layout (doc, NULL, 0); /* idempotent: nothing moves, no step */
  again = doc_json (doc);
  g_assert_cmpstr (again, ==, after);
  nl_network_doc_undo (doc);
  undone = doc_json (doc);
  g_assert_cmpstr (undone, ==, before);
  g_assert_false (nl_network_doc_can_undo (doc));
}

static void
test_layout_subset (void)
{
  g_autoptr (NlNetworkDoc) doc = sample_doc ();
  const NlNetwork *net = nl_network_doc_get_network (doc);
  int pick[] = { 2, 3, 4, 5 }; /* relu1, fc1, fc2, sum: at (0,240) (0,360) (240,360) (0,480) */
  double x0 = nl_network_node (net, 0)->x, y0 = nl_network_node (net, 0)->y;
  double minx = G_MAXDOUBLE, miny = G_MAXDOUBLE;

  nl_network_doc_move_nodes (doc, pick, 4, 1000, 30);
  nl_network_doc_auto_layout (doc, pick, 4);
  assert_laid_out (net, pick, 4);
  for (int i = 0; i < 4; i++)
    {
      minx = MIN (minx, nl_network_node (net, pick[i])->x);
      miny = MIN (miny, nl_network_node (net, pick[i])->y);
    }
  g_assert_cmpfloat (minx, ==, 1000);
  g_assert_cmpfloat (miny, ==, 270);
  /* fc1 and fc2 side by side on one layer, sum below */
  g_assert_cmpfloat (nl_network_node (net, 3)->y, ==, nl_network_node (net, 4)->y);
  g_assert_cmpfloat (fabs (nl_network_node (net, 3)->x - nl_network_node (net, 4)->x), ==, NL_CARD_WIDTH + 40);
  g_assert_cmpfloat (nl_network_node (net, 5)->y - nl_network_node (net, 3)->y, ==, NL_CARD_HEIGHT + 48);
  /* the others stay */
  g_assert_cmpfloat (nl_network_node (net, 0)->x, ==, x0);
  g_assert_cmpfloat (nl_network_node (net, 0)->y, ==, y0);
  g_assert_cmpfloat (nl_network_node (net, 2)->x, ==, 1120);
  nl_network_doc_undo (doc);
  g_assert_cmpfloat (nl_network_node (net, 2)->x, ==, 1000);
  g_assert_cmpfloat (nl_network_node (net, 5)->y, ==, 510);
}

static void
test_layout_templates (void)
{
  const char *names[] = { "mlp", "lenet", "resnet-small" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *rel = g_strdup_printf ("data/networks/%s.json", names[i]);
      g_autofree char *path = nl_test_source_path (rel);
      g_autoptr (GError) error = NULL;
      NlNetwork *net = nl_network_load_file (path, &error);
      g_autoptr (NlNetworkDoc) doc = NULL;
      g_autofree char *laid = NULL;
      g_autofree char *again = NULL;

      g_assert_no_error (error);
      doc = new_doc (net, NULL);
      nl_network_doc_auto_layout (doc, NULL, 0);
      assert_laid_out (nl_network_doc_get_network (doc), NULL, 0);
      /* still a valid network */
      g_assert_true (nl_network_validate (nl_network_doc_get_network (doc), NULL, &error));
      g_assert_no_error (error);
      laid = doc_json (doc);
      nl_network_doc_auto_layout (doc, NULL, 0);
      again = doc_json (doc);
      g_assert_cmpstr (again, ==, laid);
    }
}

/* A cycle (a file may hold one) still gets every node a place. */
static void
test_layout_cycle (void)
{
  const char *json = "{\"format\": \"netloom.network\", \"version\": 1, \"nodes\": [{\"id\": \"p\", \"op\": \"Add\"},"
                     " {\"id\": \"q\", \"op\": \"Dense\"}, {\"id\": \"r\", \"op\": \"Dense\"}],"
                     " \"edges\": [\"p:0 -> q:0\", \"q:0 -> p:1\", \"q:0 -> r:0\"]}";
  g_autoptr (GError) error = NULL;
  NlNetwork *net = nl_network_load_data (json, -1, &error);
  g_autoptr (NlNetworkDoc) doc = NULL;
  const NlNetwork *n;

  g_assert_no_error (error);
  doc = new_doc (net, NULL);
  nl_network_doc_auto_layout (doc, NULL, 0);
  n = nl_network_doc_get_network (doc);
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      g_assert_false (nl_network_node (n, i)->x == nl_network_node (n, j)->x
                      && nl_network_node (n, i)->y == nl_network_node (n, j)->y);
  g_assert_cmpfloat (nl_network_node (n, 2)->y, >, nl_network_node (n, 1)->y);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/network-doc/add", test_add_nodes);
  g_test_add_func ("/network-doc/connect", test_connect);
  g_test_add_func ("/network-doc/set-param", test_set_param);
  g_test_add_func ("/network-doc/rename", test_rename);
  g_test_add_func ("/network-doc/undo-redo-each", test_undo_redo_each);
  g_test_add_func ("/network-doc/undo-all-back", test_undo_all_back);
  g_test_add_func ("/network-doc/group", test_group);
  g_test_add_func ("/network-doc/move-merge", test_move_merge);
  g_test_add_func ("/network-doc/remove-restores", test_remove_restores);
  g_test_add_func ("/network-doc/selection", test_selection);
  g_test_add_func ("/network-doc/copy-paste", test_copy_paste);
  g_test_add_func ("/network-doc/paste-bad", test_paste_bad);
  g_test_add_func ("/network-doc/duplicate", test_duplicate);
  g_test_add_func ("/network-doc/modified", test_modified);
  g_test_add_func ("/network-doc/layout-generated", test_layout_generated);
  g_test_add_func ("/network-doc/layout-subset", test_layout_subset);
  g_test_add_func ("/network-doc/layout-templates", test_layout_templates);
  g_test_add_func ("/network-doc/layout-cycle", test_layout_cycle);
  return g_test_run ();
}
