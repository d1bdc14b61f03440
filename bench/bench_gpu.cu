/* bench_gpu.cu: exactref on a GPU against cuBLAS, n x n x n with bf16 and f8E4M3FN inputs, f32 output.
 *
 * For each input format:
 *   cuBLAS     cublasLtMatmul of the inputs (f32 accumulate, f32 output) on the same device, timed with
 *              CUDA events after warm-up: the median of several runs, full size (default 8192^3);
 *   exact      exactref's correctly rounded reference (er_result_create with ER_BACKEND_CUDA: the exact
 *              engine's CUDA kernel), first on a block of m' = n' rows and columns with the full k (timed,
 *              GMAC/s), extrapolated to the full size; run at full size too when the extrapolation fits
 *              the time budget (ER_BENCH_BUDGET_S, default 60 s); the table says which;
 *   check      the block's CUDA result against the CPU engine's (strategy AUTO), bit for bit, on its
 *              first rows;
 *   tolerance  er_result_bounds on the CPU, per standard (any_order and the Hopper model), on a smaller
 *              block (--tol-block, default 256 x 256 with the full k), extrapolated;
 *   covers     er_result_covers of cuBLAS's output on that block: how many elements a correct
 *              implementation under that standard could produce.
 * Data: fresh random normal values (never zeros, never NaN) for every format and run.
 *
 * Layout: A is m x k row-major; B is kept as B^T (n x k row-major), and cuBLAS's D is column-major;
 * exactref reads both through strides (no copies): cuBLASLt's FP8 path needs exactly this "TN" layout.
 *
 * Usage: bench_gpu [--n N] [--block M'] [--tol-block T]; exit 3 with "no CUDA device: ..." where there is none;
 * --n 0 stops after that check.
 */
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "exactref/exactref.h"

namespace {

double now_s()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t rnd()
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Random normal patterns, never zero or NaN: bf16 within 2^-4 .. 2^4, f8E4M3FN over its normal range
 * (exponent fields 1..14; 15 holds the NaN). */
void fill(int fmt, std::vector<unsigned char> &buf, size_t count)
{
    buf.resize(count * (fmt == ER_FMT_BF16 ? 2 : 1));
    if (fmt == ER_FMT_BF16) {
        for (size_t i = 0; i < count; i++) {
            uint64_t r = rnd();
            uint16_t sign = (uint16_t)((r & 1) << 15), exp = (uint16_t)(127 - 4 + (int)((r >> 1) % 9));
            uint16_t man = (uint16_t)((r >> 8) & 0x7F);
            uint16_t v = (uint16_t)(sign | (exp << 7) | man);
            memcpy(&buf[2 * i], &v, 2);
        }
    } else {
        for (size_t i = 0; i < count; i++) {
            uint64_t r = rnd();
            unsigned sign = (unsigned)(r & 1) << 7, exp = 1 + (unsigned)((r >> 1) % 14), man = (unsigned)(r >> 8) & 7;
            buf[i] = (unsigned char)(sign | (exp << 3) | man);
        }
    }
}

struct row {
    std::string fmt, what, size, time, rate, note;
};
std::vector<row> table;

void add(const std::string &fmt, const std::string &what, const std::string &size, const std::string &time,
         const std::string &rate, const std::string &note)
{
    table.push_back({fmt, what, size, time, rate, note});
    printf("  %-9s %-30s %-22s %-14s %-16s %s\n", fmt.c_str(), what.c_str(), size.c_str(), time.c_str(),
           rate.c_str(), note.c_str());
    fflush(stdout);
}

std::string fmt_s(const char *f, double x)
{
    char b[128];
    snprintf(b, sizeof b, f, x);
    return b;
}

std::string dims(long long m, long long n, long long k)
{
    char b[96];
    snprintf(b, sizeof b, "%lldx%lldx%lld", m, n, k);
    return b;
}

#define CU(call)                                                                                        \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "bench_gpu: %s: %s\n", #call, cudaGetErrorString(e_));                      \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

/* cuBLASLt: D (column-major m x n, f32) = A^T-stored (k x m col-major = A row-major) x B (k x n
 * col-major = B^T row-major).  Returns the median time in ms, or a negative value (note says why). */
double cublas_time(int fmt, const void *dA, const void *dB, float *dD, long long m, long long n, long long k,
                   std::string &note)
{
    cublasLtHandle_t lt = nullptr;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    void *ws = nullptr;
    size_t ws_size = (size_t)64 << 20;
    cudaDataType_t in = fmt == ER_FMT_BF16 ? CUDA_R_16BF : CUDA_R_8F_E4M3;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    float alpha = 1.0f, beta = 0.0f;
    double result = -1;
    std::vector<float> ms;
    cudaEvent_t e0, e1;
    cublasStatus_t s;
#define LT(call)                                                                                        \
    do {                                                                                                \
        s = (call);                                                                                     \
        if (s != CUBLAS_STATUS_SUCCESS) {                                                               \
            note = std::string(#call).substr(0, 40) + ": cuBLAS status " + std::to_string((int)s);     \
            goto done;                                                                                  \
        }                                                                                               \
    } while (0)
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    CU(cudaMalloc(&ws, ws_size));
    LT(cublasLtCreate(&lt));
    LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT(cublasLtMatrixLayoutCreate(&la, in, (uint64_t)k, (uint64_t)m, k));
    LT(cublasLtMatrixLayoutCreate(&lb, in, (uint64_t)k, (uint64_t)n, k));
    LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, (uint64_t)m, (uint64_t)n, m));
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof ws_size));
    LT(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found));
    if (!found) {
        note = "cuBLASLt: no algorithm for this type combination";
        goto done;
    }
    for (int w = 0; w < 3; w++)
        LT(cublasLtMatmul(lt, op, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, &heur.algo, ws, ws_size, 0));
    CU(cudaDeviceSynchronize());
    for (int r = 0; r < 9; r++) {
        float t = 0;
        CU(cudaEventRecord(e0));
        LT(cublasLtMatmul(lt, op, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, &heur.algo, ws, ws_size, 0));
        CU(cudaEventRecord(e1));
        CU(cudaEventSynchronize(e1));
        CU(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    result = ms[ms.size() / 2];
    note = "median of 9 after 3 warm-up";
done:
#undef LT
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    if (lt) cublasLtDestroy(lt);
    cudaFree(ws);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return result;
}

/* er_mma arguments for rows [0, mb) x columns [0, nb) of the problem (A row-major m x k, Bt row-major
 * n x k read as k x n through strides, D given). */
struct sub {
    er_tensor a, b, d;
    er_mma_args x;
    char msg[4096];
};

void sub_init(sub &s, int fmt, const unsigned char *A, const unsigned char *Bt, long long k, long long mb,
              long long nb, float *D, int backend)
{
    s.a = er_tensor_2d(fmt, mb, k, (void *)A);
    s.b = er_tensor_2d(fmt, k, nb, (void *)Bt);
    s.b.strides[0] = 1; /* element (p, j) is Bt[j][p] */
    s.b.strides[1] = k;
    s.d = er_tensor_2d(ER_FMT_F32, mb, nb, D);
    er_mma_args_init(&s.x);
    s.x.a = &s.a;
    s.x.b = &s.b;
    s.x.d = &s.d;
    s.x.backend = backend;
    s.x.msg = s.msg;
    s.x.msg_size = sizeof s.msg;
}

} /* namespace */

int main(int argc, char **argv)
{
    long long N = 8192, MB = 1024, TB = 256;
    double budget = 60;
    const char *env = getenv("ER_BENCH_BUDGET_S");
    if (env && *env) budget = atof(env);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) N = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--block") && i + 1 < argc) MB = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--tol-block") && i + 1 < argc) TB = atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_gpu [--n N] [--block M] [--tol-block T]\n");
            return 2;
        }
    }
    if (MB > N) MB = N;
    if (TB > MB) TB = MB;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "bench_gpu: no CUDA device: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "the CUDA runtime found none");
        return 3;
    }
    cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    if (N <= 0) { /* --n 0: the device check only (bench/gpu.sh) */
        printf("bench_gpu: %d CUDA device(s); device 0: %s (sm_%d%d)\n", count, prop.name, prop.major, prop.minor);
        return 0;
    }
    printf("bench_gpu: %s (sm_%d%d, %.0f GiB), n = %lld, exact block %lld x %lld x %lld, budget %.0f s\n", prop.name,
           prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0, N, MB, MB, N, budget);
    printf("  %-9s %-30s %-22s %-14s %-16s %s\n", "inputs", "what", "size", "time", "rate", "note");

    const int fmts[2] = {ER_FMT_BF16, ER_FMT_F8E4M3FN};
    for (int fi = 0; fi < 2; fi++) {
        int fmt = fmts[fi];
        std::string fname = er_format_name(fmt);
        size_t eb = fmt == ER_FMT_BF16 ? 2 : 1;
        std::vector<unsigned char> A, Bt;
        double t0 = now_s();
        fill(fmt, A, (size_t)N * N);
        fill(fmt, Bt, (size_t)N * N);
        printf("  (%s: %lld x %lld random inputs made in %.2f s)\n", fname.c_str(), N, N, now_s() - t0);

        /* cuBLAS at full size */
        void *dA = nullptr, *dB = nullptr;
        float *dD = nullptr;
        CU(cudaMalloc(&dA, (size_t)N * N * eb));
        CU(cudaMalloc(&dB, (size_t)N * N * eb));
        CU(cudaMalloc((void **)&dD, (size_t)N * N * sizeof(float)));
        CU(cudaMemcpy(dA, A.data(), (size_t)N * N * eb, cudaMemcpyHostToDevice));
        CU(cudaMemcpy(dB, Bt.data(), (size_t)N * N * eb, cudaMemcpyHostToDevice));
        std::string note;
        double ms = cublas_time(fmt, dA, dB, dD, N, N, N, note);
        double macs = (double)N * N * N;
        std::vector<float> Dcub;
        if (ms > 0) {
            add(fname, "cuBLASLt GEMM (f32 acc, f32 out)", dims(N, N, N), fmt_s("%.3f ms", ms),
                fmt_s("%.1f TFLOP/s", 2 * macs / (ms * 1e-3) / 1e12), note);
            Dcub.resize((size_t)N * N);
            CU(cudaMemcpy(Dcub.data(), dD, Dcub.size() * sizeof(float), cudaMemcpyDeviceToHost));
        } else {
            add(fname, "cuBLASLt GEMM (f32 acc, f32 out)", dims(N, N, N), "n/a", "", note);
        }
        cudaFree(dA);
        cudaFree(dB);
        cudaFree(dD);

        /* exactref's reference on the block, through er_result (the CUDA kernel) */
        std::vector<float> Dex((size_t)MB * MB, -1.0f);
        sub s;
        sub_init(s, fmt, A.data(), Bt.data(), N, MB, MB, Dex.data(), ER_BACKEND_CUDA);
        er_result *res = nullptr;
        char msg[4096];
        t0 = now_s();
        er_status st = er_result_create(&s.x, &res, msg, sizeof msg);
        double tex = now_s() - t0;
        if (st != ER_OK) {
            fprintf(stderr, "bench_gpu: exactref on CUDA: %s: %s\n", er_status_string(st), msg);
            return st == ER_ENODEVICE ? 3 : 1;
        }
        double bmacs = (double)MB * MB * N, extra = tex * (macs / bmacs);
        add(fname, "exactref exact (CUDA kernel)", dims(MB, MB, N), fmt_s("%.2f s", tex),
            fmt_s("%.2f GMAC/s", bmacs / tex / 1e9), "measured (block)");
        if (MB < N && extra <= budget) {
            std::vector<float> Dfull((size_t)N * N);
            sub f;
            sub_init(f, fmt, A.data(), Bt.data(), N, N, N, Dfull.data(), ER_BACKEND_CUDA);
            t0 = now_s();
            st = (er_status)er_mma(&f.x);
            double tf = now_s() - t0;
            if (st != ER_OK) fprintf(stderr, "bench_gpu: full exact: %s: %s\n", er_status_string(st), f.msg);
            else
                add(fname, "exactref exact (CUDA kernel)", dims(N, N, N), fmt_s("%.2f s", tf),
                    fmt_s("%.2f GMAC/s", macs / tf / 1e9), "measured (full size)");
        } else if (MB < N) {
            add(fname, "exactref exact (CUDA kernel)", dims(N, N, N), fmt_s("%.1f s", extra),
                fmt_s("%.2f GMAC/s", bmacs / tex / 1e9),
                fmt_s("EXTRAPOLATED from the block (over the %.0f s budget: not run)", budget));
        }

        /* the CUDA bits against the CPU engine's, on the block's first rows */
        {
            long long rows = MB < 64 ? MB : 64;
            std::vector<float> Dcpu((size_t)rows * MB, -2.0f);
            sub c;
            sub_init(c, fmt, A.data(), Bt.data(), N, rows, MB, Dcpu.data(), ER_BACKEND_CPU);
            t0 = now_s();
            st = (er_status)er_mma(&c.x);
            double tc = now_s() - t0;
            long long bad = -1;
            if (st == ER_OK) {
                bad = 0;
                for (size_t i = 0; i < Dcpu.size(); i++) bad += memcmp(&Dcpu[i], &Dex[i], 4) != 0;
            }
            add(fname, "check: CUDA == CPU engine", dims(rows, MB, N), fmt_s("%.2f s", tc), "(CPU time)",
                st != ER_OK ? std::string("CPU failed: ") + c.msg
                            : bad == 0 ? "bit-identical" : fmt_s("%.0f elements DIFFER", (double)bad));
        }

        er_result_free(res);
        res = nullptr;

        /* tolerance and covers (CPU), per standard, on a smaller block (its own result, on CUDA) */
        std::vector<float> Dt((size_t)TB * TB, -1.0f);
        sub tsub;
        sub_init(tsub, fmt, A.data(), Bt.data(), N, TB, TB, Dt.data(), ER_BACKEND_CUDA);
        if ((st = er_result_create(&tsub.x, &res, msg, sizeof msg)) != ER_OK) {
            fprintf(stderr, "bench_gpu: exactref on CUDA (tolerance block): %s: %s\n", er_status_string(st), msg);
            return 1;
        }
        bmacs = (double)TB * TB * N;
        const char *stds[2] = {"any_order", fmt == ER_FMT_BF16 ? "hopper" : "hopper-fp8"};
        for (int si = 0; si < 2; si++) {
            er_tol_opts o;
            er_tol_opts_init(&o);
            if (er_standard_parse(stds[si], &o.standard, msg, sizeof msg) != ER_OK) {
                add(fname, std::string("tolerance ") + stds[si], dims(TB, TB, N), "n/a", "", msg);
                continue;
            }
            const er_bounds *b = nullptr;
            t0 = now_s();
            st = er_result_bounds(res, &o, &b, msg, sizeof msg);
            double tb = now_s() - t0;
            if (st != ER_OK) {
                add(fname, std::string("tolerance ") + stds[si], dims(TB, TB, N), "n/a", "", msg);
                continue;
            }
            double maxtol = 0;
            for (int64_t i = 0; i < b->count; i++)
                if (b->tolerance[i] > maxtol) maxtol = b->tolerance[i];
            add(fname, std::string("tolerance (CPU) ") + stds[si], dims(TB, TB, N), fmt_s("%.2f s", tb),
                fmt_s("%.2f GMAC/s", bmacs / tb / 1e9),
                fmt_s("max tolerance %.3g; full size EXTRAPOLATED ", maxtol) + fmt_s("%.1f s", tb * macs / bmacs));
            if (!Dcub.empty()) {
                er_tensor out = er_tensor_2d(ER_FMT_F32, TB, TB, Dcub.data());
                out.strides[0] = 1; /* cuBLAS's D is column-major N x N: (i, j) at i + j N */
                out.strides[1] = N;
                std::vector<unsigned char> cov((size_t)TB * TB);
                int64_t outside = -1;
                t0 = now_s();
                st = er_result_covers(res, &o, &out, cov.data(), &outside, msg, sizeof msg);
                double tcv = now_s() - t0;
                add(fname, std::string("covers(cuBLAS) ") + stds[si], dims(TB, TB, N), fmt_s("%.2f s", tcv), "",
                    st != ER_OK ? std::string("failed: ") + msg
                                : fmt_s("%.0f", (double)((int64_t)TB * TB - outside)) +
                                      fmt_s(" of %.0f covered", (double)TB * TB));
            }
        }
        er_result_free(res);
    }

    printf("\n==== exactref vs cuBLAS on %s (f32 output) ====\n", prop.name);
    printf("| inputs | what | size | time | rate | note |\n|---|---|---|---|---|---|\n");
    for (const row &r : table)
        printf("| %s | %s | %s | %s | %s | %s |\n", r.fmt.c_str(), r.what.c_str(), r.size.c_str(), r.time.c_str(),
               r.rate.c_str(), r.note.c_str());
    return 0;
}
