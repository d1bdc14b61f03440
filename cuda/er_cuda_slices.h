/* er_cuda_slices.h: the exact integer slices route of the CUDA module (cuda/er_cuda_slices.cu), called
 * per packed tile by cuda/er_cuda_mma.cu before its exact binary64 path. */
#ifndef ER_CUDA_SLICES_H
#define ER_CUDA_SLICES_H

#include <stddef.h>
#include <stdint.h>

/* One packed tile, as er_cuda_mma.cu packs it: a [batch][row][p] (nr x k per batch), b [batch][p][col]
 * (k x nc), c [batch][row][col] in fc's storage size (fc -1: none); a batch stride of 0 broadcasts.
 * Outputs: d (64-bit patterns of fd, [batch][row][col]) and done (1 where the route computed d; the
 * other elements are left to the exact kernel).  All pointers are the module's buffers: on the device,
 * or in host memory for the host pass (device < 0). */
typedef struct er_cus_tile {
    int device; /* the current CUDA device, or -1: the host pass */
    const unsigned char *a, *b, *c;
    uint64_t *d;
    unsigned char *done;
    int fa, fb, fc, fd, dir;
    unsigned opts;
    int acc_lo, acc_nd;
    int64_t nbt, nr, nc, k, a_bs, b_bs, c_bs;
} er_cus_tile;

/*
 * Run the route on a tile where it is exact (both operand formats have int8 slices, k <= 2^24) and
 * available (cuBLASLt found and every call succeeding; EXACTREF_CUDA_SLICES=0 turns it off): *ran = 1,
 * d and done written.  Otherwise *ran = 0 and nothing is written: the caller's kernels compute the tile.
 * Returns ER_OK, or an error only when a CUDA call of its own kernels fails (the context may be lost).
 */
int er_cus_run_tile(const er_cus_tile *T, int *ran, char *msg, size_t msg_size);

/* The same from a tile's parameter block (include/exactref/core/er_mma_params.h, as er_cuda_mma.cu
 * fills it) and its packed buffers: declines (*ran = 0) for mmai, block-scaled problems and anything but
 * D alone. */
int er_cus_run_params(const int64_t *prm, int device, const unsigned char *a, const unsigned char *b,
                      const unsigned char *c, uint64_t *d, unsigned char *done, int *ran, char *msg, size_t msg_size);

#endif /* ER_CUDA_SLICES_H */
