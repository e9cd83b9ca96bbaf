/* test-cuda.c — every op on every registered backend (core/nl-backend-reg.h)
 * against the CPU: today the CUDA GPUs.
 *
 * Each case of the one table (nl-op-cases.c) in compare mode runs forward and backward on the CPU (the
 * reference) and on the backend's first device from the same inputs; outputs, saved
 * tensors, aux states and input gradients must agree within |dev - cpu| <=
 * tol * (|cpu| + 0.1 * max (1, max |cpu| of the tensor)): the floor grows
 * with the magnitude, as long sums (weight gradients) are rounded in another
 * order. tol: 1e-4 in float32, the case's (1e-2) with bf16 / fp16 autocast; Dropout masks
 * are bit-identical. Device outputs and gradients start as NaN, so one left
 * unwritten or accumulated into shows. Without a device: the build's claim
 * about CUDA, the kernels' coverage, and the harness with the CPU standing in
 * for the device, where planted bugs must show. test-cuda-runtime covers the
 * context, the device math and the pool.
 *
 * `test-cuda --matrix` prints which ops each backend runs (the registry's
 * supports_op) and which devices it sees, and runs no test. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nl-op-cases.h"
#include "nl-test-util.h"
#include "core/cuda/nl-cuda.h"
#include "core/nl-backend-reg.h"
#include "ops/nl-op-registry.h"

#define F32_TOL 1e-4

/* A registered backend under test: its first device's backend, or why
 * there is none here. */
typedef struct {
  const NlBackendReg *reg;
  NlBackend *backend; /* NULL: no device here */
  char *reason;
} Target;

static Target *targets; /* one per registry row */

static Target *
target_named (const char *name)
{
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    if (!strcmp (targets[i].reg->name, name))
      return &targets[i];
  return NULL;
}

/* The host's row is the reference; every other row's first device. */
static void
targets_open (void)
{
  targets = g_new0 (Target, nl_backend_reg_count ());
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    {
      Target *t = &targets[i];
      g_autoptr (GError) error = NULL;
      t->reg = nl_backend_reg_get (i);
      if (t->reg->host || t->reg->device_count (&t->reason) <= 0)
        continue;
      t->backend = t->reg->get (0, &error);
      if (!t->backend)
        t->reason = g_strdup_printf ("%s:0 is there, but its backend failed: %s", t->reg->name, error->message);
    }
}

static gboolean
need_device (const Target *t)
{
  if (t->backend)
    return TRUE;
  g_test_skip_printf ("no %s device: %s", t->reg->label, t->reason ? t->reason : "none listed");
  return FALSE;
}

/* ---- the device side of a case ---- */

typedef struct {
  NlBackend *backend;          /* NULL: the CPU stands in for the device (self-tests) */
  const NlOpKernels *kernels;  /* NULL: nl_op_kernels (def, the device) */
  const NlOpKernels *host;     /* NULL: nl_op_kernels (def, the CPU) */
} Dev;

typedef struct {
  NlTensor **in, **out, **aux, **saved, **out_grad, **in_grad;
  void *state;
  NlTensor *lengths; /* uses_lengths ops: the case's lengths on this side's device, or NULL */
} Side;

/* The backend the device side runs on, or the CPU's standing in. */
static NlBackend *
device_backend (const Dev *d)
{
  return d->backend ? d->backend : nl_backend_cpu ();
}

/* Sets the device tensor t to h's values, or to NaN. */
static void
dev_write (Dev *d, NlTensor *t, const NlTensor *h, gboolean nan)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTensor) src = nl_tensor_copy (h);
  size_t nb = (size_t) nl_tensor_numel (h) * sizeof (float);

  if (nan)
    nl_tensor_fill (src, NAN);
  if (!d->backend)
    {
      memcpy (nl_tensor_f32 (t), nl_tensor_f32 (src), nb);
      return;
    }
  nl_test_ok_or_die (nl_backend_copy (d->backend, nl_tensor_f32 (t), nl_tensor_f32 (src), nb, NL_COPY_HOST_TO_DEVICE,
                                      &error),
                     error, "upload");
  /* src is pageable and freed on return */
  nl_test_ok_or_die (nl_backend_synchronize (d->backend, &error), error, "sync after upload");
}

/* A copy of h on the device (NaN-filled when nan), from the pool. */
static NlTensor *
dev_upload (Dev *d, const NlTensor *h, gboolean nan)
{
  g_autoptr (GError) error = NULL;
  NlShape s;
  NlStorage *st;
  NlTensor *t;

  if (!h)
    return NULL;
  s = nl_tensor_get_shape (h);
  if (!d->backend)
    t = nl_tensor_new_shape (NL_DTYPE_F32, &s);
  else
    {
      st = nl_storage_new_device ((size_t) nl_tensor_numel (h) * sizeof (float), d->backend->device,
                                  "test-cuda tensor", &error);
      nl_test_ok_or_die (st != NULL, error, "nl_storage_new_device");
      t = nl_tensor_new_on (st, 0, NL_DTYPE_F32, &s);
      nl_storage_unref (st); /* the tensor holds it */
    }
  dev_write (d, t, h, nan);
  return t;
}

static void
dev_write_all (Dev *d, NlTensor **t, NlTensor **h, int n, gboolean nan)
{
  for (int i = 0; i < n; i++)
    if (t[i])
      dev_write (d, t[i], h[i], nan);
}

static NlTensor **
dev_upload_all (Dev *d, NlTensor **h, int n, gboolean nan)
{
  NlTensor **t = g_new0 (NlTensor *, MAX (n, 1));
  for (int i = 0; i < n; i++)
    t[i] = dev_upload (d, h[i], nan);
  return t;
}

static void
unref_all (NlTensor **a, int n)
{
  for (int i = 0; i < n; i++)
    if (a[i])
      nl_tensor_unref (a[i]);
  g_free (a);
}

static void
side_free (Side *s, const NlOpInstance *inst, const NlOpKernels *k)
{
  unref_all (s->in, inst->n_in);
  unref_all (s->in_grad, inst->n_in);
  unref_all (s->out, inst->def->n_outputs);
  unref_all (s->out_grad, inst->def->n_outputs);
  unref_all (s->aux, inst->def->n_aux);
  unref_all (s->saved, inst->def->n_saved);
  if (s->lengths)
    nl_tensor_unref (s->lengths);
  if (s->state && k->free_state)
    k->free_state (s->state);
}

static NlOpCtx
make_ctx (const NlOpInstance *inst, Side *s, const NlOpCase *c, NlBackend *backend)
{
  return (NlOpCtx) { .def = inst->def, .p = inst->p, .args = inst->args, .n_data = inst->n_data, .in = s->in,
                     .out = s->out, .aux = s->aux, .saved = s->saved, .out_grad = s->out_grad, .in_grad = s->in_grad,
                     .training = inst->training, .seed = inst->seed, .step = inst->step, .state = &s->state,
                     .backend = backend, .precision = c->precision,
                     /* the lengths on the side's device; their numbers on the CPU */
                     .lengths = inst->def->uses_lengths ? s->lengths : NULL,
                     .host_lengths = inst->def->uses_lengths && inst->lengths ? nl_tensor_f32 (inst->lengths) : NULL };
}

/* ---- comparing ---- */

typedef struct {
  const char *on;   /* the device side's backend: "cuda" */
  int64_t compared;
  int mismatches;
  double worst;     /* largest |cuda - cpu| / allowed */
  char worst_at[200];
} Report;

/* one mismatch or failure of a case, printed */
#define FAIL_CASE(rep, c, fmt, ...) \
  (g_printerr ("%s %s / %s: " fmt "\n", (rep)->on, (c)->op, (c)->what, __VA_ARGS__), (rep)->mismatches++)

/* exact: bit-identical values (Dropout's mask). A NaN or Inf matches only
 * the same value on the CPU. */
static void
compare (Report *rep, const NlOpCase *c, const char *name, const NlTensor *dev, const NlTensor *cpu, double tol,
         gboolean exact)
{
  const float *a = nl_tensor_f32 (dev), *b = nl_tensor_f32 (cpu);
  int64_t n = nl_tensor_numel (cpu);
  double scale = 1;
  int bad = 0;

  for (int64_t i = 0; i < n; i++)
    if (isfinite (b[i]))
      scale = MAX (scale, fabs (b[i]));
  for (int64_t i = 0; i < n; i++)
    {
      double allowed = exact ? 0 : tol * (fabs (b[i]) + 0.1 * scale);
      double diff = fabs ((double) a[i] - (double) b[i]), ratio;

      if (a[i] == b[i] || (isnan (a[i]) && isnan (b[i])))
        ratio = 0;
      else
        ratio = isnan (diff) || allowed == 0 ? INFINITY : diff / allowed;
      rep->compared++;
      if (ratio > rep->worst)
        {
          rep->worst = ratio;
          g_snprintf (rep->worst_at, sizeof rep->worst_at, "%s / %s %s[%" G_GINT64_FORMAT "]: %s %.9g cpu %.9g",
                      c->op, c->what, name, i, rep->on, a[i], b[i]);
        }
      if (ratio > 1 && bad++ < 3)
        FAIL_CASE (rep, c, "%s[%" G_GINT64_FORMAT "] is %.9g on the device, %.9g on the CPU", name, i, a[i], b[i]);
      else if (ratio > 1)
        rep->mismatches++;
    }
}

static void
compare_dev (Report *rep, const NlOpCase *c, Dev *d, const char *name, NlTensor *dev, NlTensor *cpu, double tol,
             gboolean exact)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTensor) h = NULL;
  NlShape s;

  if (!cpu || !dev)
    {
      if (cpu || dev)
        FAIL_CASE (rep, c, "%s exists on one side only", name);
      return;
    }
  s = nl_tensor_get_shape (dev);
  h = d->backend ? nl_tensor_new_shape (NL_DTYPE_F32, &s) : nl_tensor_ref (dev);
  if (d->backend)
    nl_test_ok_or_die (nl_backend_copy (d->backend, nl_tensor_f32 (h), nl_tensor_f32 (dev),
                                        (size_t) nl_tensor_numel (dev) * sizeof (float), NL_COPY_DEVICE_TO_HOST,
                                        &error),
                       error, "download");
  compare (rep, c, name, h, cpu, tol, exact);
}

/* One case: forward (and backward where the op has one) on the CPU and on
 * the device, everything compared. */
static Report
run_case (const NlOpDef *def, const NlOpCase *c, Dev *d)
{
  g_autoptr (GError) error = NULL;
  int n_data;
  NlOpInstance *inst;
  Side hs = { 0 }, ds = { 0 };
  NlOpKernels hk = d->host ? *d->host : nl_op_kernels (def, nl_backend_cpu ());
  NlOpKernels dk = d->kernels ? *d->kernels : nl_op_kernels (def, device_backend (d));
  GRand *r = nl_op_case_rand (c);
  double tol = c->tol > 0 ? c->tol : F32_TOL;
  Report rep = { .on = device_backend (d)->iface->name };
  Dev host = { 0 };
  NlTensor **aux0; /* the aux states before forward */
  gboolean ran = TRUE;
  NlOpCtx hc, dc;

  inst = nl_op_case_instance (def, c, &error);
  g_assert_no_error (error);
  n_data = inst->n_data;
  inst->step = 3;
  /* running stats: used in predict mode, variances positive */
  nl_op_case_fill (c, inst, r);
  for (int i = 0; i < def->n_outputs; i++)
    nl_op_case_uniform (inst->out_grad[i], r, -1, 1);

  /* the CPU's tensors are the instance's; the device's are copies, its
   * outputs and gradients NaN; saved start as zeros on both sides, so a
   * mode that leaves them alone agrees */
  hs = (Side) { inst->in, inst->out, inst->aux, inst->saved, inst->out_grad, inst->in_grad, NULL, inst->lengths };
  ds = (Side) { dev_upload_all (d, inst->in, inst->n_in, FALSE), dev_upload_all (d, inst->out, def->n_outputs, TRUE),
                dev_upload_all (d, inst->aux, def->n_aux, FALSE), dev_upload_all (d, inst->saved, def->n_saved, FALSE),
                dev_upload_all (d, inst->out_grad, def->n_outputs, FALSE),
                dev_upload_all (d, inst->in_grad, inst->n_in, TRUE), NULL, dev_upload (d, inst->lengths, FALSE) };

  aux0 = dev_upload_all (&host, inst->aux, def->n_aux, FALSE);
  hc = make_ctx (inst, &hs, c, nl_backend_cpu ());
  dc = make_ctx (inst, &ds, c, device_backend (d));
  nl_test_ok_or_die (hk.forward (&hc, &error), error, "CPU forward");
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      nl_tensor_fill (inst->in_grad[i], NAN);
  if (hk.backward)
    nl_test_ok_or_die (hk.backward (&hc, &error), error, "CPU backward");

  /* Twice: the second pass runs on what the kernels cached in *state in
   * the first (descriptors, algorithms), from the same aux and NaN. */
  for (int pass = 0; pass < 2 && ran; pass++)
    {
      if (pass)
        {
          dev_write_all (d, ds.aux, aux0, def->n_aux, FALSE);
          dev_write_all (d, ds.out, inst->out, def->n_outputs, TRUE);
          dev_write_all (d, ds.in_grad, inst->in_grad, inst->n_in, TRUE);
        }
      if (!dk.forward || (hk.backward && !dk.backward))
        FAIL_CASE (&rep, c, "no %s kernel on the device", dk.forward ? "backward" : "forward");
      else if (!dk.forward (&dc, &error) || (d->backend && !nl_backend_synchronize (d->backend, &error)))
        FAIL_CASE (&rep, c, "forward failed: %s", error ? error->message : "(no error set)");
      else if (hk.backward
               && (!dk.backward (&dc, &error) || (d->backend && !nl_backend_synchronize (d->backend, &error))))
        FAIL_CASE (&rep, c, "backward failed: %s", error ? error->message : "(no error set)");
      else
        continue;
      ran = FALSE;
    }
  if (ran)
    {
      char name[96];
      for (int i = 0; i < def->n_outputs; i++)
        compare_dev (&rep, c, d, "out", ds.out[i], inst->out[i], tol, FALSE);
      for (int i = 0; i < def->n_saved; i++)
        {
          g_snprintf (name, sizeof name, "saved%d", i);
          compare_dev (&rep, c, d, name, ds.saved[i], inst->saved[i], tol, strcmp (def->name, "Dropout") == 0);
        }
      for (int i = 0; i < def->n_aux; i++)
        compare_dev (&rep, c, d, def->aux[i], ds.aux[i], inst->aux[i], tol, FALSE);
      for (int i = 0; hk.backward && i < inst->n_in; i++)
        {
          g_snprintf (name, sizeof name, "d%s%d",
                      i >= n_data ? def->weights[i - n_data] : def->inputs[def->variadic ? 0 : MIN (i, def->n_inputs - 1)],
                      i);
          compare_dev (&rep, c, d, name, ds.in_grad[i], inst->in_grad[i], tol, FALSE);
        }
    }
  side_free (&ds, inst, &dk);
  unref_all (aux0, def->n_aux);
  if (hs.state && hk.free_state)
    hk.free_state (hs.state);
  nl_op_instance_free (inst);
  g_rand_free (r);
  return rep;
}

/* ---- the harness on the CPU: the case table runs, and planted bugs show ---- */

/* The CPU against itself through the whole harness: every case runs, and
 * the harness finds no difference where there is none. */
static void
test_mirror (void)
{
  Dev d = { 0 };

  for (guint i = 0; i < nl_op_n_cases; i++)
    if (nl_op_case_runs_in (&nl_op_cases[i], NL_OP_CASE_COMPARE)
        && nl_op_lookup (nl_op_cases[i].op)) /* else test-op-cases fails */
      {
        Report rep = run_case (nl_op_lookup (nl_op_cases[i].op), &nl_op_cases[i], &d);
        g_assert_cmpint (rep.mismatches, ==, 0);
        g_assert_cmpint (rep.compared, >, 0);
      }
}

typedef enum { PL_RIGHT, PL_OFF, PL_SKIP_OUT, PL_SAVED, PL_AUX, PL_ACCUM, PL_SKIP_GRAD, PL_FAIL, PL_COUNT } Plant;
static Plant plant;

/* y = 2x, saved = x, aux[0] counts training steps; the device's version
 * carries the planted bug */
static gboolean
twice_fwd_as (NlOpCtx *c, Plant m, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]), *s = nl_tensor_f32 (c->saved[0]);
  int64_t n = nl_tensor_numel (c->in[0]);

  if (m == PL_FAIL)
    {
      g_set_error_literal (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "planted failure");
      return FALSE;
    }
  for (int64_t i = 0; i < n; i++)
    {
      if (!(m == PL_SKIP_OUT && i == n - 1))
        y[i] = 2 * x[i] * (m == PL_OFF && i == 7 ? 1.001f : 1.0f);
      s[i] = m == PL_SAVED && i == 0 ? x[i] + 0.01f : x[i];
    }
  if (c->training && m != PL_AUX)
    nl_tensor_f32 (c->aux[0])[0] += 1;
  return TRUE;
}

static gboolean
twice_bwd_as (NlOpCtx *c, Plant m, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);

  for (int64_t i = 0; i < nl_tensor_numel (c->out_grad[0]); i++)
    if (m == PL_ACCUM)
      dx[i] += 2 * dy[i];
    else if (!(m == PL_SKIP_GRAD && i == 5))
      dx[i] = 2 * dy[i];
  return TRUE;
}

static gboolean twice_fwd (NlOpCtx *c, GError **e) { return twice_fwd_as (c, PL_RIGHT, e); }
static gboolean twice_bwd (NlOpCtx *c, GError **e) { return twice_bwd_as (c, PL_RIGHT, e); }
static gboolean planted_fwd (NlOpCtx *c, GError **e) { return twice_fwd_as (c, plant, e); }
static gboolean planted_bwd (NlOpCtx *c, GError **e) { return twice_bwd_as (c, plant, e); }

static gboolean
twice_infer (NlInferCtx *c, GError **error)
{
  c->out[0] = c->saved[0] = c->in[0];
  c->aux[0] = (NlShape) { .ndim = 1, .d = { 1 } };
  return TRUE;
}

static void
test_planted (void)
{
  static const char *const inputs[] = { "data" }, *const aux[] = { "steps" };
  static const NlOpDef def = { .name = "Twice", .inputs = inputs, .n_inputs = 1, .aux = aux, .n_aux = 1,
                               .n_saved = 1, .n_outputs = 1, .infer_shape = twice_infer };
  static const NlOpKernels twice = { twice_fwd, twice_bwd, NULL }, planted = { planted_fwd, planted_bwd, NULL };
  const NlOpCase c = { "Twice", "planted", .in = { "3x50" } };
  Dev d = { .kernels = &planted, .host = &twice };

  for (plant = PL_RIGHT; plant < PL_COUNT; plant++)
    {
      Report rep;
      if (plant == PL_OFF)
        g_printerr ("(the mismatches printed next are planted)\n");
      rep = run_case (&def, &c, &d);
      if (plant == PL_RIGHT)
        {
          g_assert_cmpint (rep.mismatches, ==, 0);
          g_assert_cmpint (rep.compared, ==, 150 + 150 + 1 + 150); /* out, saved, aux, ddata */
          g_assert_cmpfloat (rep.worst, ==, 0);
        }
      else
        g_assert_cmpint (rep.mismatches, >, 0);
    }
}

/* The build says whether it has CUDA (the cuda dependency of ops/meson.build
 * defines NL_HAVE_CUDA) and a CUDA build has kernels for every op; that the
 * table has a case in compare mode for every op and every choice of an enum
 * parameter, test-op-cases checks. */
static void
test_coverage (void)
{
  g_autoptr (GString) missing = g_string_new (NULL);
  const Target *cuda = target_named ("cuda");

  g_assert_nonnull (cuda);
  g_test_message ("CUDA: %s", cuda->backend ? "cuda:0" : cuda->reason);
#ifdef NL_HAVE_CUDA
  g_assert_true (nl_cuda_compiled ());
#else
  g_assert_false (nl_cuda_compiled ());
#endif
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);
      const NlOpKernels *kp = nl_cuda_op_kernels (id, nl_op_list_name ((NlOpId) id));
      NlOpKernels k = kp ? *kp : (NlOpKernels) { NULL, NULL, NULL };

      if (nl_cuda_compiled () && (!k.forward || (!def->no_backward && !k.backward)))
        g_string_append_printf (missing, " %s%s%s", def->name, k.forward ? "" : " (no forward)",
                                !def->no_backward && !k.backward ? " (no backward)" : "");
      /* the module's op of this id under another name (a module built with
       * another op list) has no kernels to give */
      g_assert_null (nl_cuda_op_kernels (id, id + 1 < NL_OP_COUNT ? nl_op_list_name ((NlOpId) (id + 1)) : "input"));
    }
  if (missing->len)
    g_test_fail_printf ("ops without CUDA kernels:%s", missing->str);
  g_assert_cmpint (nl_op_count_on (nl_backend_cpu ()), ==, NL_OP_COUNT);
  if (!missing->len && cuda->backend)
    g_assert_cmpint (nl_op_count_on (cuda->backend), ==, NL_OP_COUNT);
}

/* ---- with a device: one test per op ---- */

/* One op of the case table on one backend. */
typedef struct {
  const Target *target;
  const char *op;
} TestOp;

static void
test_op (gconstpointer data)
{
  const TestOp *to = data;
  const char *op = to->op;
  const NlOpDef *def = nl_op_lookup (op);
  Dev d = { .backend = to->target->backend };
  Report all = { .on = to->target->reg->name };
  int n_cases = 0;

  if (!need_device (to->target))
    return;
  g_assert_nonnull (def);
  for (guint c = 0; c < nl_op_n_cases; c++)
    {
      const NlOpCase *oc = &nl_op_cases[c];
      Report rep;
      if (strcmp (oc->op, op) != 0 || !nl_op_case_runs_in (oc, NL_OP_CASE_COMPARE))
        continue;
      rep = run_case (def, oc, &d);
      g_test_message ("  %s / %s: %" G_GINT64_FORMAT " values, worst %.3g of allowed%s%s", op, oc->what,
                      rep.compared, rep.worst, rep.worst > 0 ? " at " : "", rep.worst_at);
      n_cases++;
      all.compared += rep.compared;
      all.mismatches += rep.mismatches;
      if (rep.worst > all.worst)
        {
          all.worst = rep.worst;
          g_strlcpy (all.worst_at, rep.worst_at, sizeof all.worst_at);
        }
    }
  g_test_message ("%s: %d cases, %" G_GINT64_FORMAT " values, worst %.3g of allowed (%s)", op, n_cases, all.compared,
                  all.worst, all.worst_at);
  if (all.mismatches)
    g_test_fail_printf ("%s on %s: %d values differ from the CPU beyond tolerance (worst %.3g: %s)", op, all.on,
                        all.mismatches, all.worst, all.worst_at);
}

/* ---- the registry: what each backend says it runs ---- */

/* "op  cpu  cuda" and a row per op of the op list: yes or no from each
 * row's supports_op; then each backend's devices, or why it has none. */
static void
matrix_write (GString *out)
{
  guint n = nl_backend_reg_count ();
  int width = 2;

  for (int id = 0; id < NL_OP_COUNT; id++)
    width = MAX (width, (int) strlen (nl_op_get ((NlOpId) id)->name));
  g_string_append_printf (out, "%-*s", width, "op");
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, " %-6s", nl_backend_reg_get (i)->name);
  g_string_append_c (out, '\n');
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const char *name = nl_op_list_name ((NlOpId) id);
      g_string_append_printf (out, "%-*s", width, nl_op_get ((NlOpId) id)->name);
      for (guint i = 0; i < n; i++)
        g_string_append_printf (out, " %-6s", nl_backend_reg_get (i)->supports_op (id, name) ? "yes" : "no");
      g_string_append_c (out, '\n');
    }
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *reason = NULL;
      const NlBackendReg *reg = nl_backend_reg_get (i);
      int count = reg->device_count (&reason);
      if (count > 0)
        g_string_append_printf (out, "%s: %d device%s\n", reg->name, count, count == 1 ? "" : "s");
      else
        g_string_append_printf (out, "%s: no device: %s\n", reg->name, reason ? reason : "none listed");
    }
}

/* The table has a row per op and a column per backend; the CPU runs
 * every op; a backend with a device runs what it says it supports. */
static void
test_matrix (void)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_auto (GStrv) lines = NULL;

  matrix_write (out);
  g_test_message ("%s", out->str);
  lines = g_strsplit (out->str, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + NL_OP_COUNT + nl_backend_reg_count () + 1);
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    g_assert_nonnull (strstr (lines[0], nl_backend_reg_get (i)->name));
  g_assert_true (targets[0].reg->host); /* the CPU's column is the first */
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      g_auto (GStrv) cells = g_strsplit_set (lines[1 + id], " ", 2);
      const char *first = cells[1] ? cells[1] : "";
      g_assert_cmpstr (cells[0], ==, nl_op_get ((NlOpId) id)->name);
      while (*first == ' ')
        first++;
      g_assert_true (g_str_has_prefix (first, "yes"));
    }
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    if (targets[i].backend)
      for (int id = 0; id < NL_OP_COUNT; id++)
        {
          gboolean says = targets[i].reg->supports_op (id, nl_op_list_name ((NlOpId) id));
          gboolean has = nl_op_kernels (nl_op_get ((NlOpId) id), targets[i].backend).forward != NULL;
          g_assert_cmpint (says, ==, has);
        }
}

/* The CPU is the reference: against itself the comparison proves nothing
 * (the harness's mirror test runs that path). */
static void
test_host (void)
{
  g_test_skip ("the CPU is the reference: comparing it with itself proves nothing (see /cuda/harness/mirror)");
}

int
main (int argc, char **argv)
{
  gboolean matrix = argc > 1 && !strcmp (argv[argc - 1], "--matrix");

  targets_open ();
  if (matrix)
    {
      g_autoptr (GString) out = g_string_new (NULL);
      matrix_write (out);
      fputs (out->str, stdout);
      return 0;
    }
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cuda/coverage", test_coverage);
  g_test_add_func ("/cuda/harness/mirror", test_mirror);
  g_test_add_func ("/cuda/harness/planted", test_planted);
  g_test_add_func ("/backends/matrix", test_matrix);
  for (guint t = 0; t < nl_backend_reg_count (); t++)
    {
      if (targets[t].reg->host)
        {
          g_autofree char *path = g_strdup_printf ("/backends/%s/against-cpu", targets[t].reg->name);
          g_test_add_func (path, test_host);
          continue;
        }
      for (guint c = 0; c < nl_op_n_cases; c++)
        if (c == 0 || strcmp (nl_op_cases[c].op, nl_op_cases[c - 1].op) != 0) /* the table is grouped by op */
          {
            g_autofree char *path = g_strdup_printf ("/%s/op/%s", targets[t].reg->name, nl_op_cases[c].op);
            TestOp *to = g_new (TestOp, 1); /* kept for the process */
            *to = (TestOp) { &targets[t], nl_op_cases[c].op };
            g_test_add_data_func (path, to, test_op);
          }
    }
  return g_test_run ();
}
