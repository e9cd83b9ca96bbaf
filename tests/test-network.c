/* test-network.c — network documents: templates, JSON round trip, and every
 * kind of broken network gets a message naming the node. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/nl-json-guard.h"
#include "engine/graph/nl-program.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-op-registry.h"
#include "nl-test-util.h"

static void
test_templates (void)
{
  const char *names[] = { "mlp", "lenet", "resnet-small" };
  const int64_t params[] = { 784 * 256 + 256 + 2560 + 10, 20 * 25 + 20 + 50 * 500 + 50 + 800 * 500 + 500 + 5000 + 10, -1 };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (NlNetwork) net = nl_test_load_template (names[i]);
      NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (net->name, ==, names[i]);
      if (params[i] > 0)
        g_assert_cmpint (model->n_params, ==, params[i]);
      else
        g_assert_cmpint (model->n_params, >, 10000);
    }
}

static void
test_round_trip (void)
{
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  g_autofree char *json = nl_network_to_json (net);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) again = nl_network_load_data (json, -1, &error);
  g_autofree char *json2 = NULL;
  int conv1;

  g_assert_no_error (error);
  json2 = nl_network_to_json (again);
  g_assert_cmpstr (json, ==, json2);
  g_assert_cmpint (nl_network_n_nodes (again), ==, 11);
  g_assert_cmpint (again->edges->len, ==, 10);
  conv1 = nl_network_find (again, "conv1");
  g_assert_cmpint (conv1, >=, 0);
  g_assert_cmpstr (nl_network_node (again, conv1)->def->name, ==, "Conv2D");
  g_assert_cmpint (nl_network_node (again, conv1)->params[nl_op_param_index (nl_network_node (again, conv1)->def, "channels")].i, ==, 20);
  g_assert_true (nl_network_node (again, conv1)->has_position);
  g_assert_cmpfloat (nl_network_node (again, conv1)->y, ==, 100);
}

typedef struct {
  const char *json;
  int code;
  const char *needle;   /* the message must contain this */
} BadCase;

#define HEAD "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":["
#define IN "{\"id\":\"data\",\"op\":\"Input\"}"

static const BadCase bad_cases[] = {
  { "not json", NL_NETWORK_ERROR_PARSE, "not valid JSON" },
  { "{\"format\":\"something.else\"}", NL_NETWORK_ERROR_PARSE, "not a netloom network" },
  { "{\"format\":\"netloom.network\",\"version\":99,\"nodes\":[]}", NL_NETWORK_ERROR_PARSE, "version 99" },
  { HEAD IN ",{\"id\":\"x\",\"op\":\"Frobnicate\"}],\"edges\":[]}", NL_NETWORK_ERROR_UNKNOWN_OP, "node 'x': unknown op 'Frobnicate'" },
  { HEAD IN ",{\"id\":\"fc\",\"op\":\"Dense\"}],\"edges\":[\"data -> fc\"]}", NL_NETWORK_ERROR_PARAM, "node 'fc': Dense needs parameter 'units'" },
  { HEAD IN ",{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":0}}],\"edges\":[\"data -> fc\"]}", NL_NETWORK_ERROR_PARAM, "'units' is out of range" },
  { HEAD IN ",{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"unitz\":3}}],\"edges\":[]}", NL_NETWORK_ERROR_PARAM, "node 'fc': Dense has no parameter 'unitz'" },
  { HEAD IN ",{\"id\":\"a\",\"op\":\"Activation\",\"params\":{\"act_type\":\"swish\"}}],\"edges\":[]}", NL_NETWORK_ERROR_PARAM, "must be one of relu|sigmoid|tanh|softrelu" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[\"data -> ghost\"]}", NL_NETWORK_ERROR_EDGE, "node 'ghost', which does not exist" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[\"data -> f:3\"]}", NL_NETWORK_ERROR_EDGE, "'f' (Flatten) has no input port 3" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"},{\"id\":\"g\",\"op\":\"Flatten\"}],\"edges\":[\"data -> f\",\"g -> f\"]}", NL_NETWORK_ERROR_EDGE, "connected twice" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[]}", NL_NETWORK_ERROR_STRUCTURE, "node 'f' (Flatten): input 'data' (port 0) is not connected" },
  { HEAD IN ",{\"id\":\"a\",\"op\":\"Add\"},{\"id\":\"r\",\"op\":\"Activation\"}],\"edges\":[\"data -> a:0\",\"r -> a:1\",\"a -> r\"]}", NL_NETWORK_ERROR_CYCLE, "cycle" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"},{\"id\":\"g\",\"op\":\"Flatten\"}],\"edges\":[\"data -> f\",\"data -> g\"]}", NL_NETWORK_ERROR_STRUCTURE, "exactly one node" },
  { HEAD IN ",{\"id\":\"c\",\"op\":\"Conv2D\",\"params\":{\"channels\":4,\"kernel\":40}}],\"edges\":[\"data -> c\"]}", NL_NETWORK_ERROR_SHAPE, "node 'c' (Conv2D)" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"},{\"id\":\"p\",\"op\":\"MaxPool2D\"}],\"edges\":[\"data -> f\",\"f -> p\"]}", NL_NETWORK_ERROR_SHAPE, "node 'p' (MaxPool2D)" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[3,32,32]}}],\"edges\":[]}", NL_NETWORK_ERROR_SHAPE, "node 'data' (Input)" },
  /* each dimension in range, their product past int64 (2^96) or past the
   * limit (2^41): refused before shape inference multiplies them out */
  { HEAD "{\"id\":\"in\",\"op\":\"Input\",\"params\":{\"shape\":[4294967296,4294967296,4294967296]}},{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[\"in -> f\"]}",
    NL_NETWORK_ERROR_PARAM, "node 'in': Input parameter 'shape' [4294967296, 4294967296, 4294967296] has too many elements" },
  { HEAD "{\"id\":\"in\",\"op\":\"Input\",\"params\":{\"shape\":[2,1048576,1048576]}}],\"edges\":[]}", NL_NETWORK_ERROR_PARAM,
    "node 'in': Input parameter 'shape' [2, 1048576, 1048576] has too many elements (at most 1099511627776)" },
  { HEAD IN ",{\"id\":\"r\",\"op\":\"Reshape\",\"params\":{\"shape\":[-1,4294967296,4294967296,4294967296]}}],\"edges\":[\"data -> r\"]}",
    NL_NETWORK_ERROR_PARAM, "node 'r': Reshape parameter 'shape' [-1, 4294967296, 4294967296, 4294967296] has too many elements" },
  /* wrong-typed members: one message naming the member, no json-glib critical */
  { "", NL_NETWORK_ERROR_PARSE, "not valid JSON: the document is empty" },
  { " \n ", NL_NETWORK_ERROR_PARSE, "not valid JSON: the document is empty" },
  { "[]", NL_NETWORK_ERROR_PARSE, "not a netloom network" },
  { "{\"format\":[\"netloom.network\"],\"nodes\":[]}", NL_NETWORK_ERROR_PARSE, "not a netloom network" },
  { "{\"format\":\"netloom.network\",\"version\":{},\"nodes\":[]}", NL_NETWORK_ERROR_PARSE, "not a netloom network" },
  { "{\"format\":\"netloom.network\",\"name\":[1],\"nodes\":[]}", NL_NETWORK_ERROR_PARSE, "\"name\" must be a string" },
  { "{\"format\":\"netloom.network\",\"nodes\":[],\"edges\":{}}", NL_NETWORK_ERROR_PARSE, "not a netloom network" },
  { HEAD "{\"id\":5,\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "node 0: \"id\" must be a string" },
  { HEAD IN ",{\"id\":\"f\",\"op\":[\"Flatten\"]}]}", NL_NETWORK_ERROR_PARSE, "node 1: \"op\" must be a string" },
  { HEAD IN ",{\"id\":\"f\",\"op\":{}}]}", NL_NETWORK_ERROR_PARSE, "node 1: \"op\" must be a string" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"pos\":\"here\"}]}", NL_NETWORK_ERROR_PARSE, "node 'data': \"pos\" must be [x, y]" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"pos\":[\"a\",{}]}]}", NL_NETWORK_ERROR_PARSE, "node 'data': \"pos\" must be [x, y]" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"pos\":[1]}]}", NL_NETWORK_ERROR_PARSE, "node 'data': \"pos\" must be [x, y]" },
  /* JSON cannot hold infinity: 1e999 would be saved as "inf"; the reader
   * refuses what a double or an int64 cannot hold, with the place */
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"pos\":[1e999,0]}]}", NL_NETWORK_ERROR_PARSE,
    "not valid JSON: line 1, column 83: a number past a double's range" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"pos\":[0,\n-1e999]}]}", NL_NETWORK_ERROR_PARSE,
    "not valid JSON: line 2, column 1: a number past a double's range" },
  { HEAD "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[99999999999999999999]}}]}", NL_NETWORK_ERROR_PARSE,
    "a whole number past 64 bits" },
  /* strict JSON: what json-glib refused (or let through) the reader refuses too */
  { HEAD IN ",]}", NL_NETWORK_ERROR_PARSE, "not valid JSON: line 1, column 77: expected a value" },
  { HEAD IN "]", NL_NETWORK_ERROR_PARSE, "expected ',' or '}'" },
  { HEAD IN "]} x", NL_NETWORK_ERROR_PARSE, "more after the end of the document" },
  { HEAD "{\"id\":\"da\tta\",\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "a control character in a string" },
  { HEAD "{\"id\":\"d\\u0000\",\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "a string holds \\u0000" },
  { HEAD "{\"id\":\"d\\ud800\",\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "half a surrogate pair" },
  { HEAD "{\"id\":\"d\xff\",\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "a string is not UTF-8" },
  { HEAD "{\"id\":\"d\\x\",\"op\":\"Input\"}]}", NL_NETWORK_ERROR_PARSE, "an unknown escape" },
  { HEAD "{\"id\":\"data", NL_NETWORK_ERROR_PARSE, "a string is not closed" },
  { HEAD "{\"id\":01}]}", NL_NETWORK_ERROR_PARSE, "expected ',' or '}'" },
  { HEAD "{\"id\":-}]}", NL_NETWORK_ERROR_PARSE, "a number needs a digit" },
  { HEAD "{\"id\":1.}]}", NL_NETWORK_ERROR_PARSE, "a number needs a digit after '.'" },
  { HEAD "{\"id\":1e+}]}", NL_NETWORK_ERROR_PARSE, "a number needs a digit in its exponent" },
  { HEAD "{\"id\" \"data\"}]}", NL_NETWORK_ERROR_PARSE, "expected ':' after a member name" },
  { HEAD "{id:\"data\"}]}", NL_NETWORK_ERROR_PARSE, "expected a member name in quotes" },
  { HEAD "{\"id\":nul}]}", NL_NETWORK_ERROR_PARSE, "expected a value" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[{\"from\":1,\"to\":\"f\"}]}", NL_NETWORK_ERROR_EDGE, "edge 0: \"from\" and \"to\" must be strings" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[{\"from\":\"data\",\"to\":[\"f\"]}]}", NL_NETWORK_ERROR_EDGE, "edge 0: \"from\" and \"to\" must be strings" },
  /* a port past int must not wrap around to port 0 */
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[\"data -> f:4294967296\"]}", NL_NETWORK_ERROR_EDGE, "f:4294967296' has a bad port" },
  { HEAD IN ",{\"id\":\"f\",\"op\":\"Flatten\"}],\"edges\":[\"data:99999999999999999999 -> f\"]}", NL_NETWORK_ERROR_EDGE, "has a bad port" },
};

static void
test_bad_networks (void)
{
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  for (gsize i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlNetwork) net = nl_network_load_data (bad_cases[i].json, -1, &error);
      g_autoptr (NlModel) model = NULL;
      if (net)
        {
          model = nl_model_new_full (net, &sample, NULL, &error);
          g_assert_null (model);
        }
      g_test_message ("case %zu: %s", i, error ? error->message : "(no error)");
      g_assert_error (error, NL_NETWORK_ERROR, bad_cases[i].code);
      if (!strstr (error->message, bad_cases[i].needle))
        g_error ("case %zu: message '%s' lacks '%s'", i, error->message, bad_cases[i].needle);
    }
}

static void
test_missing_file (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_file ("/nonexistent/net.json", &error);
  g_assert_null (net);
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "/nonexistent/net.json"));
}

static void
test_edit_api (void)
{
  g_autoptr (NlNetwork) net = nl_network_new ("edited");
  g_autoptr (GError) error = NULL;
  int in = nl_network_add_node (net, "data", "Input", &error);
  int fc = nl_network_add_node (net, "fc", "Dense", &error);
  g_assert_no_error (error);
  g_assert_true (nl_network_set_param (net, fc, "units", "7", &error));
  g_assert_true (nl_network_connect (net, in, 0, fc, 0, &error));
  g_assert_cmpint (nl_network_add_node (net, "fc", "Dense", &error), ==, -1);
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE);
  g_clear_error (&error);
  g_assert_false (nl_network_connect (net, in, 0, fc, 0, &error));
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE);
  g_clear_error (&error);
  g_assert_true (nl_network_validate (net, NULL, &error));
}

/* 80,000 '[' overflowed json-glib's recursive parser; the shared guard
 * refuses them with the depth before it parses. */
static void
test_deep_nesting (void)
{
  g_autoptr (GString) deep = g_string_new (NULL);
  g_autoptr (GString) edge = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autofree char *path = NULL;
  int fd;

  for (int i = 0; i < 80000; i++)
    g_string_append_c (deep, '[');
  net = nl_network_load_data (deep->str, deep->len, &error);
  g_assert_null (net);
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "the network: JSON nested more than 256 levels deep (at byte 256)"));
  g_clear_error (&error);

  /* from a file, the message names the file */
  fd = g_file_open_tmp ("netloom-deep-XXXXXX.json", &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, deep->str, deep->len, &error));
  net = nl_network_load_file (path, &error);
  g_assert_null (net);
  g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_assert_nonnull (strstr (error->message, "nested more than 256 levels"));
  g_clear_error (&error);
  g_unlink (path);

  /* the limit itself: 256 levels pass, 257 do not; brackets in strings,
   * escaped quotes included, are no nesting */
  g_string_truncate (deep, 0);
  for (int i = 0; i < NL_JSON_MAX_DEPTH; i++)
    g_string_append_c (deep, i % 2 ? '[' : '{');
  g_assert_cmpint (nl_json_find_too_deep (deep->str, -1, NL_JSON_MAX_DEPTH), ==, -1);
  g_assert_true (nl_json_check_depth (deep->str, deep->len, "x", &error));
  g_string_append_c (deep, '[');
  g_assert_cmpint (nl_json_find_too_deep (deep->str, -1, NL_JSON_MAX_DEPTH), ==, NL_JSON_MAX_DEPTH);
  g_assert_false (nl_json_check_depth (deep->str, deep->len, "the thing", &error));
  g_assert_error (error, NL_JSON_ERROR, NL_JSON_ERROR_TOO_DEEP);
  g_assert_cmpstr (error->message, ==, "the thing: JSON nested more than 256 levels deep (at byte 256)");
  g_clear_error (&error);
  /* closed levels do not add up; a length stops the scan */
  g_assert_cmpint (nl_json_find_too_deep ("[[]][[]]", -1, 2), ==, -1);
  g_assert_cmpint (nl_json_find_too_deep (NULL, -1, 2), ==, -1);
  g_assert_cmpint (nl_json_find_too_deep ("[[[", 2, 2), ==, -1);
  g_assert_cmpint (nl_json_find_too_deep ("[[[", 3, 2), ==, 2);
  g_string_assign (edge, "[\"");
  for (int i = 0; i < 1000; i++)
    g_string_append (edge, "[{\\\"");
  g_string_append (edge, "\"]");
  g_assert_cmpint (nl_json_find_too_deep (edge->str, -1, 1), ==, -1);
  g_assert_cmpint (nl_json_find_too_deep ("[\"\\\\\"[]", -1, 1), ==, 5);
}

/* json-glib wrote 1e17 as "1e+17.0" and 1e-8 as "1e-08.0" (not JSON) and a
 * non-finite position as "inf": every position and parameter saved must
 * open again, and read back the same. */
static void
test_positions_reopen (void)
{
  static const double values[] = { 1e17, -1e17, 1e-8, -3e-10, 2e19, 1e300, 5e-324, 12.5, -100, 0.1, 123456789.25 };
  g_autoptr (NlNetwork) net = nl_network_new ("positions");
  g_autoptr (NlNetwork) again = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *json = NULL;
  char id[16];

  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    {
      NlNode *n;
      g_snprintf (id, sizeof id, "n%zu", i);
      n = nl_network_node (net, nl_network_add_node (net, id, "Input", &error));
      g_assert_no_error (error);
      n->x = values[i];
      n->y = -values[i];
      n->has_position = TRUE;
    }
  nl_network_node (net, nl_network_add_node (net, "nowhere", "Input", &error))->has_position = TRUE;
  nl_network_node (net, nl_network_find (net, "nowhere"))->x = INFINITY;
  /* a parameter of 1e-8 (BatchNorm's epsilon) too */
  g_assert_cmpint (nl_network_add_node (net, "bn", "BatchNorm", &error), >=, 0);
  g_assert_true (nl_network_set_param (net, nl_network_find (net, "bn"), "epsilon", "1e-8", &error));
  g_assert_no_error (error);
  json = nl_network_to_json (net);
  g_assert_null (strstr (json, "inf"));
  g_assert_null (strstr (json, "e+17.0"));
  g_assert_null (strstr (json, "e-08.0"));
  again = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    {
      const NlNode *n = nl_network_node (again, (int) i);
      g_assert_true (n->has_position);
      g_assert_cmpfloat (n->x, ==, values[i]);
      g_assert_cmpfloat (n->y, ==, -values[i]);
    }
  g_assert_cmpfloat (nl_network_node (again, nl_network_find (again, "bn"))->params[BN_EPSILON].f, ==, 1e-8);
  /* a position that is no number is left out rather than written as "inf" */
  g_assert_false (nl_network_node (again, nl_network_find (again, "nowhere"))->has_position);
}

/* Opening was quadratic in the size at every stage; 32,000 nodes took
 * 26 s. The chain must load, validate and compile with the same order and
 * steps as a small network would get (bench-network-open has the times). */
static void
test_big_chain (void)
{
  const int n = 32000;
  g_autofree char *json = nl_test_chain_network_json (n);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  g_autofree int *order = g_new (int, n);
  NlShape sample = nl_shape_of (1, (int64_t) 16);
  NlCompileOptions opts = { .batch = 4, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  g_autoptr (NlGraph) g = NULL;
  int backward = 0;

  g_assert_no_error (error);
  g_assert_cmpint (nl_network_n_nodes (net), ==, n);
  g_assert_cmpint (net->edges->len, ==, n - 1);
  g_assert_cmpint (nl_network_find (net, "a31998"), ==, n - 2);
  g_assert_cmpfloat (nl_network_node (net, 31998)->y, ==, 31998 / 97 * 80);
  g_assert_true (nl_network_validate (net, order, &error));
  for (int i = 0; i < n; i++)
    g_assert_cmpint (order[i], ==, i);
  g = nl_graph_compile (net, &sample, &opts, &error);
  g_assert_no_error (error);
  /* every node and the loss forward; backward only the Dense (the ReLUs
   * before it reach no weight) and the loss */
  g_assert_cmpint (g->n_forward_steps, ==, n + 1);
  for (guint s = g->n_forward_steps; s < g->steps->len; s++)
    backward += g_array_index (g->steps, NlStep, s).kind == NL_STEP_BACKWARD;
  g_assert_cmpint (backward, ==, 2);
  g_assert_cmpint (nl_graph_node (g, n - 1)->in[0], ==, nl_graph_node (g, n - 2)->out);

  /* a duplicate id and a port connected twice are still found by the index */
  {
    g_autoptr (GString) dup = g_string_new (json);
    g_autoptr (NlNetwork) bad = NULL;
    g_string_replace (dup, "\"id\":\"a31998\"", "\"id\":\"a2\"", 1);
    bad = nl_network_load_data (dup->str, -1, &error);
    g_assert_null (bad);
    g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE);
    g_assert_cmpstr (error->message, ==, "two nodes are named 'a2'");
    g_clear_error (&error);
    g_string_assign (dup, json);
    g_string_replace (dup, "\"a31997 -> a31998\"", "\"a31997 -> a5\"", 1);
    bad = nl_network_load_data (dup->str, -1, &error);
    g_assert_null (bad);
    g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_EDGE);
    g_assert_cmpstr (error->message, ==, "input port 0 of node 'a5' is connected twice");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/network/templates", test_templates);
  g_test_add_func ("/network/round-trip", test_round_trip);
  g_test_add_func ("/network/bad", test_bad_networks);
  g_test_add_func ("/network/missing-file", test_missing_file);
  g_test_add_func ("/network/edit", test_edit_api);
  g_test_add_func ("/network/deep-nesting", test_deep_nesting);
  g_test_add_func ("/network/positions-reopen", test_positions_reopen);
  g_test_add_func ("/network/big-chain", test_big_chain);
  return g_test_run ();
}
