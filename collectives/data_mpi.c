/* MPI datatypes and ops of the collectives' element types, with the 16-bit floats reduced by our kernel. */
#include "data_int.h"

#include "railbench/harness.h"

static MPI_Datatype type16[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL}; /* half, bfloat16 */
static MPI_Op ops16[RB_COLL_REDOPS] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

/* MPI has no 16-bit floating types: they travel as two bytes and reduce through our kernel. */
static void op16(void *in, void *inout, const int *len, const MPI_Datatype *dt, enum rb_coll_redop op)
{
    enum rb_coll_dtype t = *dt == type16[1] ? RB_COLL_BFLOAT16 : RB_COLL_HALF;
    rb_coll_data_reduce(inout, inout, in, (size_t)*len, t, op);
}
static void op16_sum(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_SUM); }
static void op16_prod(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_PROD); }
static void op16_max(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_MAX); }
static void op16_min(void *in, void *inout, int *len, MPI_Datatype *dt) { op16(in, inout, len, dt, RB_COLL_MIN); }

void rb_coll_mpi_types_create(void)
{
    for (int i = 0; i < 2; i++) {
        RB_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &type16[i]));
        RB_MPI_CHECK(MPI_Type_commit(&type16[i]));
    }
    MPI_User_function *fns[RB_COLL_REDOPS] = {op16_sum, op16_prod, op16_max, op16_min, op16_sum};
    for (int i = 0; i < RB_COLL_AVG; i++)
        RB_MPI_CHECK(MPI_Op_create(fns[i], 1, &ops16[i]));
    ops16[RB_COLL_AVG] = ops16[RB_COLL_SUM];
}

void rb_coll_mpi_types_free(void)
{
    for (int i = 0; i < 2; i++)
        if (type16[i] != MPI_DATATYPE_NULL)
            RB_MPI_CHECK(MPI_Type_free(&type16[i]));
    for (int i = 0; i < RB_COLL_AVG; i++)
        if (ops16[i] != MPI_OP_NULL)
            RB_MPI_CHECK(MPI_Op_free(&ops16[i]));
    ops16[RB_COLL_AVG] = MPI_OP_NULL;
}

MPI_Datatype rb_coll_mpi_type(enum rb_coll_dtype t)
{
    switch (t) {
    case RB_COLL_INT8: return MPI_INT8_T;
    case RB_COLL_UINT8: return MPI_UINT8_T;
    case RB_COLL_INT32: return MPI_INT32_T;
    case RB_COLL_UINT32: return MPI_UINT32_T;
    case RB_COLL_INT64: return MPI_INT64_T;
    case RB_COLL_UINT64: return MPI_UINT64_T;
    case RB_COLL_HALF: return type16[0];
    case RB_COLL_FLOAT: return MPI_FLOAT;
    case RB_COLL_DOUBLE: return MPI_DOUBLE;
    case RB_COLL_BFLOAT16: return type16[1];
    default: return MPI_DATATYPE_NULL;
    }
}

MPI_Op rb_coll_mpi_op(enum rb_coll_redop op, enum rb_coll_dtype t)
{
    if (op == RB_COLL_NONE)
        return MPI_OP_NULL;
    if (t == RB_COLL_HALF || t == RB_COLL_BFLOAT16)
        return ops16[op];
    switch (op) {
    case RB_COLL_PROD: return MPI_PROD;
    case RB_COLL_MAX: return MPI_MAX;
    case RB_COLL_MIN: return MPI_MIN;
    default: return MPI_SUM;
    }
}
