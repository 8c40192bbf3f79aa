/* Element types, reduction operations, exact test data, reduction kernels and their MPI types (internal to collectives/). */
#ifndef RB_COLL_DATA_INT_H
#define RB_COLL_DATA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* nccl-tests' data types, in its order (-d all runs them in this order). */
enum rb_coll_dtype {
    RB_COLL_INT8,
    RB_COLL_UINT8,
    RB_COLL_INT32,
    RB_COLL_UINT32,
    RB_COLL_INT64,
    RB_COLL_UINT64,
    RB_COLL_HALF,     /* IEEE 754 binary16, converted in software */
    RB_COLL_FLOAT,
    RB_COLL_DOUBLE,
    RB_COLL_BFLOAT16, /* the upper half of a binary32 */
    RB_COLL_DTYPES
};

/* nccl-tests' reduction operations, in its order (-o all), then "none" for the collectives that do not reduce. */
enum rb_coll_redop {
    RB_COLL_SUM,
    RB_COLL_PROD,
    RB_COLL_MAX,
    RB_COLL_MIN,
    RB_COLL_AVG, /* NCCL's ncclAvg: the sum, then divided by the number of ranks */
    RB_COLL_NONE
};
#define RB_COLL_REDOPS RB_COLL_NONE

/* nccl-tests' name ("int8" ... "half", "float", "double", "bfloat16"); NULL when invalid. */
const char *rb_coll_dtype_name(enum rb_coll_dtype t);

/* Parses a type name or one of the aliases float16, float32, float64; 0 or -EINVAL. */
int rb_coll_dtype_parse(const char *s, enum rb_coll_dtype *t);

/* Bytes per element (1, 2, 4 or 8). */
size_t rb_coll_dtype_bytes(enum rb_coll_dtype t);

/* "sum", "prod", "max", "min", "avg", "none"; NULL when invalid. */
const char *rb_coll_redop_name(enum rb_coll_redop op);

/* Parses sum, prod, max, min or avg; 0 or -EINVAL. */
int rb_coll_redop_parse(const char *s, enum rb_coll_redop *op);

/* binary16 and bfloat16 conversions, rounding to nearest even; NaN stays NaN, overflow gives infinity. */
uint16_t rb_coll_half_from_float(float f);
float rb_coll_half_to_float(uint16_t h);
uint16_t rb_coll_bf16_from_float(float f);
float rb_coll_bf16_to_float(uint16_t h);

/*
 * Test data. Every value is a small integer chosen so that any reduction
 * over nranks, in any order and grouping, is exact in the type: sums stay
 * within the range where every integer is representable (256 for
 * bfloat16, 2048 for half, 127 for int8), products are powers of two times
 * +-1, and avg inputs sum to a multiple of nranks. index is the element's
 * position in the collective's whole array; seed varies the data between
 * check iterations. Thread-safe, no state.
 */

/* Input of element index on rank for a reduction with op. */
int64_t rb_coll_data_input(enum rb_coll_dtype t, enum rb_coll_redop op, int nranks, int rank,
                           uint64_t index, uint64_t seed);

/* Result of reducing element index over ranks 0..nranks-1 (avg: sum / nranks). */
int64_t rb_coll_data_expected(enum rb_coll_dtype t, enum rb_coll_redop op, int nranks, uint64_t index,
                              uint64_t seed);

/* Value of element index contributed by rank to a collective that moves data without reducing it. */
int64_t rb_coll_data_value(enum rb_coll_dtype t, int rank, uint64_t index, uint64_t seed);

/* buf[k] = rb_coll_data_input(t, op, nranks, rank, index0 + k, seed) for k < count. */
void rb_coll_data_fill_input(void *buf, size_t count, enum rb_coll_dtype t, enum rb_coll_redop op,
                             int nranks, int rank, uint64_t index0, uint64_t seed);

/* buf[k] = rb_coll_data_value(t, rank, index0 + k, seed) for k < count. */
void rb_coll_data_fill_value(void *buf, size_t count, enum rb_coll_dtype t, int rank, uint64_t index0,
                             uint64_t seed);

/* Number of k < count with buf[k] != rb_coll_data_expected(t, op, nranks, index0 + k, seed). */
uint64_t rb_coll_data_check_expected(const void *buf, size_t count, enum rb_coll_dtype t,
                                     enum rb_coll_redop op, int nranks, uint64_t index0, uint64_t seed);

/* Number of k < count with buf[k] != rb_coll_data_value(t, rank, index0 + k, seed). */
uint64_t rb_coll_data_check_value(const void *buf, size_t count, enum rb_coll_dtype t, int rank,
                                  uint64_t index0, uint64_t seed);

/* Overwrites bytes with a pattern that is not an integer in any type, so stale output is caught. */
void rb_coll_data_poison(void *buf, size_t bytes);

/* Element i of buf as a double (exact for every value the test data produces). */
double rb_coll_data_get(const void *buf, size_t i, enum rb_coll_dtype t);

/* Stores the integer v (exactly representable in t) as element i of buf. */
void rb_coll_data_set(void *buf, size_t i, enum rb_coll_dtype t, int64_t v);

/*
 * Reduction kernel: dst[k] = a[k] op b[k] for k < count. dst may be a (the
 * usual accumulate); otherwise dst, a and b must not overlap. avg reduces
 * as sum (divide once at the end with rb_coll_data_avg). Integer sums and
 * products wrap instead of overflowing.
 */
void rb_coll_data_reduce(void *dst, const void *a, const void *b, size_t count, enum rb_coll_dtype t,
                    enum rb_coll_redop op);

/* buf[k] /= nranks, the last step of avg (integer division for integer types, as NCCL does). */
void rb_coll_data_avg(void *buf, size_t count, enum rb_coll_dtype t, int nranks);

/*
 * MPI types of the mpi baseline (data_mpi.c). MPI has no 16-bit floating
 * types: half and bfloat16 travel as two bytes and reduce through
 * rb_coll_data_reduce. Create once after MPI starts, free before it ends;
 * not thread-safe.
 */
void rb_coll_mpi_types_create(void);

/* Frees what rb_coll_mpi_types_create made; safe to call when nothing was made. */
void rb_coll_mpi_types_free(void);

/* The MPI datatype of t (MPI_DATATYPE_NULL for an invalid type). */
MPI_Datatype rb_coll_mpi_type(enum rb_coll_dtype t);

/* The MPI op of op on type t; avg is MPI_SUM (the collective divides, as NCCL defines ncclAvg); MPI_OP_NULL for none. */
MPI_Op rb_coll_mpi_op(enum rb_coll_redop op, enum rb_coll_dtype t);

#endif
