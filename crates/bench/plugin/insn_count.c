/*
 * insn_count.c - QEMU TCG plugin (QEMU 7.2, plugin API version 1) counting the
 * RISC-V instructions a program executes, by class, with a cycle estimate.
 *
 * Arguments (`-plugin insn_count.so,out=FILE,start=ADDR,stop=ADDR`):
 *   out=FILE    where to write the counts at exit (default: qemu's log, stderr)
 *   start=ADDR  entry address of _sysy_starttime (optional)
 *   stop=ADDR   entry address of _sysy_stoptime (optional)
 *
 * The "timed" counts cover the instructions executed from each entry of
 * _sysy_starttime up to (not including) the next entry of _sysy_stoptime, summed
 * over all pairs; when the program completes no pair they equal the whole run.
 *
 * Classes are decoded from the instruction bytes at translation time (RV64GC,
 * including compressed instructions). Ordinary translation blocks get one inline
 * 64-bit add per non-zero class (no helper calls, so counting is cheap); a block
 * containing a start/stop address instead gets a callback per instruction, which
 * snapshots the running totals exactly at the marker instruction.
 *
 * Cost model of the cycle estimate (a simple in-order core, documented in
 * crates/bench/README.md):
 *   integer ALU, lui/auipc, system/fence .......... 1
 *   load (integer or float) ........................ 3
 *   store .......................................... 1
 *   integer multiply ............................... 3
 *   integer divide / remainder ..................... 20
 *   float move / sign-inject / fmv.x / fclass ...... 1
 *   other float op (add, mul, fma, cvt, cmp, min) .. 4
 *   float divide / square root ..................... 20
 *   conditional branch ............................. 1
 *   jal / jalr (jumps, calls, returns) ............. 2
 *
 * QEMU 7.2 ships no qemu-plugin.h in Debian, so the few API declarations used
 * are written out below; they match the ABI of QEMU 7.2's include/qemu/qemu-plugin.h.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ QEMU 7.2 plugin API subset */

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* only used through a pointer */
struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
    QEMU_PLUGIN_INLINE_ADD_U64,
};

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* ------------------------------------------------------- counters and classes */

enum insn_class {
    C_ALU,    /* integer ALU, lui, auipc */
    C_LOAD,   /* integer and float loads */
    C_STORE,  /* integer and float stores */
    C_MUL,    /* mul, mulh*, mulw */
    C_DIV,    /* div*, rem* */
    C_FP,     /* float arithmetic, conversion, comparison, moves */
    C_FDIV,   /* fdiv, fsqrt */
    C_BRANCH, /* conditional branches */
    C_JUMP,   /* jal, jalr (calls, returns, jumps) */
    C_OTHER,  /* system, fence, atomics, illegal */
    N_CLASSES
};

static const char *const class_names[N_CLASSES] = {
    "alu", "loads", "stores", "mul", "div", "fp", "fdiv", "branches", "jumps", "other",
};

/* Counter slots: one per class, then instructions, then the cycle estimate. */
enum { K_INSNS = N_CLASSES, K_CYCLES, N_COUNTERS };

struct decoded {
    int cls;
    int cost;
};

/* Running totals of the whole run (updated inline by translated code). */
static uint64_t totals[N_COUNTERS];
/* Totals at the last entry of _sysy_starttime, and the summed timed region. */
static uint64_t snapshot[N_COUNTERS];
static uint64_t timed[N_COUNTERS];
static uint64_t pairs;
static bool in_region;

static uint64_t start_addr, stop_addr;
static bool have_start, have_stop;
static char *out_path;

/* Special instruction data for blocks containing a marker address. */
struct marked_insn {
    struct decoded d;
    int marker; /* 0 none, 1 start, 2 stop */
};

static struct decoded make(int cls, int cost) {
    struct decoded d = {cls, cost};
    return d;
}

/* Decodes an OP-FP (opcode 0x53) instruction by funct5. */
static struct decoded decode_op_fp(uint32_t insn) {
    uint32_t funct5 = insn >> 27;
    switch (funct5) {
    case 0x03: /* fdiv */
    case 0x0b: /* fsqrt */
        return make(C_FDIV, 20);
    case 0x04: /* fsgnj, fsgnjn, fsgnjx (fmv, fneg, fabs) */
    case 0x1c: /* fmv.x.w, fclass */
    case 0x1e: /* fmv.w.x */
        return make(C_FP, 1);
    default:
        return make(C_FP, 4);
    }
}

/* Decodes a 32-bit instruction. */
static struct decoded decode32(uint32_t insn) {
    uint32_t opcode = insn & 0x7f;
    uint32_t funct3 = (insn >> 12) & 7;
    uint32_t funct7 = insn >> 25;
    switch (opcode) {
    case 0x03: /* LOAD */
    case 0x07: /* LOAD-FP */
        return make(C_LOAD, 3);
    case 0x23: /* STORE */
    case 0x27: /* STORE-FP */
        return make(C_STORE, 1);
    case 0x33: /* OP */
    case 0x3b: /* OP-32 */
        if (funct7 == 0x01) {
            return funct3 < 4 ? make(C_MUL, 3) : make(C_DIV, 20);
        }
        return make(C_ALU, 1);
    case 0x13: /* OP-IMM */
    case 0x1b: /* OP-IMM-32 */
    case 0x37: /* LUI */
    case 0x17: /* AUIPC */
        return make(C_ALU, 1);
    case 0x63: /* BRANCH */
        return make(C_BRANCH, 1);
    case 0x6f: /* JAL */
    case 0x67: /* JALR */
        return make(C_JUMP, 2);
    case 0x53: /* OP-FP */
        return decode_op_fp(insn);
    case 0x43: /* FMADD */
    case 0x47: /* FMSUB */
    case 0x4b: /* FNMSUB */
    case 0x4f: /* FNMADD */
        return make(C_FP, 4);
    default: /* SYSTEM, MISC-MEM, AMO, ... */
        return make(C_OTHER, 1);
    }
}

/* Decodes a 16-bit compressed instruction (RV64C). */
static struct decoded decode16(uint32_t insn) {
    uint32_t quadrant = insn & 3;
    uint32_t funct3 = (insn >> 13) & 7;
    if (quadrant == 0) {
        switch (funct3) {
        case 0: return make(C_ALU, 1);   /* c.addi4spn */
        case 1:                          /* c.fld */
        case 2:                          /* c.lw */
        case 3: return make(C_LOAD, 3);  /* c.ld */
        case 5:                          /* c.fsd */
        case 6:                          /* c.sw */
        case 7: return make(C_STORE, 1); /* c.sd */
        default: return make(C_OTHER, 1);
        }
    }
    if (quadrant == 1) {
        switch (funct3) {
        case 5: return make(C_JUMP, 2);   /* c.j */
        case 6:                           /* c.beqz */
        case 7: return make(C_BRANCH, 1); /* c.bnez */
        default: return make(C_ALU, 1);   /* c.addi, c.addiw, c.li, c.lui, c.sub, ... */
        }
    }
    /* quadrant 2 */
    switch (funct3) {
    case 0: return make(C_ALU, 1);   /* c.slli */
    case 1:                          /* c.fldsp */
    case 2:                          /* c.lwsp */
    case 3: return make(C_LOAD, 3);  /* c.ldsp */
    case 5:                          /* c.fsdsp */
    case 6:                          /* c.swsp */
    case 7: return make(C_STORE, 1); /* c.sdsp */
    default: {
        uint32_t bit12 = (insn >> 12) & 1;
        uint32_t rs1 = (insn >> 7) & 0x1f;
        uint32_t rs2 = (insn >> 2) & 0x1f;
        if (rs2 != 0) {
            return make(C_ALU, 1); /* c.mv, c.add */
        }
        if (bit12 && rs1 == 0) {
            return make(C_OTHER, 1); /* c.ebreak */
        }
        return make(C_JUMP, 2); /* c.jr, c.jalr */
    }
    }
}

static struct decoded decode(const struct qemu_plugin_insn *insn) {
    const uint8_t *bytes = qemu_plugin_insn_data(insn);
    size_t size = qemu_plugin_insn_size(insn);
    if (size == 2) {
        return decode16((uint32_t)bytes[0] | (uint32_t)bytes[1] << 8);
    }
    if (size == 4) {
        uint32_t word;
        memcpy(&word, bytes, 4); /* RISC-V and the x86 host are both little-endian */
        return decode32(word);
    }
    return make(C_OTHER, 1);
}

/* -------------------------------------------------------------- callbacks */

static void count_one(const struct decoded *d) {
    totals[d->cls]++;
    totals[K_INSNS]++;
    totals[K_CYCLES] += (uint64_t)d->cost;
}

/* Per-instruction callback used only in blocks that contain a marker address. */
static void marked_exec(unsigned int vcpu, void *udata) {
    (void)vcpu;
    const struct marked_insn *m = udata;
    if (m->marker == 1) {
        memcpy(snapshot, totals, sizeof totals);
        in_region = true;
    } else if (m->marker == 2 && in_region) {
        for (int k = 0; k < N_COUNTERS; k++) {
            timed[k] += totals[k] - snapshot[k];
        }
        pairs++;
        in_region = false;
    }
    count_one(&m->d);
}

static int marker_of(uint64_t vaddr) {
    if (have_start && vaddr == start_addr) {
        return 1;
    }
    if (have_stop && vaddr == stop_addr) {
        return 2;
    }
    return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    bool marked = false;
    for (size_t i = 0; i < n; i++) {
        if (marker_of(qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)))) {
            marked = true;
        }
    }
    if (marked) {
        for (size_t i = 0; i < n; i++) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            struct marked_insn *m = malloc(sizeof *m); /* lives as long as the block */
            m->d = decode(insn);
            m->marker = marker_of(qemu_plugin_insn_vaddr(insn));
            qemu_plugin_register_vcpu_insn_exec_cb(insn, marked_exec, QEMU_PLUGIN_CB_NO_REGS, m);
        }
        return;
    }
    uint64_t add[N_COUNTERS] = {0};
    for (size_t i = 0; i < n; i++) {
        struct decoded d = decode(qemu_plugin_tb_get_insn(tb, i));
        add[d.cls]++;
        add[K_CYCLES] += (uint64_t)d.cost;
    }
    add[K_INSNS] = n;
    for (int k = 0; k < N_COUNTERS; k++) {
        if (add[k]) {
            qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &totals[k], add[k]);
        }
    }
}

/* ----------------------------------------------------------------- report */

static const char *counter_name(int k) {
    if (k == K_INSNS) {
        return "insns";
    }
    if (k == K_CYCLES) {
        return "cycles";
    }
    return class_names[k];
}

static void write_report(FILE *f) {
    const uint64_t *t = pairs ? timed : totals;
    fprintf(f, "pairs %" PRIu64 "\n", pairs);
    for (int k = 0; k < N_COUNTERS; k++) {
        fprintf(f, "timed.%s %" PRIu64 "\n", counter_name(k), t[k]);
    }
    for (int k = 0; k < N_COUNTERS; k++) {
        fprintf(f, "total.%s %" PRIu64 "\n", counter_name(k), totals[k]);
    }
}

static void at_exit(qemu_plugin_id_t id, void *udata) {
    (void)id;
    (void)udata;
    FILE *f = out_path ? fopen(out_path, "w") : NULL;
    if (f) {
        write_report(f);
        fclose(f);
        return;
    }
    /* No usable out= file: report on qemu's stderr instead. */
    write_report(stderr);
}

static bool parse_addr(const char *s, uint64_t *out) {
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end != '\0') {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "out=", 4) == 0) {
            out_path = strdup(a + 4);
        } else if (strncmp(a, "start=", 6) == 0) {
            have_start = parse_addr(a + 6, &start_addr);
            if (!have_start) {
                fprintf(stderr, "insn_count: bad address in %s\n", a);
                return -1;
            }
        } else if (strncmp(a, "stop=", 5) == 0) {
            have_stop = parse_addr(a + 5, &stop_addr);
            if (!have_stop) {
                fprintf(stderr, "insn_count: bad address in %s\n", a);
                return -1;
            }
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", a);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
