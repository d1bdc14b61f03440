/* standards.c: the standards a tolerance is taken under: the table of matrix-engine models, its names
 * and aliases, its text table, the parser of a standard's name or engine:k=..,F=..,p=.. spelling, and
 * the choice of a row for the operands' formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds_blocked.h"
#include "scaled_internal.h"
#include "host/er_msg.h"
#include "exactref/core/er_formats.h"
#include "exactref/exactref.h"
#include "standards_internal.h"

/*
 * The matrix-engine models of docs/accumulation-models.md, one row each, with the instructions they
 * model and their other names (docs/proofs/engines.md proves the bound of every row).  Per row: k
 * products per step, F fraction bits kept at the step's largest exponent, the accumulator D's fraction
 * bits and rounding, promotion, exact groups, CDNA3 arithmetic, tf32 operands, D's format, F2, stages.
 */
#define ER_NV(nm, k, F, p, pr, g, tf) {ER_STD_ENGINE, nm, k, F, p, ER_RND_ZERO, pr, g, 0, tf, ER_FMT_F32, 0, 0, 0, 0}
#define ER_NV16(nm, k, F) {ER_STD_ENGINE, nm, k, F, 10, ER_RND_NEAREST_EVEN, 0, 1, 0, 0, ER_FMT_F16, 0, 0, 0, 0}
#define ER_AMD(nm, k, tf, two) {ER_STD_ENGINE, nm, k, 24, 23, ER_RND_NEAREST_EVEN, 0, 1, 1, tf, ER_FMT_F32, 31, two, 0, 0}
static const er_standard_info er_models_[] = {
    {"volta", "Volta mma.m8n8k4 f16 -> f32", "", ER_NV("volta", 4, 23, 23, 0, 1, 0)},
    {"volta-f16", "Volta mma.m8n8k4 f16 -> f16", "", ER_NV16("volta-f16", 4, 23)},
    {"turing", "Turing mma.m16n8k8 f16 -> f32", "", ER_NV("turing", 8, 24, 23, 0, 1, 0)},
    {"turing-f16", "Turing mma.m16n8k8 f16 -> f16", "", ER_NV16("turing-f16", 8, 24)},
    {"ampere", "Ampere mma.m16n8k16 f16/bf16 -> f32 (2 x 8), m16n8k8 bf16", "", ER_NV("ampere", 8, 24, 23, 0, 1, 0)},
    {"ampere-f16", "Ampere/Ada mma.m16n8k16 f16 -> f16 (2 x 8)", "ada-f16-f16", ER_NV16("ampere-f16", 8, 24)},
    {"ampere-tf32", "Ampere mma.m16n8k8 tf32 -> f32 (2 x 4), m16n8k4", "", ER_NV("ampere-tf32", 4, 24, 23, 0, 1, 1)},
    {"ada-f16", "Ada mma.m16n8k16 f16/bf16 -> f32 (2 x 8)", "", ER_NV("ada-f16", 8, 24, 23, 0, 1, 0)},
    {"ada-tf32", "Ada mma.m16n8k8 tf32 -> f32 (2 x 4)", "", ER_NV("ada-tf32", 4, 24, 23, 0, 1, 1)},
    {"ada-fp8", "Ada mma.m16n8k32 e4m3/e5m2 -> f32 (2 x 16, e8m13), m16n8k16", "", ER_NV("ada-fp8", 16, 13, 13, 0, 1, 0)},
    {"ada-fp8-f16", "Ada mma.m16n8k32 e4m3/e5m2 -> f16 (2 x 16), m16n8k16", "", ER_NV16("ada-fp8-f16", 16, 13)},
    {"hopper", "Hopper wgmma f16/bf16 -> f32", "", ER_NV("hopper", 16, 25, 23, 0, 1, 0)},
    {"hopper-f16", "Hopper wgmma f16 -> f16", "", ER_NV16("hopper-f16", 16, 25)},
    {"hopper-tf32", "Hopper wgmma tf32 -> f32", "", ER_NV("hopper-tf32", 8, 25, 23, 0, 1, 1)},
    {"hopper-fp8", "Hopper wgmma e4m3/e5m2 -> f32 (e8m13)", "", ER_NV("hopper-fp8", 32, 13, 13, 0, 1, 0)},
    {"hopper-fp8-f16", "Hopper wgmma e4m3/e5m2 -> f16", "", ER_NV16("hopper-fp8-f16", 32, 13)},
    {"deepgemm-fp8", "Hopper wgmma fp8, promoted into f32 every 128 (DeepGEMM)", "hopper-fp8-deepgemm",
     ER_NV("deepgemm-fp8", 32, 13, 13, 128, 1, 0)},
    {"blackwell", "Blackwell tcgen05 kind::f16 f16/bf16 -> f32", "", ER_NV("blackwell", 16, 25, 23, 0, 1, 0)},
    {"blackwell-f16", "Blackwell tcgen05 kind::f16 f16 -> f16", "", ER_NV16("blackwell-f16", 16, 25)},
    {"blackwell-tf32", "Blackwell tcgen05 kind::tf32 -> f32", "", ER_NV("blackwell-tf32", 8, 25, 23, 0, 1, 1)},
    {"blackwell-f8f6f4", "Blackwell tcgen05 kind::f8f6f4 -> f32; sm_120 mma m16n8k32", "",
     ER_NV("blackwell-f8f6f4", 32, 25, 23, 0, 1, 0)},
    {"blackwell-f8f6f4-f16", "Blackwell tcgen05 kind::f8f6f4 -> f16; sm_120 mma m16n8k32", "",
     ER_NV16("blackwell-f8f6f4-f16", 32, 25)},
    {"blackwell-mxf8f6f4", "Blackwell kind::mxf8f6f4 block32 ue8m0 scales -> f32", "blackwell-mx",
     ER_NV("blackwell-mxf8f6f4", 32, 25, 23, 0, 1, 0)},
    {"blackwell-mxf4", "Blackwell kind::mxf4/mxf4nvf4 k64, exact groups of 16 -> f32", "blackwell-nvf4",
     ER_NV("blackwell-mxf4", 64, 35, 23, 0, 16, 0)},
    {"cdna3", "CDNA3 MFMA f16/bf16 -> f32, 8 per step (fp8: cdna3-fp8)", "", ER_AMD("cdna3", 8, 0, 0)},
    {"cdna3-fp8", "CDNA3 MFMA fp8/bf8 -> f32 (16 per step, even/odd stages)", "cdna3-bf8", ER_AMD("cdna3-fp8", 16, 0, 1)},
    {"cdna3-xf32", "CDNA3 MFMA xf32 -> f32 (4 per step)", "", ER_AMD("cdna3-xf32", 4, 1, 0)},
};
#undef ER_NV
#undef ER_NV16
#undef ER_AMD
#define ER_NMODELS ((int)(sizeof er_models_ / sizeof er_models_[0]))

const er_standard_info *er_standard_list(int *count)
{
    if (count) *count = ER_NMODELS;
    return er_models_;
}

const char *er_standard_names(void)
{
    /* every name and alias of er_models_, in its order (test_bounds' table test compares the two) */
    return "normal any_order volta volta-f16 turing turing-f16 ampere ampere-f16 ada-f16-f16 ampere-tf32 ada-f16 "
           "ada-tf32 ada-fp8 ada-fp8-f16 hopper hopper-f16 hopper-tf32 hopper-fp8 hopper-fp8-f16 deepgemm-fp8 "
           "hopper-fp8-deepgemm blackwell blackwell-f16 blackwell-tf32 blackwell-f8f6f4 blackwell-f8f6f4-f16 "
           "blackwell-mxf8f6f4 blackwell-mx blackwell-mxf4 blackwell-nvf4 cdna3 cdna3-fp8 cdna3-bf8 cdna3-xf32 "
           "engine:k=..,F=..,p=.. blocked:bk=..,split=..,acc=.. scaled:bk=..,partial=..";
}

/* name is one of the space-separated words of list. */
static int in_words(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ') p++;
        size_t w = strcspn(p, " ");
        if (w == n && w && !strncmp(p, name, n)) return 1;
        p += w;
    }
    return 0;
}

size_t er_standard_table(char *buf, size_t size)
{
    size_t n = 0;
    char tmp[256];
#define ER_PUT(...)                                                                                    \
    do {                                                                                               \
        int w_ = snprintf(tmp, sizeof tmp, __VA_ARGS__);                                               \
        if (w_ > 0) {                                                                                  \
            if (buf && n < size) snprintf(buf + n, size - n, "%s", tmp);                               \
            n += (size_t)w_;                                                                           \
        }                                                                                              \
    } while (0)
    if (buf && size) buf[0] = '\0';
    ER_PUT("%-21s %-62s %3s %3s %3s %-8s %-7s %s\n", "standard", "family (instructions)", "k", "F", "p", "rounding",
           "promote", "aliases");
    ER_PUT("%-21s %-62s %3s %3s %3s %-8s %s\n", "normal", "products rounded to compute, index order or 2/4 lanes", "-",
           "-", "-", "nearest", "-");
    ER_PUT("%-21s %-62s %3s %3s %3s %-8s %s\n", "any_order", "any summation tree, with or without fma", "-", "-", "-",
           "nearest", "-");
    ER_PUT("%-21s %-62s %3s %3s %3s %-8s %s\n", "blocked:bk=..", "k-tiles of bk, split-k, any order within a tile",
           "-", "-", "-", "nearest", "-");
    ER_PUT("%-21s %-62s %3s %3s %3s %-8s %s\n", "scaled:bk=..", "scaled products: partials of bk, times sa sb, f32 (scaled.h)",
           "-", "-", "-", "nearest", "-");
    for (int i = 0; i < ER_NMODELS; i++) {
        const er_standard *m = &er_models_[i].std;
        char pr[16];
        snprintf(pr, sizeof pr, "%d", m->promote);
        if (er_models_[i].aliases[0])
            ER_PUT("%-21s %-62s %3d %3d %3d %-8s %-7s %s\n", er_models_[i].name, er_models_[i].family, m->k, m->F,
                   m->out_p, m->out_round == ER_RND_ZERO ? "zero" : "nearest", m->promote ? pr : "-", er_models_[i].aliases);
        else
            ER_PUT("%-21s %-62s %3d %3d %3d %-8s %s\n", er_models_[i].name, er_models_[i].family, m->k, m->F, m->out_p,
                   m->out_round == ER_RND_ZERO ? "zero" : "nearest", m->promote ? pr : "-");
    }
#undef ER_PUT
    return n;
}

er_standard er_standard_for_inputs(const er_standard *std, int a_format, int b_format)
{
    er_standard s = *std;
    if (std->kind == ER_STD_ENGINE && !strcmp(std->name, "cdna3") && a_format >= 0 && a_format < ER_FMT_COUNT &&
        b_format >= 0 && b_format < ER_FMT_COUNT) {
        er_fmt fa = er_fmt_get(a_format), fb = er_fmt_get(b_format);
        int f8a = fa.kind == ER_KIND_FLOAT && fa.width == 8 && er_fmt_signed(fa);
        int f8b = fb.kind == ER_KIND_FLOAT && fb.width == 8 && er_fmt_signed(fb);
        if (f8a && f8b)
            for (int i = 0; i < ER_NMODELS; i++)
                if (!strcmp(er_models_[i].name, "cdna3-fp8")) s = er_models_[i].std;
    }
    return s;
}

/* The index of an engine key in keys[] (f is F), or -1. */
static int key_index(const char *const *keys, int n, const char *key)
{
    if (!strcmp(key, "f")) key = "F";
    for (int i = 0; i < n; i++)
        if (!strcmp(keys[i], key)) return i;
    return -1;
}

#define msgf er_msgf /* host/er_msg.h */

/*
 * Attention's flash standard (docs/proofs/attention.md): "flash", or "flash:" then block=N (the
 * declared key block), mma=normal|any_order|<matrix-engine model> (the scores' and P.V's matmul
 * standard; any_order when not given; a model: split ER_STD_ENGINE and its parameters in the engine
 * fields), p=value|compute|<format> (P's format before P.V: the value's format when not given) and
 * order=index|reverse (the blocks' visiting order, in group: 1 or 2), each at most once, comma separated.
 */
static er_status parse_flash(const char *spec, er_standard *s, char *msg, size_t msg_size)
{
    memset(s, 0, sizeof *s);
    s->kind = ER_STD_FLASH;
    s->group = 1;
    s->acc_fmt = -1;
    s->split = ER_STD_ANY_ORDER;
    if (strlen(spec) >= sizeof s->name)
        return msgf(msg, msg_size, ER_EINVAL, "standard '%s': longer than %d characters", spec, (int)sizeof s->name - 1);
    snprintf(s->name, sizeof s->name, "%s", spec);
    const char *p = spec[5] == ':' ? spec + 6 : spec + 5;
    unsigned seen = 0;
    if (spec[5] == ':' && !*p) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': a key=value must follow 'flash:'", spec);
    while (*p) {
        char key[16], val[40];
        int used = 0;
        if (sscanf(p, "%15[a-z]=%39[a-zA-Z0-9_-]%n", key, val, &used) != 2)
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected key=value at '%s' (keys: block, mma, p, order)", spec, p);
        int ki = !strcmp(key, "block") ? 0 : !strcmp(key, "mma") ? 1 : !strcmp(key, "p") ? 2 : !strcmp(key, "order") ? 3 : -1;
        if (ki < 0) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': unknown key '%s' (keys: block, mma, p, order)", spec, key);
        if (seen & 1u << ki) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': the key '%s' is given twice", spec, key);
        seen |= 1u << ki;
        if (ki == 0) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end || v < 1 || v > (1L << 30))
                return msgf(msg, msg_size, ER_EINVAL, "standard '%s': block is a whole number of keys from 1", spec);
            s->bk = (int)v;
        } else if (ki == 1) {
            int mi = -1;
            for (int i = 0; i < ER_NMODELS && mi < 0; i++)
                if (!strcmp(val, er_models_[i].name) || in_words(er_models_[i].aliases, val)) mi = i;
            if (!strcmp(val, "normal")) s->split = ER_STD_NORMAL;
            else if (!strcmp(val, "any_order")) s->split = ER_STD_ANY_ORDER;
            else if (mi >= 0) {
                /* a matrix-engine model for S = Q K^T and for P V: its parameters in the engine fields
                 * (acc_fmt stays P's format); the f16-accumulator rows, promotion and exact groups are
                 * not attention kernels' and are refused */
                const er_standard *m = &er_models_[mi].std;
                if (m->acc_fmt == ER_FMT_F16 || m->promote || m->group > 1)
                    return msgf(msg, msg_size, ER_EUNSUPPORTED,
                                "standard '%s': mma=%s (%s) is not available for attention: attention's flash "
                                "takes a model with an f32 accumulator, no promotion and no exact groups",
                                spec, val, m->promote ? "promotion" : m->group > 1 ? "exact groups" : "an f16 accumulator");
                s->split = ER_STD_ENGINE;
                s->k = m->k, s->F = m->F, s->out_p = m->out_p, s->out_round = m->out_round;
                s->floor_terms = m->floor_terms, s->tf32_inputs = m->tf32_inputs, s->F2 = m->F2;
                s->two_stage = m->two_stage;
            } else
                return msgf(msg, msg_size, ER_EUNSUPPORTED,
                            "standard '%s': mma=%s is not available for attention (mma takes normal, any_order or a "
                            "matrix-engine model with an f32 accumulator: %s)",
                            spec, val, "volta turing ampere ampere-tf32 ada-f16 ada-tf32 ada-fp8 hopper hopper-tf32 "
                                       "hopper-fp8 blackwell blackwell-tf32 blackwell-f8f6f4 blackwell-mxf8f6f4 cdna3 "
                                       "cdna3-fp8 cdna3-xf32");
        } else if (ki == 3) {
            /* the order the key blocks are visited in: index (0, 1, ...) or reverse (FlashAttention-2 and
             * -3 visit a row's blocks from the last); held in group: 1 index, 2 reverse */
            if (!strcmp(val, "index")) s->group = 1;
            else if (!strcmp(val, "reverse")) s->group = 2;
            else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': order is index or reverse, not '%s'", spec, val);
        } else {
            int f;
            if (!strcmp(val, "value")) s->acc_fmt = -1;
            else if (!strcmp(val, "compute")) s->acc_fmt = -2;
            else if (er_format_from_name(val, &f) == ER_OK && er_fmt_get(f).kind == ER_KIND_FLOAT && f != ER_FMT_F64 &&
                     !(er_fmt_get(f).flags & ER_F_UNSIGNED))
                s->acc_fmt = f;
            else
                return msgf(msg, msg_size, ER_EINVAL, "standard '%s': p is value, compute or a signed float format, not '%s'", spec, val);
        }
        p += used;
        if (*p == ',') {
            if (!*++p) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': a trailing comma (a key=value must follow it)", spec);
        } else if (*p)
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected ',' at '%s'", spec, p);
    }
    return ER_OK;
}

er_status er_standard_parse(const char *spec, er_standard *s, char *msg, size_t msg_size)
{
    if (!spec || !s) return ER_EINVAL;
    memset(s, 0, sizeof *s);
    s->group = 1;
    if (!strcmp(spec, "normal") || !strcmp(spec, "any_order")) {
        s->kind = strcmp(spec, "normal") ? ER_STD_ANY_ORDER : ER_STD_NORMAL;
        snprintf(s->name, sizeof s->name, "%s", spec);
        return ER_OK;
    }
    for (int i = 0; i < ER_NMODELS; i++)
        if (!strcmp(spec, er_models_[i].name) || in_words(er_models_[i].aliases, spec)) {
            *s = er_models_[i].std;
            snprintf(s->name, sizeof s->name, "%s", spec); /* an alias keeps the name it was given */
            return ER_OK;
        }
    if (!strncmp(spec, "flash", 5) && (spec[5] == '\0' || spec[5] == ':')) return parse_flash(spec, s, msg, msg_size);
    if (!strncmp(spec, "blocked", 7)) return er_standard_parse_blocked(spec, s, msg, msg_size); /* bounds_blocked.c */
    if (!strncmp(spec, "scaled", 6)) return er_standard_parse_scaled(spec, s, msg, msg_size);   /* scaled.c */
    if (!strncmp(spec, "engine:", 7) || !strcmp(spec, "engine")) {
        const char *p = spec + (spec[6] == ':' ? 7 : 6);
        int set_p = 0, set_round = 0;
        /* each key at most once (F and f are one key), and a comma only between two of them */
        static const char *const keys[] = {"k", "F", "p", "F2", "stages", "promote", "group", "floor", "tf32",
                                           "round", "d"};
        unsigned seen = 0;
        *s = (er_standard){ER_STD_ENGINE, "", 16, 25, 23, ER_RND_ZERO, 0, 1, 0, 0, ER_FMT_F32, 0, 0, 0, 0};
        snprintf(s->name, sizeof s->name, "%.47s", spec);
        while (*p) {
            char key[16];
            long v;
            int used = 0;
            if (sscanf(p, "%15[a-zA-Z0-9_]=%ld%n", key, &v, &used) != 2) {
                char word[16];
                if (sscanf(p, "round=%15[a-z_]%n", word, &used) == 1) {
                    if (seen & 1u << 9) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': the key 'round' is given twice", spec);
                    seen |= 1u << 9;
                    if (!strcmp(word, "zero")) s->out_round = ER_RND_ZERO;
                    else if (!strcmp(word, "nearest_even")) s->out_round = ER_RND_NEAREST_EVEN;
                    else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': round is zero or nearest_even", spec);
                    set_round = 1;
                    p += used;
                    if (*p == ',' && !*++p) break;
                    continue;
                }
                if (sscanf(p, "d=%15[a-z0-9]%n", word, &used) == 1) {
                    if (seen & 1u << 10) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': the key 'd' is given twice", spec);
                    seen |= 1u << 10;
                    /* the accumulator D: f32 (default) or f16 (then p=10, round=nearest_even unless given) */
                    if (!strcmp(word, "f32")) s->acc_fmt = ER_FMT_F32;
                    else if (!strcmp(word, "f16")) s->acc_fmt = ER_FMT_F16;
                    else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': d is f32 or f16", spec);
                    p += used;
                    if (*p == ',' && !*++p) break;
                    continue;
                }
                return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected key=value at '%s'", spec, p);
            }
            int ki = key_index(keys, (int)(sizeof keys / sizeof keys[0]), key);
            if (ki >= 0 && (seen & 1u << ki))
                return msgf(msg, msg_size, ER_EINVAL, "standard '%s': the key '%s' is given twice", spec, keys[ki]);
            if (ki >= 0) seen |= 1u << ki;
            if (v < 0 || v > 4096) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': %s=%ld out of range", spec, key, v);
            if (!strcmp(key, "k") && v >= 1) s->k = (int)v;
            else if (!strcmp(key, "F")) s->F = (int)v;
            else if (!strcmp(key, "f")) s->F = (int)v;
            else if (!strcmp(key, "p") && v >= 1 && v <= 52) s->out_p = (int)v, set_p = 1;
            else if (!strcmp(key, "F2")) s->F2 = (int)v;
            else if (!strcmp(key, "stages") && (v == 1 || v == 2)) s->two_stage = v == 2;
            else if (!strcmp(key, "promote")) s->promote = (int)v;
            else if (!strcmp(key, "group") && v >= 1) s->group = (int)v;
            else if (!strcmp(key, "floor")) s->floor_terms = v != 0;
            else if (!strcmp(key, "tf32")) s->tf32_inputs = v != 0;
            else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': unknown or invalid key '%s'", spec, key);
            p += used;
            if (*p == ',' && !*++p) break;
        }
        if (*p == '\0' && p > spec && p[-1] == ',')
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': a trailing comma (a key=value must follow it)", spec);
        if (s->promote && s->promote % s->k)
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': promote must be a multiple of k", spec);
        if (s->acc_fmt == ER_FMT_F16) {
            if (!set_p) s->out_p = 10;
            if (!set_round) s->out_round = ER_RND_NEAREST_EVEN;
            if (s->out_p > 10) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': p is at most 10 for d=f16", spec);
        }
        return ER_OK;
    }
    return msgf(msg, msg_size, ER_EFORMAT, "unknown standard '%s' (known: %s)", spec, er_standard_names());
}

/* ---- The operands a row's instructions take (er_standard_check_operands_). ---- */

static const struct {
    const char *rows;     /* the rows' names, space separated */
    const char *takes;    /* the operand formats of their instructions */
    const char *in_words; /* the same, for the message */
} er_operands_[] = {
    {"volta volta-f16 turing turing-f16 ampere-f16 hopper-f16 blackwell-f16", "f16", "f16"},
    {"ampere ada-f16 hopper blackwell cdna3", "f16 bf16", "f16, bf16"},
    {"ampere-tf32 ada-tf32 hopper-tf32 blackwell-tf32 cdna3-xf32", "f32 tf32", "f32 read as tf32"},
    {"ada-fp8 ada-fp8-f16 hopper-fp8 hopper-fp8-f16 deepgemm-fp8", "f8E4M3FN f8E5M2", "e4m3, e5m2 (f8E4M3FN, f8E5M2)"},
    {"blackwell-f8f6f4 blackwell-f8f6f4-f16 blackwell-mxf8f6f4", "f8E4M3FN f8E5M2 f6E2M3FN f6E3M2FN f4E2M1FN",
     "e4m3, e5m2, e2m3, e3m2, e2m1 (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN)"},
    {"blackwell-mxf4", "f4E2M1FN", "e2m1 (f4E2M1FN)"},
    {"cdna3-fp8", "f8E4M3FNUZ f8E5M2FNUZ f8E4M3FN f8E5M2", "fp8, bf8 (f8E4M3FNUZ, f8E5M2FNUZ; or the OCP f8E4M3FN, f8E5M2)"},
};

/* Every value of format x is a value of format y (both floats): precision, range, least quantum. */
static int values_within(int x, int y)
{
    er_format_info fx, fy;
    if (x == y) return 1;
    if (er_format_get_info(x, &fx) != ER_OK || er_format_get_info(y, &fy) != ER_OK) return 0;
    if (fx.kind != ER_KIND_FLOAT || fy.kind != ER_KIND_FLOAT || !fy.has_subnormals) return 0;
    int px = fx.significand_bits + 1, py = fy.significand_bits + 1;
    if (!fy.is_signed && fx.is_signed) return 0;
    return px <= py && fx.emax <= fy.emax && fx.emin - px >= fy.emin - py;
}

int er_standard_accumulator_(const er_standard *std, int compute)
{
    if (!std) return compute;
    if (std->kind == ER_STD_ENGINE) return std->acc_fmt == ER_FMT_F16 ? ER_FMT_F16 : ER_FMT_F32;
    if (std->kind == ER_STD_BLOCKED && std->acc_fmt >= 0) return std->acc_fmt;
    return compute;
}

/* A scaled product's engine partial (scaled:bk=128,partial=hopper-fp8): that row's operand rule, said
 * of the scaled standard (its name is the whole spec; partial=f32 and order=before take any operands). */
static er_status check_scaled_partial(const er_standard *std, int a_format, int b_format, const char *which_a,
                                      const char *which_b, char *msg, size_t msg_size)
{
    const char *p = strstr(std->name, "partial=");
    char word[48];
    er_standard e;
    char m2[1024];
    if (std->k <= 0 || !p || sscanf(p, "partial=%47[a-z0-9-]", word) != 1 || !strcmp(word, "f32")) return ER_OK;
    if (er_standard_parse(word, &e, m2, sizeof m2) != ER_OK || e.kind != ER_STD_ENGINE) return ER_OK;
    e = er_standard_for_inputs(&e, a_format, b_format);
    if (er_standard_check_operands_(&e, a_format, b_format, which_a, which_b, m2, sizeof m2) == ER_OK) return ER_OK;
    /* the row's sentence, said of the scaled standard: "--standard scaled:bk=128,partial=hopper-fp8 (its
     * partial hopper-fp8) models ...; scaled:bk=..,partial=f32 takes any operands" */
    const char *rest = strstr(m2, " models instructions");
    const char *tail = strstr(m2, "; normal and any_order take any operands");
    if (!rest || !tail) return msgf(msg, msg_size, ER_EINVAL, "%s", m2);
    return msgf(msg, msg_size, ER_EINVAL, "--standard %s (its partial %s)%.*s; scaled:bk=%d,partial=f32 takes any operands",
                std->name, word, (int)(tail - rest), rest, std->bk);
}

er_status er_standard_check_operands_(const er_standard *std, int a_format, int b_format, const char *which_a,
                                      const char *which_b, char *msg, size_t msg_size)
{
    if (std && std->kind == ER_STD_FLASH)
        return msgf(msg, msg_size, ER_EINVAL,
                    "the standard '%s' is attention's (online softmax); a matrix product takes normal, any_order, "
                    "a matrix-engine model, blocked:... or scaled:...", std->name);
    if (std && std->kind == ER_STD_SCALED)
        return check_scaled_partial(std, a_format, b_format, which_a, which_b, msg, msg_size);
    if (!std || std->kind != ER_STD_ENGINE) return ER_OK;
    /* the row: by its name or an alias (a model of one's own, engine:..., has none) */
    const char *row = NULL;
    for (int i = 0; i < ER_NMODELS && !row; i++)
        if (!strcmp(std->name, er_models_[i].name) || in_words(er_models_[i].aliases, std->name)) row = er_models_[i].name;
    if (!row) return ER_OK;
    for (size_t r = 0; r < sizeof er_operands_ / sizeof er_operands_[0]; r++) {
        if (!in_words(er_operands_[r].rows, row)) continue;
        const int fmts[2] = {a_format, b_format};
        const char *which[2] = {which_a ? which_a : "A", which_b ? which_b : "B"};
        for (int side = 0; side < 2; side++) {
            int ok = 0, first = -1;
            char name[32];
            for (const char *p = er_operands_[r].takes; *p && !ok;) {
                size_t w = strcspn(p, " ");
                int f;
                snprintf(name, sizeof name, "%.*s", (int)w, p);
                if (er_format_from_name(name, &f) == ER_OK) {
                    if (first < 0) first = f;
                    ok = values_within(fmts[side], f);
                }
                p += w;
                while (*p == ' ') p++;
            }
            if (!ok) {
                er_format_info fi;
                const char *fname = er_format_get_info(fmts[side], &fi) == ER_OK ? fi.name : "?";
                return msgf(msg, msg_size, ER_EINVAL,
                            "--standard %s models instructions whose operands are %s, and %s is %s, with values "
                            "they do not hold: the model does not apply. If its values are values of one of "
                            "them, declare it (%s %s); normal and any_order take any operands",
                            std->name, er_operands_[r].in_words, which[side], fname,
                            side ? "--b-format" : "--a-format", first >= 0 ? er_format_name(first) : "...");
            }
        }
        return ER_OK;
    }
    return ER_OK;
}

/* ---- The scaled standard (include/exactref/scaled.h, docs/scaled.md): here beside the engines' parser it
 * takes its partial= model from, so that standards.c and scaled.c do not call each other ---------- */

er_status er_standard_parse_scaled(const char *spec, er_standard *s, char *msg, size_t msg_size)
{
    const char *p;
    int have_bk = 0;
    char partial[48] = "";
    memset(s, 0, sizeof *s);
    s->kind = ER_STD_SCALED;
    s->group = 1;
    s->acc_fmt = ER_FMT_F32;
    snprintf(s->name, sizeof s->name, "%.47s", spec);
    if (strncmp(spec, "scaled:", 7))
        return msgf(msg, msg_size, ER_EINVAL, "standard '%s': write scaled:bk=N[,partial=f32|<engine model>]", spec);
    p = spec + 7;
    while (*p) {
        char word[48];
        long v;
        int used = 0;
        if (sscanf(p, "partial=%47[a-z0-9-]%n", word, &used) == 1) {
            if (strcmp(word, "f32")) {
                er_standard e;
                char m2[256];
                if (er_standard_parse(word, &e, m2, sizeof m2) != ER_OK || e.kind != ER_STD_ENGINE)
                    return msgf(msg, msg_size, ER_EINVAL, "standard '%s': partial is f32 or a matrix-engine model "
                                "(exactref check --standard list)", spec);
                if (e.group > 1 || e.promote || e.tf32_inputs)
                    return msgf(msg, msg_size, ER_EINVAL, "standard '%s': the partial's model has exact groups, its "
                                "own promotion or tf32 operands (not modelled here)", spec);
                s->k = e.k, s->F = e.F, s->out_p = e.out_p, s->out_round = e.out_round;
                s->floor_terms = e.floor_terms, s->acc_fmt = e.acc_fmt, s->F2 = e.F2, s->two_stage = e.two_stage;
                snprintf(partial, sizeof partial, "%s", word);
            }
        } else if (sscanf(p, "order=%47[a-z]%n", word, &used) == 1) {
            /* split carries the order: 0 the scales after the block's sum, 1 before the sum */
            if (!strcmp(word, "after")) s->split = 0;
            else if (!strcmp(word, "before")) s->split = 1;
            else return msgf(msg, msg_size, ER_EINVAL, "standard '%s': order is after or before", spec);
        } else if (sscanf(p, "bk=%ld%n", &v, &used) == 1 && v >= 1 && v <= (1L << 24)) {
            s->bk = (int)v, have_bk = 1;
        } else {
            return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected bk=N or partial=.. at '%s'", spec, p);
        }
        p += used;
        if (*p == ',') p++;
        else if (*p) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': expected ',' at '%s'", spec, p);
    }
    if (!have_bk) return msgf(msg, msg_size, ER_EINVAL, "standard '%s': bk (products per partial) is required", spec);
    if (s->split && s->k > 0)
        return msgf(msg, msg_size, ER_EINVAL, "standard '%s': order=before takes no partial model (an f32 product of "
                    "the scaled operands)", spec);
    if (s->k > 0 && s->bk % s->k)
        return msgf(msg, msg_size, ER_EINVAL, "standard '%s': bk must be a multiple of the model's k (%d)", spec, s->k);
    /* a spec longer than the name holds: the name in its shortest form (it must still name the partial,
     * whose row's operand rule er_standard_check_operands_ reads from it) */
    if (strlen(spec) >= sizeof s->name) {
        char nm[128];
        snprintf(nm, sizeof nm, "scaled:bk=%d%s%s%s", s->bk, s->split ? ",order=before" : "", partial[0] ? ",partial=" : "",
                 partial);
        snprintf(s->name, sizeof s->name, "%.47s", nm); /* at most 47: bk <= 2^24, the longest row's name */
    }
    return ER_OK;
}
