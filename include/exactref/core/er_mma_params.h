/* er_mma_params.h: the layout of the exact-engine kernels' parameter block (er_mma.h: er_mma_element),
 * shared by the OpenCL and CUDA kernels and their hosts (opencl/er_opencl_mma.c, cuda/er_cuda_mma.cu).
 * Every entry is a 64-bit signed integer (long / int64_t).  Operands are packed in their formats' storage sizes (the kernel derives them from the formats). */
#ifndef ER_MMA_PARAMS_H
#define ER_MMA_PARAMS_H

#define ER_MP_KIND 0    /* 0: float mma (the long accumulator), 1: mmai (exact int64 sums) */
#define ER_MP_FA 1      /* format of a */
#define ER_MP_FB 2      /* format of b */
#define ER_MP_FC 3      /* format of c, -1: no c */
#define ER_MP_FS 4      /* format of both scales, -1: not block-scaled */
#define ER_MP_FD 5      /* format of d */
#define ER_MP_WANT 6    /* which outputs: ER_MW_* bits */
#define ER_MP_DIR 7     /* rounding direction of d */
#define ER_MP_OPTS 8    /* ER_OPT_* of d (ER_OPT_FTZ_IN also flushes the operands' subnormals) */
#define ER_MP_ACC_LO 9  /* the accumulator's window (er_acc_window, as the CPU engine computes it) */
#define ER_MP_ACC_ND 10
#define ER_MP_K 11      /* inner dimension */
#define ER_MP_BLOCK 12  /* block size of the scales */
#define ER_MP_NBLK 13   /* ceil(k / block) */
#define ER_MP_NC 14     /* the tile: columns */
#define ER_MP_NR 15     /* rows */
#define ER_MP_TOTAL 16  /* elements: batches * rows * columns */
#define ER_MP_A_BS 17   /* batch strides of the packed a, b, a_scale, b_scale, c (0: broadcast) */
#define ER_MP_B_BS 18
#define ER_MP_SA_BS 19
#define ER_MP_SB_BS 20
#define ER_MP_C_BS 21
#define ER_MP_COMPUTE 22 /* normal() (kernel er_mma_normal): the compute format */
#define ER_MP_FTZ 23     /* normal(): flush_to_zero */
#define ER_MP_COUNT 24

/* ER_MP_WANT bits */
#define ER_MW_D 1
#define ER_MW_LO 2
#define ER_MW_HI 4
#define ER_MW_ODD 8

#endif /* ER_MMA_PARAMS_H */
