/* SPDX-License-Identifier: MIT */
/* What a routine returns ("returns"): nothing ("void"), a status
 * ("int32" / "int64", 0 for success), or a function's value given to a
 * rank-0 field ({"out": "d"} in apply, {"result": "d"} in jvp), as Fortran
 * FUNCTIONs and C functions such as ddot, dnrm2 or gsl_sf_bessel_J0 return
 * theirs. */
#include <stdlib.h>
#include <string.h>

#include "manifest_internal.h"

static int returned_value(mf_parse *p, mf_endpoint *e, json_t *v, const char *at) {
    e->result = calloc(1, sizeof *e->result);
    if (!e->result) return mf_fail(p, TSR_E_NOMEM, at, "out of memory");
    int rc = mf_arg_parse(p, e, v, at, e->result);
    if (rc) return rc;
    mf_arg *a = e->result;
    const tsr_component *c = p->c;
    if (a->kind != MF_OUT && a->kind != MF_RESULT)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "a function's value goes to an output: {\"out\": NAME} (apply) or "
                       "{\"result\": NAME} (jvp), not '%s'",
                       mf_kind_names[a->kind]);
    if (a->kind == MF_OUT && e->ep != TSR_EP_APPLY)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "in %s a function's value is a derivative: {\"result\": NAME}",
                       tsr_endpoint_name(e->ep));
    if (a->kind == MF_RESULT && e->ep != TSR_EP_JVP)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "a vjp's results are the inputs' gradients, which a function's single "
                       "value cannot hold (only apply and jvp return values)");
    const field_info *f = &backend_schema(c).out[a->field];
    if (f->field.rank != 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "output '%s' has rank %d; a function's value fills a rank-0 output "
                       "(shape [])",
                       f->field.name, (int)f->field.rank);
    if (a->dtype != TSR_FLOAT32 && a->dtype != TSR_FLOAT64 && a->dtype != TSR_INT32 &&
        a->dtype != TSR_INT64)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "output '%s' is %s; a function may return float32, float64, int32 or "
                       "int64 (complex and other results are not passed back in registers the "
                       "same way by every compiler)",
                       f->field.name, tsr_dtype_name(a->dtype));
    if (a->zero || a->order_f || a->field2 >= 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "a function's value takes no 'zero', 'order' or 'init'");
    return 0;
}

int mf_returns_parse(mf_parse *p, mf_endpoint *e, json_t *obj, const char *entry) {
    char at[160];
    mf_entry(at, sizeof at, entry, "returns");
    json_t *v = json_object_get(obj, "returns");
    if (!v) return 0;
    if (json_is_object(v)) return returned_value(p, e, v, at);
    const char *returns = json_string_value(v);
    if (!returns)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "expected \"void\", \"int32\" / \"int64\" (a status) or {\"out\": NAME} "
                       "(a function's value)");
    if (strcmp(returns, "void") == 0) return 0;
    int d = tsr_dtype_from_name(returns);
    e->returns = d < 0 ? TSR_DTYPE_INVALID : (tsr_dtype)d;
    if (e->returns == TSR_INT32 || e->returns == TSR_INT64) return 0;
    if (d >= 0)
        return mf_fail(p, TSR_E_DESCRIPTOR, at,
                       "\"%s\" names a type, but \"returns\" takes \"int32\" / \"int64\" only "
                       "for a status (0 = success); a function's value goes to a rank-0 "
                       "output: \"returns\": {\"out\": NAME} with NAME an output of shape [] "
                       "and dtype %s",
                       returns, returns);
    return mf_fail(p, TSR_E_DESCRIPTOR, at,
                   "expected \"void\", \"int32\" / \"int64\" (a status, 0 for success) or "
                   "{\"out\": NAME} (a function's value), got '%s'",
                   returns);
}

void *mf_result_target(const mf_endpoint *e, const tsr_args *args) {
    const mf_arg *a = e->result;
    if (a->kind == MF_OUT) return args->results[a->field].data;
    for (int32_t k = 0; k < args->n_wrt_out; k++)
        if (args->wrt_out[k] == a->field) return args->results[k].data;
    return NULL;
}

void mf_result_store(const mf_arg *a, void *dst, const void *ret) {
    ffi_arg wide;
    switch (a->dtype) {
    case TSR_INT32: {
        memcpy(&wide, ret, sizeof wide);   /* libffi widens small integers */
        int32_t v = (int32_t)wide;
        memcpy(dst, &v, sizeof v);
        break;
    }
    case TSR_INT64: memcpy(dst, ret, sizeof(int64_t)); break;
    case TSR_FLOAT32: memcpy(dst, ret, sizeof(float)); break;
    default: memcpy(dst, ret, sizeof(double)); break;
    }
}
