/* nl-infer-prims.c — the inference executor's oneDNN steps: fused
 * convolution and inner product (folded BatchNorm, residual sum, ReLU; fp32
 * or INT8), pooling, eltwise, and an op's own CPU kernel for the rest.
 *
 * Weights are folded, quantized and reordered into the layout each
 * primitive chose once, here; a run only executes. */
#include "engine/infer/nl-infer-priv.h"
#include "engine/infer/nl-quant-table.h"
#include "ops/nl-activation.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-conv2d.h"
#include "ops/nl-dense.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-pool2d.h"

#include <math.h>
#include <string.h>

gboolean
nl_infer_prim_new (dnnl_primitive_t *prim, const_dnnl_primitive_desc_t pd, const char *what, GError **error)
{
  return nl_dnnl_check (dnnl_primitive_create (prim, pd), what, error);
}

gboolean
nl_infer_add_prim_step (NlInferNet *n, dnnl_primitive_desc_t pd, char *desc, int arg_in, int in, int arg_out, int out,
                        const char *what, GError **error)
{
  IStep *s = nl_infer_add_step (n, STEP_PRIM, desc);
  nl_infer_step_read (n, s, arg_in, in);
  nl_infer_step_write (n, s, arg_out, out);
  gboolean ok = nl_infer_prim_new (&s->prim, pd, what, error);
  dnnl_primitive_desc_destroy (pd);
  return ok;
}

/* An owned memory holding data (in md_user), reordered into md. */
static dnnl_memory_t
owned_memory (const dnnl_memory_desc_t *md_user, void *data, const dnnl_memory_desc_t *md, GError **error)
{
  dnnl_engine_t eng = nl_dnnl_engine ();
  dnnl_memory_t user = NULL, mem = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t r = NULL;
  gboolean ok = nl_dnnl_check (dnnl_memory_create (&user, md_user, eng, data), "weights", error)
                && nl_dnnl_check (dnnl_memory_create (&mem, md, eng, DNNL_MEMORY_ALLOCATE), "weights", error)
                && nl_dnnl_check (dnnl_reorder_primitive_desc_create (&pd, md_user, eng, md, eng, NULL),
                                  "weights reorder", error)
                && nl_dnnl_check (dnnl_primitive_create (&r, pd), "weights reorder", error);
  if (ok)
    {
      /* padded blocks (50 channels in blocks of 16) must read as zeros */
      void *h = NULL;
      dnnl_memory_get_data_handle (mem, &h);
      memset (h, 0, dnnl_memory_desc_get_size (md));
      dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, user }, { DNNL_ARG_TO, mem } };
      ok = nl_dnnl_check (dnnl_primitive_execute (r, nl_dnnl_stream (), 2, args), "weights reorder", error)
           && nl_dnnl_check (dnnl_stream_wait (nl_dnnl_stream ()), "weights reorder", error);
    }
  if (r)
    dnnl_primitive_destroy (r);
  if (pd)
    dnnl_primitive_desc_destroy (pd);
  if (user)
    dnnl_memory_destroy (user);
  if (!ok && mem)
    dnnl_memory_destroy (mem), mem = NULL;
  return mem;
}

/* The head's weights (O rows of `per`) and bias, with the BatchNorm after
 * it folded in as the running statistics give it: what the program's
 * inference forward computes, up to rounding. */
static void
fold_weights (NlInferNet *n, const FusedSpec *f, int64_t o, int64_t per, float *w, float *b)
{
  NlModel *m = n->model;
  int hs = NL_MODEL_SLOT (f->head->net_index, 0);
  const float *w0 = nl_tensor_f32 (m->weights[hs]);
  NlTensor *bias = m->weights[hs + 1];
  memcpy (w, w0, (size_t) (o * per) * sizeof (float));
  for (int64_t c = 0; c < o; c++)
    b[c] = bias ? nl_tensor_f32 (bias)[c] : 0.0f;
  if (!f->bn)
    return;
  int bs = NL_MODEL_SLOT (f->bn->net_index, 0);
  NlTensor *gamma = m->weights[bs + BN_GAMMA], *beta = m->weights[bs + BN_BETA];
  const float *mean = nl_tensor_f32 (m->aux[bs + BN_RUNNING_MEAN]), *var = nl_tensor_f32 (m->aux[bs + BN_RUNNING_VAR]);
  float eps = NL_P_FLOAT (f->bn->params, BN_EPSILON);
  for (int64_t c = 0; c < o; c++)
    {
      /* as the BatchNorm kernel: y = x * a + (beta - mean * a) */
      float a = (gamma ? nl_tensor_f32 (gamma)[c] : 1.0f) * (1.0f / sqrtf (var[c] + eps));
      for (int64_t i = 0; i < per; i++)
        w[c * per + i] *= a;
      b[c] = b[c] * a + (beta ? nl_tensor_f32 (beta)[c] : 0.0f) - mean[c] * a;
    }
}

typedef struct {
  gboolean conv;
  int64_t o, per;
  dnnl_memory_desc_t src, wei, bias, dst, wei_user;
  NlConv2dGeom g;
  int in;              /* the input value, as it comes */
  float in_scale;      /* INT8: real -> int of the input */
  dnnl_data_type_t in_dt, out_dt, other_dt;
  float other_scale;
  int other;           /* the residual branch's value, -1 none */
} FusedGeom;

static dnnl_data_type_t
dt_of_range (gboolean is_unsigned)
{
  return is_unsigned ? dnnl_u8 : dnnl_s8;
}

/* Data types, scales and memory descriptors of a fused step. */
static void
fused_geom (NlInferNet *n, const FusedSpec *f, FusedGeom *fg)
{
  const NlGraphNode *h = f->head;
  const NlShape *is = &nl_graph_value (n->graph, h->in[0])->shape, *os = &nl_graph_value (n->graph, h->out)->shape;
  IVal *in = ival (n, n->gv[h->in[0]]);
  dnnl_data_type_t wdt = f->int8 ? dnnl_s8 : dnnl_f32;
  memset (fg, 0, sizeof *fg);
  fg->conv = strcmp (h->def->name, "Conv2D") == 0;
  fg->in = n->gv[h->in[0]];
  fg->in_scale = f->int8 ? in->qscale : 1.0f;
  fg->in_dt = f->int8 ? dt_of_range (in->qunsigned) : dnnl_f32;
  fg->out_dt = f->out_int8 ? dt_of_range (f->out_unsigned) : dnnl_f32;
  fg->other = f->other >= 0 ? n->gv[f->other] : -1;
  if (fg->other >= 0)
    {
      IVal *o = ival (n, fg->other);
      gboolean stored8 = o->md.data_type == dnnl_u8 || o->md.data_type == dnnl_s8;
      fg->other_dt = !f->out_int8 ? dnnl_f32 : stored8 ? o->md.data_type : dt_of_range (o->qunsigned);
      fg->other_scale = !f->out_int8 ? 1.0f : stored8 ? o->scale : o->qscale > 0 ? o->qscale : f->out_scale;
    }
  int64_t o = h->weights[0].d[0];
  fg->o = o;
  fg->per = nl_shape_numel (&h->weights[0]) / o;
  dnnl_dims_t bd = { o };
  dnnl_memory_desc_init_by_tag (&fg->bias, 1, bd, dnnl_f32, dnnl_a);
  if (fg->conv)
    {
      NlConv2dArgs a;
      void *args = nl_op_args_new (h->def, h->params);
      a = *(NlConv2dArgs *) args;
      g_free (args);
      nl_conv2d_geom_init (&fg->g, &a, is->d[0], is->d[1], is->d[2], is->d[3]);
      dnnl_dims_t sd = { is->d[0], is->d[1], is->d[2], is->d[3] }, dd = { os->d[0], os->d[1], os->d[2], os->d[3] };
      dnnl_dims_t wg = { fg->g.groups, fg->g.og, fg->g.cg, fg->g.kh, fg->g.kw }, w1 = { o, fg->g.cg, fg->g.kh, fg->g.kw };
      gboolean grouped = fg->g.groups > 1;
      dnnl_memory_desc_init_by_tag (&fg->src, 4, sd, fg->in_dt, dnnl_format_tag_any);
      dnnl_memory_desc_init_by_tag (&fg->dst, 4, dd, fg->out_dt, dnnl_format_tag_any);
      dnnl_memory_desc_init_by_tag (&fg->wei, grouped ? 5 : 4, grouped ? wg : w1, wdt, dnnl_format_tag_any);
      dnnl_memory_desc_init_by_tag (&fg->wei_user, grouped ? 5 : 4, grouped ? wg : w1, wdt,
                                    grouped ? dnnl_goihw : dnnl_oihw);
      return;
    }
  /* Dense: a blocked 4D input is read as it is (the weights are OIHW);
   * anything else as the (rows, k) matrix */
  int64_t rows, k;
  nl_dense_as_matrix (is, NL_P_BOOL (h->params, DENSE_FLATTEN), &rows, &k);
  dnnl_dims_t dd = { rows, o };
  dnnl_memory_desc_init_by_tag (&fg->dst, 2, dd, fg->out_dt, dnnl_ab);
  if (!nl_infer_is_plain (&in->md) && in->md.ndims == 4 && NL_P_BOOL (h->params, DENSE_FLATTEN))
    {
      dnnl_dims_t wd = { o, in->md.dims[1], in->md.dims[2], in->md.dims[3] };
      fg->src = in->md;
      fg->src.data_type = fg->in_dt;
      dnnl_memory_desc_init_by_tag (&fg->wei, 4, wd, wdt, dnnl_format_tag_any);
      dnnl_memory_desc_init_by_tag (&fg->wei_user, 4, wd, wdt, dnnl_oihw);
      return;
    }
  dnnl_dims_t sd = { rows, k }, wd = { o, k };
  dnnl_memory_desc_init_by_tag (&fg->src, 2, sd, fg->in_dt, dnnl_ab);
  dnnl_memory_desc_init_by_tag (&fg->wei, 2, wd, wdt, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag (&fg->wei_user, 2, wd, wdt, dnnl_ab);
}

static gboolean
fused_pd (const FusedSpec *f, FusedGeom *fg, const float *oscales, dnnl_primitive_desc_t *pd, GError **error)
{
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  gboolean ok;
  union {
    dnnl_convolution_desc_t conv;
    dnnl_inner_product_desc_t ip;
  } d;
  dnnl_primitive_attr_create (&attr);
  dnnl_post_ops_create (&po);
  if (f->int8)
    dnnl_primitive_attr_set_output_scales (attr, fg->o, 1 << 1, oscales);
  if (fg->other >= 0)
    dnnl_post_ops_append_sum_v2 (po, f->out_int8 ? f->out_scale / fg->other_scale : 1.0f, fg->other_dt);
  if (f->relu)
    dnnl_post_ops_append_eltwise (po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
  dnnl_primitive_attr_set_post_ops (attr, po);
  if (fg->conv)
    {
      const NlConv2dGeom *g = &fg->g;
      dnnl_dims_t st = { g->sh, g->sw }, dil = { g->dh - 1, g->dw - 1 }, pl = { g->ph, g->pw };
      /* oneDNN's output size floors as ours does: right padding >= 0 */
      dnnl_dims_t pr = { MAX (0, (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1 - g->h - g->ph),
                         MAX (0, (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1 - g->w - g->pw) };
      ok = nl_dnnl_check (dnnl_dilated_convolution_forward_desc_init (&d.conv, dnnl_forward_inference,
                                                                      dnnl_convolution_direct, &fg->src, &fg->wei,
                                                                      &fg->bias, &fg->dst, st, dil, pl, pr),
                          "convolution", error);
    }
  else
    ok = nl_dnnl_check (dnnl_inner_product_forward_desc_init (&d.ip, dnnl_forward_inference, &fg->src, &fg->wei,
                                                              &fg->bias, &fg->dst),
                        "inner product", error);
  dnnl_status_t status = ok ? dnnl_primitive_desc_create (pd, &d, attr, nl_dnnl_engine (), NULL) : dnnl_success;
  if (ok && status != dnnl_success && !fg->conv && fg->src.ndims == 4)
    {
      /* a blocked input it has no kernel for: let it choose, a reorder goes before */
      dnnl_memory_desc_init_by_tag (&fg->src, 4, fg->src.dims, fg->src.data_type, dnnl_format_tag_any);
      dnnl_inner_product_forward_desc_init (&d.ip, dnnl_forward_inference, &fg->src, &fg->wei, &fg->bias, &fg->dst);
      status = dnnl_primitive_desc_create (pd, &d, attr, nl_dnnl_engine (), NULL);
    }
  ok = ok && nl_dnnl_check (status, fg->conv ? "convolution" : "inner product", error);
  dnnl_post_ops_destroy (po);
  dnnl_primitive_attr_destroy (attr);
  return ok;
}

/* The output's buffer: the residual branch's (in place, or a copy of it
 * made now in the output's layout), or a new one. */
static int
fused_out (NlInferNet *n, const FusedSpec *f, const FusedGeom *fg, const dnnl_memory_desc_t *dst, GError **error)
{
  const NlShape *os = &nl_graph_value (n->graph, f->last->out)->shape;
  float scale = f->out_int8 ? f->out_scale : 1.0f;
  if (fg->other < 0)
    return nl_infer_new_val (n, dst, os, scale, -1);
  dnnl_memory_desc_t omd = *dst;
  omd.data_type = fg->other_dt;
  /* in place: the branch is read by nothing after this step (a reorder
   * that want places is ours alone too); else sum into a copy */
  int o = f->in_place ? nl_infer_want (n, fg->other, &omd, fg->other_scale, error)
                      : nl_infer_copy (n, fg->other, &omd, fg->other_scale, error);
  if (o < 0)
    return -1;
  return nl_infer_new_val (n, dst, os, scale, ival (n, o)->buf);
}

static const char *
fused_ids (const FusedSpec *f, char *buf, size_t size)
{
  g_snprintf (buf, size, "%s%s%s%s%s%s%s", f->head->id, f->bn ? "+" : "", f->bn ? f->bn->id : "", f->add ? "+" : "",
              f->add ? f->add->id : "", f->relu ? "+" : "", f->relu ? f->relu->id : "");
  return buf;
}

/* Folded (and quantized) weights and bias in the layouts pd chose. */
static gboolean
fused_weights (NlInferNet *n, const FusedSpec *f, const FusedGeom *fg, const_dnnl_primitive_desc_t pd, IStep *s,
               float *w, float *b, int8_t *q, GError **error)
{
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md (pd, dnnl_query_weights_md, 0);
  dnnl_memory_t wmem = owned_memory (&fg->wei_user, f->int8 ? (void *) q : (void *) w, wmd, error);
  dnnl_memory_t bmem = wmem ? owned_memory (&fg->bias, b, &fg->bias, error) : NULL;
  (void) n;
  if (wmem)
    nl_infer_step_mem (s, DNNL_ARG_WEIGHTS, wmem);
  if (bmem)
    nl_infer_step_mem (s, DNNL_ARG_BIAS, bmem);
  return bmem != NULL;
}

int
nl_infer_build_fused (NlInferNet *n, const FusedSpec *f, GError **error)
{
  FusedGeom fg;
  fused_geom (n, f, &fg);
  int64_t o = fg.o, per = fg.per;
  g_autofree float *w = g_new (float, o * per), *b = g_new (float, o), *wsc = NULL, *osc = NULL;
  g_autofree int8_t *q = NULL;
  dnnl_primitive_desc_t pd = NULL;
  char ids[512];
  int in, out = -1;

  fold_weights (n, f, o, per, w, b);
  if (f->int8)
    {
      /* y = acc * ws / s_in + b: the accumulator domain's bias is b * s_in / ws,
       * and the output scale takes acc to the output's (ws * s_out / s_in) */
      q = g_new (int8_t, o * per);
      wsc = g_new (float, o);
      osc = g_new (float, o);
      nl_quant_weights (w, o, per, q, wsc);
      for (int64_t c = 0; c < o; c++)
        {
          osc[c] = wsc[c] * (f->out_int8 ? f->out_scale : 1.0f) / fg.in_scale;
          b[c] = b[c] * fg.in_scale / wsc[c];
        }
    }
  if (!fused_pd (f, &fg, osc, &pd, error))
    return -1;
  in = nl_infer_want (n, fg.in, dnnl_primitive_desc_query_md (pd, dnnl_query_src_md, 0), fg.in_scale, error);
  if (in >= 0)
    out = fused_out (n, f, &fg, dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0), error);
  if (out >= 0)
    {
      IStep *s = nl_infer_add_step (
        n, STEP_PRIM,
        g_strdup_printf ("%s %s %s %s->%s%s", fused_ids (f, ids, sizeof ids), f->int8 ? "int8" : "fp32",
                         fg.conv ? "conv" : "dense", nl_infer_dt_name (fg.in_dt), nl_infer_dt_name (fg.out_dt),
                         f->fp32_why ? f->fp32_why : ""));
      nl_infer_step_read (n, s, DNNL_ARG_SRC, in);
      nl_infer_step_write (n, s, DNNL_ARG_DST, out);
      if (!fused_weights (n, f, &fg, pd, s, w, b, q, error) || !nl_infer_prim_new (&s->prim, pd, ids, error))
        out = -1;
    }
  dnnl_primitive_desc_destroy (pd);
  return out;
}

gboolean
nl_infer_pool_ok (const NlInferNet *n, const NlGraphNode *node)
{
  if (strcmp (node->def->name, "GlobalAvgPool2D") == 0)
    return TRUE;
  void *args = nl_op_args_new (node->def, node->params);
  NlPool2dGeom g = nl_pool2d_geom (args);
  const NlShape *is = &nl_graph_value (n->graph, node->in[0])->shape, *os = &nl_graph_value (n->graph, node->out)->shape;
  g_free (args);
  /* average windows past the padding (ceil mode) count differently */
  return strcmp (node->def->name, "MaxPool2D") == 0
         || ((os->d[2] - 1) * g.sh + g.kh <= is->d[2] + 2 * g.ph && (os->d[3] - 1) * g.sw + g.kw <= is->d[3] + 2 * g.pw);
}

int
nl_infer_build_pool (NlInferNet *n, const NlGraphNode *node, GError **error)
{
  const NlShape *is = &nl_graph_value (n->graph, node->in[0])->shape, *os = &nl_graph_value (n->graph, node->out)->shape;
  gboolean global = strcmp (node->def->name, "GlobalAvgPool2D") == 0, max = strcmp (node->def->name, "MaxPool2D") == 0;
  NlPool2dGeom g = { .kh = is->d[2], .kw = is->d[3], .sh = 1, .sw = 1 };
  if (!global)
    {
      void *args = nl_op_args_new (node->def, node->params);
      g = nl_pool2d_geom (args);
      g_free (args);
    }
  int in = n->gv[node->in[0]];
  IVal *iv = ival (n, in);
  dnnl_dims_t dd = { os->d[0], os->d[1], os->d[2], os->d[3] }, st = { g.sh, g.sw }, k = { g.kh, g.kw },
              dil = { 0, 0 }, pl = { g.ph, g.pw };
  dnnl_dims_t pr = { MAX (0, (os->d[2] - 1) * g.sh + g.kh - is->d[2] - g.ph),
                     MAX (0, (os->d[3] - 1) * g.sw + g.kw - is->d[3] - g.pw) };
  dnnl_memory_desc_t dst, src = iv->md;
  dnnl_pooling_v2_desc_t d;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_alg_kind_t alg = max ? dnnl_pooling_max
                        : g.include_pad && !global ? dnnl_pooling_avg_include_padding
                                                   : dnnl_pooling_avg_exclude_padding;
  dnnl_memory_desc_init_by_tag (&dst, 4, dd, src.data_type, dnnl_format_tag_any);
  if (!nl_dnnl_check (dnnl_pooling_v2_forward_desc_init (&d, dnnl_forward_inference, alg, &src, &dst, st, k, dil, pl, pr),
                      node->id, error)
      || !nl_dnnl_check (dnnl_primitive_desc_create (&pd, &d, NULL, nl_dnnl_engine (), NULL), node->id, error))
    return -1;
  IVal from = *iv; /* new_val may move the values */
  int out = nl_infer_new_val (n, dnnl_primitive_desc_query_md (pd, dnnl_query_dst_md, 0), os, from.scale, -1);
  ival (n, out)->qscale = from.qscale;
  ival (n, out)->qunsigned = from.qunsigned;
  char *desc = g_strdup_printf ("%s %s pool %s", node->id, src.data_type == dnnl_f32 ? "fp32" : "int8",
                                nl_infer_dt_name (src.data_type));
  return nl_infer_add_prim_step (n, pd, desc, DNNL_ARG_SRC, in, DNNL_ARG_DST, out, node->id, error) ? out : -1;
}

int
nl_infer_build_eltwise (NlInferNet *n, const NlGraphNode *node, GError **error)
{
  dnnl_alg_kind_t alg = dnnl_eltwise_relu;
  float alpha = 0.0f;
  if (strcmp (node->def->name, "LeakyReLU") == 0)
    alpha = NL_P_FLOAT (node->params, P_ALPHA);
  else
    switch ((NlActType) NL_P_ENUM (node->params, P_ACT_TYPE))
      {
      case ACT_RELU: alg = dnnl_eltwise_relu; break;
      case ACT_SIGMOID: alg = dnnl_eltwise_logistic; break;
      case ACT_TANH: alg = dnnl_eltwise_tanh; break;
      case ACT_SOFTRELU: alg = dnnl_eltwise_soft_relu; break;
      default: break; /* the later act_types run the op's kernel (nl-infer-net.c) */
      }
  /* in whatever layout it comes, in fp32 */
  dnnl_memory_desc_t md = ival (n, n->gv[node->in[0]])->md;
  md.data_type = dnnl_f32;
  int in = nl_infer_want (n, n->gv[node->in[0]], &md, 1.0f, error);
  if (in < 0)
    return -1;
  dnnl_eltwise_desc_t d;
  dnnl_primitive_desc_t pd = NULL;
  if (!nl_dnnl_check (dnnl_eltwise_forward_desc_init (&d, dnnl_forward_inference, alg, &md, alpha, 0.0f), node->id,
                      error)
      || !nl_dnnl_check (dnnl_primitive_desc_create (&pd, &d, NULL, nl_dnnl_engine (), NULL), node->id, error))
    return -1;
  int out = nl_infer_new_val (n, &md, &nl_graph_value (n->graph, node->out)->shape, 1.0f, -1);
  return nl_infer_add_prim_step (n, pd, g_strdup_printf ("%s fp32 eltwise", node->id), DNNL_ARG_SRC, in, DNNL_ARG_DST,
                                 out, node->id, error) ? out : -1;
}

int
nl_infer_build_kernel (NlInferNet *n, const NlGraphNode *node, GError **error)
{
  NlOpKernels k = nl_op_kernels (node->def, n->model->backend);
  int in[NL_MAX_PORTS];
  if (!k.forward)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   "%s (%s) cannot run for inference: the op has no CPU kernel", node->id, node->def->name);
      return -1;
    }
  for (int i = 0; i < node->n_data; i++)
    {
      dnnl_memory_desc_t md;
      nl_infer_plain_md (&md, &nl_graph_value (n->graph, node->in[i])->shape, dnnl_f32);
      if ((in[i] = nl_infer_want (n, n->gv[node->in[i]], &md, 1.0f, error)) < 0)
        return -1;
    }
  dnnl_memory_desc_t omd;
  const NlShape *os = &nl_graph_value (n->graph, node->out)->shape;
  nl_infer_plain_md (&omd, os, dnnl_f32);
  int out = nl_infer_new_val (n, &omd, os, 1.0f, -1);
  IStep *s = nl_infer_add_step (n, STEP_KERNEL, g_strdup_printf ("%s fp32 %s", node->id, node->def->name));
  s->node = node;
  s->kernels = k;
  s->args = nl_op_args_new (node->def, node->params);
  s->n_in = node->n_data;
  for (int i = 0; i < node->n_data; i++)
    {
      s->in_val[i] = in[i];
      nl_infer_step_read (n, s, -1, in[i]);
    }
  s->out_val = out;
  nl_infer_step_write (n, s, -1, out);
  for (int j = 0; j < node->def->n_weights; j++)
    if (n->model->weights[NL_MODEL_SLOT (node->net_index, j)]) /* copies: the weights as they are now */
      s->in[node->n_data + j] = nl_tensor_copy (n->model->weights[NL_MODEL_SLOT (node->net_index, j)]);
  for (int j = 0; j < node->def->n_aux; j++)
    if (n->model->aux[NL_MODEL_SLOT (node->net_index, j)])
      s->aux[j] = nl_tensor_copy (n->model->aux[NL_MODEL_SLOT (node->net_index, j)]);
  for (int j = 0; j < node->def->n_saved; j++)
    if (node->saved_v[j] >= 0)
      s->saved[j] = nl_tensor_zeros (NL_DTYPE_F32, &node->saved[j]);
  return out;
}
