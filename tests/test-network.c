/* test-network.c — network documents: templates, JSON round trip, and every
 * kind of broken network gets a message naming the node. */
#include <string.h>

#include "engine/nl-program.h"
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
      g_autoptr (NlModel) model = nl_model_new (net, &sample, 1, &error);
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
          model = nl_model_new (net, &sample, 0, &error);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/network/templates", test_templates);
  g_test_add_func ("/network/round-trip", test_round_trip);
  g_test_add_func ("/network/bad", test_bad_networks);
  g_test_add_func ("/network/missing-file", test_missing_file);
  g_test_add_func ("/network/edit", test_edit_api);
  return g_test_run ();
}
