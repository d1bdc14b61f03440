/* interp_impl.h: the interpreter's internal IR (types, operations, regions, modules), shared by its files. */
#ifndef ER_INTERP_IMPL_H
#define ER_INTERP_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "exactref/exactref.h"
#include "exactref/interp.h"

#define IT_MAXRANK 8

/* The deepest nesting of regions (for, loop, if, reduce, scan bodies) a module may have: the parser
 * refuses deeper ones, so that the parser, the pre-check and the executor recurse a bounded depth. */
#define IT_MAX_DEPTH 64

/* Element type codes: float formats are their ER_FMT_* ids; then the integers, pointers, unmodelled. */
#define IT_I1 64
#define IT_I4 65
#define IT_I8 66
#define IT_I16 67
#define IT_I32 68
#define IT_I64 69
#define IT_PTR 70
#define IT_UNMODELLED 71 /* a float type MLIR knows that exactref does not model (name kept) */

/* Type kinds. */
#define IT_TILE 1
#define IT_TOKEN 2
#define IT_TV 3 /* tensor_view */
#define IT_PV 4 /* partition_view */

/* Padding values of a partition view. */
#define IT_PAD_NONE 0
#define IT_PAD_ZERO 1
#define IT_PAD_NEG_ZERO 2
#define IT_PAD_NAN 3
#define IT_PAD_POS_INF 4
#define IT_PAD_NEG_INF 5

typedef struct it_type {
    int kind;
    int et;  /* element type (tile, tensor_view, partition_view) */
    int pet; /* pointee element type when et == IT_PTR */
    int rank;
    int64_t shape[IT_MAXRANK];   /* tile shape; tensor_view shape (-1: dynamic); partition_view tile */
    int64_t strides[IT_MAXRANK]; /* tensor_view strides (-1: dynamic) */
    /* partition_view: its tensor view */
    int tv_rank;
    int64_t tv_shape[IT_MAXRANK], tv_strides[IT_MAXRANK];
    int dim_map[IT_MAXRANK];
    int padding;
    char uname[64]; /* IT_UNMODELLED: the name */
    /* views (kind IT_PV): which one (13.3's strided and gather/scatter views), their traversal strides
     * (elements between tile origins; the tile shape for a partition view) and sparse dimension */
    int vflav;
    int64_t tstep[IT_MAXRANK];
    int sparse;
} it_type;

#define IT_VIEW_PARTITION 0
#define IT_VIEW_STRIDED 1
#define IT_VIEW_GATHER 2

int it_is_int(int et);
int it_int_width(int et);
int it_is_float(int et);
int64_t it_numel(const it_type *t);
/* Bytes one element of a pointee type occupies in memory (f4E2M1FN: 0, packed by two). */
int it_elem_bytes(int et);
const char *it_et_name(int et, int pet);

/* Operation codes. */
enum {
    OP_NONE = 0,
    OP_RETURN, OP_CONSTANT, OP_GET_GLOBAL, OP_BLOCK_ID, OP_NUM_BLOCKS,
    OP_MAKE_TV, OP_MAKE_PV, OP_INDEX_SHAPE, OP_LOAD_VIEW, OP_STORE_VIEW, OP_LOAD_PTR, OP_STORE_PTR,
    OP_OFFSET, OP_PTR_TO_INT, OP_INT_TO_PTR, OP_MAKE_TOKEN, OP_JOIN_TOKENS,
    OP_FOR, OP_CONTINUE, OP_LOOP, OP_BREAK, OP_IF, OP_YIELD,
    OP_BROADCAST, OP_RESHAPE, OP_PERMUTE, OP_EXTRACT, OP_CAT, OP_SELECT, OP_IOTA, OP_BITCAST,
    OP_ADDI, OP_SUBI, OP_MULI, OP_NEGI, OP_DIVI, OP_REMI, OP_MINI, OP_MAXI, OP_MULHII, OP_ABSI,
    OP_SHLI, OP_SHRI, OP_ANDI, OP_ORI, OP_XORI, OP_CMPI, OP_EXTI, OP_TRUNCI,
    OP_ADDF, OP_SUBF, OP_MULF, OP_DIVF, OP_FMA, OP_SQRT, OP_REMF, OP_FLOOR, OP_CEIL, OP_NEGF,
    OP_ABSF, OP_MAXF, OP_MINF, OP_CMPF, OP_FTOF, OP_FTOI, OP_ITOF,
    OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_RSQRT, OP_TANH, OP_SINH, OP_COSH, OP_SIN, OP_COS, OP_TAN,
    OP_ATAN2, OP_POW,
    OP_REDUCE, OP_SCAN, OP_ASSUME, OP_PRINT, OP_MMAF, OP_MMAI, OP_MMAF_SCALED,
    /* Tile IR 13.3 / 13.4 (point mode: interp_exec.c's exec_ops13) */
    OP_FPOWI, OP_ATOMIC_RMW, OP_ATOMIC_CAS, OP_GDC, OP_PACK, OP_UNPACK, OP_ATOMIC_RED, OP_INSERT,
    OP_ALLOCA, /* num_elem in cn, alignment in dim, `global` in reverse, its number in the entry in gindex */
    OP_UNKNOWN, /* an op name this interpreter does not know: parsed generically, refused by the pre-check */
    OP_COUNT
};

/* Rounding attribute values (ER_RND_* for the IEEE ones, then the dialect's others). */
#define IT_RND_DEFAULT (-1)
#define IT_RND_APPROX 10
#define IT_RND_FULL 11
#define IT_RND_NEAREST_INT_TO_ZERO 12

/* Comparison predicates. */
enum { PRED_EQ, PRED_NE, PRED_LT, PRED_LE, PRED_GT, PRED_GE };

/* atomic_rmw_tko's and atomic_red_view_tko's modes (kept in the op's pred field), in the order of the dialect's AtomicRMWMode. */
enum { RMW_AND, RMW_OR, RMW_XOR, RMW_ADD, RMW_ADDF, RMW_MAX, RMW_MIN, RMW_UMAX, RMW_UMIN, RMW_XCHG };

/* Overflow promises. */
#define IT_NSW 1
#define IT_NUW 2
#define IT_SAT 4 /* ftoi's 13.4 `saturating` (kept with the overflow attributes) */

/* Assume predicates. */
#define IT_ASSUME_DIV_BY 1
#define IT_ASSUME_BOUNDED 2
#define IT_ASSUME_SAME_ELEMENTS 3

/* An entry of a mixed list (make_tensor_view's shape and strides): a value id or a literal. */
typedef struct it_item {
    int is_val;
    int val;
    int64_t lit;
} it_item;

struct it_region;

typedef struct it_op {
    int code;
    int line, col;
    char name[64]; /* the op's name as written (without the cuda_tile. prefix) */
    int nres;
    int *res;      /* value ids of the results */
    it_type *rty;  /* the results' types (shared copies, as oty and aty: never written) */
    int nopd;
    int *opd;      /* value ids of the operands */
    it_type *oty;  /* the operands' types where the syntax gives them (else copies of the defs') */
    int nregion;
    struct it_region *region[2];
    /* attributes */
    int rnd;            /* IT_RND_DEFAULT or a direction */
    int ftz, nan_prop, fast_acc, is_unsigned, sgn2, ordered, pred, dim, reverse, ovf;
    int has_mask, has_pad, has_token; /* operand roles (load/store ptr; token = last operand) */
    int nidx;           /* view loads/stores: number of index operands */
    int nilist;
    /* the lists only some ops have (NULL, or IT_MAXRANK * 2, IT_MAXRANK and IT_MAXRANK entries): they
     * are allocated for permute, assume and make_tensor_view, and for any op that writes one */
    int64_t *ilist; /* permute's order; assume's parameters */
    int nshape, nstrides;
    it_item *shape, *strides;
    uint64_t *cdata;    /* constant / identities: patterns (a constant: cn = 1 is a splat over its tile) */
    int64_t cn;
    int cet;
    char *str;          /* print format; get_global's symbol; unknown attribute text */
    int64_t gindex;     /* get_global: index of the global */
    int nid;            /* reduce/scan: number of identities */
    int ninb;           /* view loads/stores: inbounds=[...] (13.4): a promise per dimension */
    int inb[IT_MAXRANK];
} it_op;

typedef struct it_region {
    int nargs;
    int *args;
    it_type *aty;
    int nops;
    it_op *ops;
} it_region;

typedef struct it_entry {
    char name[128];
    int line, col;
    int nparams;
    int *params;
    it_type *pty;
    char (*pname)[64];
    it_region body;
    int nvalues; /* value ids 0 .. nvalues-1 */
    int nalloca; /* alloca ops (13.3), numbered 0 .. nalloca-1 in gindex */
    const it_type **vty; /* the type of every value id (shared copies: never written) */
} it_entry;

typedef struct it_global {
    char name[128];
    it_type ty;
    uint64_t *data; /* n patterns, or one when splat */
    int64_t n;
    int splat;
    int64_t align;
} it_global;

struct er_interp_module {
    char *filename;
    int nentries;
    it_entry *entries;
    int nglobals;
    it_global *globals;
    void **allocs; /* every allocation of the module (freed by er_interp_free) */
    int nallocs;
};

/* Formats an op location and message: "file:line:col: op 'name': ...". */
void it_msg(char *msg, size_t size, const char *file, const it_op *op, const char *fmt, ...);

/* Decimal literal to binary64 the way MLIR's parser does (strtod, round to nearest). */
const it_entry *it_find_entry(const er_interp_module *m, const char *name);

#endif /* ER_INTERP_IMPL_H */
