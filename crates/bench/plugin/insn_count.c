/*
 * insn_count.c - QEMU TCG plugin (QEMU 7.2, plugin API version 1) counting the
 * RISC-V instructions a program executes, by class, with a cycle estimate.
 *
 * Arguments (`-plugin insn_count.so,out=FILE,start=ADDR,stop=ADDR`):
 *   out=FILE    where to write the counts at exit (default: qemu's log, stderr)
 *   start=ADDR  entry address of _sysy_starttime (optional)
 *   stop=ADDR   entry address of _sysy_stoptime (optional)
 *   profile=FILE  also write a per-block profile of the whole run (optional):
 *               one line per translation block that ran, by U74 cycles spent,
 *               `vaddr insns execs u74-per-exec u74-total shares`, where
 *               shares are each instruction's cycles of one execution
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

/* Counter slots: one per class, then instructions, the simple cycle estimate and
 * the dependence-aware U74 estimate. */
enum { K_INSNS = N_CLASSES, K_CYCLES, K_U74, N_COUNTERS };

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
static char *profile_path;

/* One translated block, for profile=: where it starts, its U74 cycles per
 * execution and each instruction's share of them, and how often it ran. */
struct tb_profile {
    uint64_t vaddr;
    uint64_t execs;
    size_t n;
    uint64_t u74;
    int *share;
    struct tb_profile *next;
};
static struct tb_profile *profiles;

/* Special instruction data for blocks containing a marker address. */
struct marked_insn {
    struct decoded d;
    int marker; /* 0 none, 1 start, 2 stop */
    int u74;    /* this instruction's share of its block's U74 cycles */
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

/* ------------------------------------------ dependence-aware U74 estimate */

/*
 * A model of the SiFive U74 (in-order, dual issue), evaluated once per
 * translation block when it is translated:
 *   - instructions issue in program order, at most two per cycle; pipe A takes
 *     memory ops, pipe B branches, jumps, mul/div and FP; ALU ops take either;
 *   - a register scoreboard: every register is ready at block entry; a result is
 *     ready `early` cycles after issue for an address, multiply, divide or FP
 *     operand and `late` cycles after for an ALU op, branch or store data;
 *   - an ALU op or branch whose operands are not early-ready but late-ready
 *     issues anyway and runs two stages later (the late ALU): its own result is
 *     then early-ready only after 3 cycles;
 *   - divides and FP divides / square roots occupy their unit until done;
 *   - each branch or jump costs one more cycle (no prediction);
 *   - a block whose last instruction branches back to its own start (a one-block
 *     loop) is charged its steady state: the cost of a second iteration that
 *     starts with the first iteration's scoreboard.
 * Results still in flight when a block ends with a branch or jump are not
 * charged to any block (the next one starts with every register ready); a block
 * that ends without one (QEMU split straight-line code at a page boundary or its
 * size limit) is charged until its results are ready for an ALU operand and its
 * units are free, as the instruction after it would wait.
 */

enum pipe { P_ANY, P_A, P_B };
enum use_kind { U_EARLY, U_LATE };

#define NO_REG (-1)
#define N_REGS 64 /* x0..x31, then f0..f31 */

struct sched_insn {
    int pipe;
    int rd;            /* written register or NO_REG */
    int src[3];        /* read registers or NO_REG */
    int kind[3];       /* U_EARLY or U_LATE per source */
    int early, late;   /* result latencies */
    int alu;           /* may run late (ALU op or branch) */
    int unit_busy;     /* cycles an unpipelined unit stays busy (0: pipelined) */
    int unit;          /* 1 integer divider, 2 FP divider */
    int control;       /* branch or jump */
    uint64_t target;   /* branch / jal target, 0 when unknown */
};

static int xr(uint32_t n) { return n == 0 ? NO_REG : (int)n; } /* x0 is never waited on */
static int fr(uint32_t n) { return 32 + (int)n; }

static struct sched_insn sinsn(int pipe, int rd, int early, int late) {
    struct sched_insn s;
    memset(&s, 0, sizeof s);
    s.pipe = pipe;
    s.rd = rd;
    s.src[0] = s.src[1] = s.src[2] = NO_REG;
    s.early = early;
    s.late = late;
    return s;
}

static void src(struct sched_insn *s, int k, int reg, int kind) {
    s->src[k] = reg;
    s->kind[k] = kind;
}

static struct sched_insn alu1(int rd, int rs1, int rs2) {
    struct sched_insn s = sinsn(P_ANY, rd, 1, 1);
    s.alu = 1;
    src(&s, 0, rs1, U_LATE);
    src(&s, 1, rs2, U_LATE);
    return s;
}

static struct sched_insn load(int rd, int base, int fp) {
    struct sched_insn s = fp ? sinsn(P_A, rd, 2, 2) : sinsn(P_A, rd, 3, 1);
    src(&s, 0, base, U_EARLY);
    return s;
}

static struct sched_insn store(int base, int data) {
    struct sched_insn s = sinsn(P_A, NO_REG, 0, 0);
    src(&s, 0, base, U_EARLY);
    src(&s, 1, data, U_LATE);
    return s;
}

static struct sched_insn branch(int rs1, int rs2, uint64_t target) {
    struct sched_insn s = sinsn(P_B, NO_REG, 0, 0);
    s.alu = 1;
    s.control = 1;
    s.target = target;
    src(&s, 0, rs1, U_LATE);
    src(&s, 1, rs2, U_LATE);
    return s;
}

static struct sched_insn jump(int rd, int rs1, uint64_t target) {
    struct sched_insn s = sinsn(P_B, rd, 1, 1);
    s.control = 1;
    s.target = target;
    src(&s, 0, rs1, U_EARLY);
    return s;
}

static int64_t sext(uint64_t v, int bits) {
    return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static struct sched_insn fp_op(uint32_t insn) {
    uint32_t rd = (insn >> 7) & 31, rs1 = (insn >> 15) & 31, rs2 = (insn >> 20) & 31;
    uint32_t funct5 = insn >> 27;
    int dbl = ((insn >> 25) & 3) == 1;
    struct sched_insn s;
    switch (funct5) {
    case 0x00: case 0x01: case 0x02: /* fadd, fsub, fmul */
        s = sinsn(P_B, fr(rd), dbl ? 7 : 5, dbl ? 7 : 5);
        src(&s, 0, fr(rs1), U_EARLY);
        src(&s, 1, fr(rs2), U_EARLY);
        return s;
    case 0x03: case 0x0b: /* fdiv, fsqrt */
        s = sinsn(P_B, fr(rd), dbl ? 56 : 27, dbl ? 56 : 27);
        s.unit = 2;
        s.unit_busy = dbl ? 56 : 27;
        src(&s, 0, fr(rs1), U_EARLY);
        if (funct5 == 0x03) {
            src(&s, 1, fr(rs2), U_EARLY);
        }
        return s;
    case 0x14: /* feq, flt, fle */
        s = sinsn(P_B, xr(rd), 2, 2);
        src(&s, 0, fr(rs1), U_EARLY);
        src(&s, 1, fr(rs2), U_EARLY);
        return s;
    case 0x18: /* fcvt.w[u].s/d, fcvt.l[u].s/d */
    case 0x1c: /* fmv.x.w, fmv.x.d, fclass */
        s = sinsn(P_B, xr(rd), 2, 2);
        src(&s, 0, fr(rs1), U_EARLY);
        return s;
    case 0x1a: /* fcvt.s/d.w[u]/l[u] */
    case 0x1e: /* fmv.w.x, fmv.d.x */
        s = sinsn(P_B, fr(rd), 3, 3);
        src(&s, 0, xr(rs1), U_EARLY);
        return s;
    case 0x08: /* fcvt.s.d, fcvt.d.s */
        s = sinsn(P_B, fr(rd), 3, 3);
        src(&s, 0, fr(rs1), U_EARLY);
        return s;
    default: /* fsgnj*, fmin, fmax */
        s = sinsn(P_B, fr(rd), 3, 3);
        src(&s, 0, fr(rs1), U_EARLY);
        src(&s, 1, fr(rs2), U_EARLY);
        return s;
    }
}

static struct sched_insn sched32(uint32_t insn, uint64_t pc) {
    uint32_t opcode = insn & 0x7f, funct3 = (insn >> 12) & 7, funct7 = insn >> 25;
    uint32_t rd = (insn >> 7) & 31, rs1 = (insn >> 15) & 31, rs2 = (insn >> 20) & 31;
    struct sched_insn s;
    switch (opcode) {
    case 0x03: return load(xr(rd), xr(rs1), 0);
    case 0x07: return load(fr(rd), xr(rs1), 1);
    case 0x23: return store(xr(rs1), xr(rs2));
    case 0x27: return store(xr(rs1), fr(rs2));
    case 0x33:
    case 0x3b:
        if (funct7 == 0x01 && funct3 < 4) { /* mul */
            s = sinsn(P_B, xr(rd), 3, 1);
        } else if (funct7 == 0x01) { /* div, rem */
            s = sinsn(P_B, xr(rd), 20, 18);
            s.unit = 1;
            s.unit_busy = 20;
        } else {
            return alu1(xr(rd), xr(rs1), xr(rs2));
        }
        src(&s, 0, xr(rs1), U_EARLY);
        src(&s, 1, xr(rs2), U_EARLY);
        return s;
    case 0x13:
    case 0x1b: return alu1(xr(rd), xr(rs1), NO_REG);
    case 0x37:
    case 0x17: return alu1(xr(rd), NO_REG, NO_REG);
    case 0x63: {
        uint64_t imm = ((insn >> 31) & 1) << 12 | ((insn >> 7) & 1) << 11 |
                       ((insn >> 25) & 0x3f) << 5 | ((insn >> 8) & 0xf) << 1;
        return branch(xr(rs1), xr(rs2), pc + (uint64_t)sext(imm, 13));
    }
    case 0x6f: {
        uint64_t imm = ((insn >> 31) & 1) << 20 | ((insn >> 12) & 0xff) << 12 |
                       ((insn >> 20) & 1) << 11 | ((insn >> 21) & 0x3ff) << 1;
        return jump(xr(rd), NO_REG, pc + (uint64_t)sext(imm, 21));
    }
    case 0x67: return jump(xr(rd), xr(rs1), 0);
    case 0x53: return fp_op(insn);
    case 0x43: case 0x47: case 0x4b: case 0x4f: { /* fused multiply-add */
        int dbl = ((insn >> 25) & 3) == 1;
        s = sinsn(P_B, fr(rd), dbl ? 7 : 5, dbl ? 7 : 5);
        src(&s, 0, fr(rs1), U_EARLY);
        src(&s, 1, fr(rs2), U_EARLY);
        src(&s, 2, fr(insn >> 27), U_EARLY);
        return s;
    }
    case 0x2f: /* atomics: a memory op reading rs1, rs2 and writing rd */
        s = sinsn(P_A, xr(rd), 3, 1);
        src(&s, 0, xr(rs1), U_EARLY);
        src(&s, 1, xr(rs2), U_LATE);
        return s;
    default:
        return sinsn(P_ANY, NO_REG, 1, 1);
    }
}

static struct sched_insn sched16(uint32_t insn, uint64_t pc) {
    uint32_t quadrant = insn & 3, funct3 = (insn >> 13) & 7;
    uint32_t r = (insn >> 7) & 31, r2 = (insn >> 2) & 31;
    int rp1 = 8 + (int)((insn >> 7) & 7), rp2 = 8 + (int)((insn >> 2) & 7);
    if (quadrant == 0) {
        switch (funct3) {
        case 0: return alu1(rp2, 2, NO_REG);      /* c.addi4spn */
        case 1: return load(fr(rp2 & 31), rp1, 1); /* c.fld */
        case 2:
        case 3: return load(rp2, rp1, 0);          /* c.lw, c.ld */
        case 5: return store(rp1, fr(rp2 & 31));   /* c.fsd */
        case 6:
        case 7: return store(rp1, rp2);            /* c.sw, c.sd */
        default: return sinsn(P_ANY, NO_REG, 1, 1);
        }
    }
    if (quadrant == 1) {
        switch (funct3) {
        case 0:
        case 1: return alu1(xr(r), xr(r), NO_REG); /* c.addi, c.addiw */
        case 2: return alu1(xr(r), NO_REG, NO_REG); /* c.li */
        case 3: return r == 2 ? alu1(2, 2, NO_REG) : alu1(xr(r), NO_REG, NO_REG);
        case 4:
            if (((insn >> 10) & 3) != 3) {
                return alu1(rp1, rp1, NO_REG); /* c.srli, c.srai, c.andi */
            }
            return alu1(rp1, rp1, rp2); /* c.sub, c.xor, c.or, c.and, c.subw, c.addw */
        case 5: {
            uint64_t imm = ((insn >> 12) & 1) << 11 | ((insn >> 11) & 1) << 4 |
                           ((insn >> 9) & 3) << 8 | ((insn >> 8) & 1) << 10 |
                           ((insn >> 7) & 1) << 6 | ((insn >> 6) & 1) << 7 |
                           ((insn >> 3) & 7) << 1 | ((insn >> 2) & 1) << 5;
            return jump(NO_REG, NO_REG, pc + (uint64_t)sext(imm, 12)); /* c.j */
        }
        default: {
            uint64_t imm = ((insn >> 12) & 1) << 8 | ((insn >> 10) & 3) << 3 |
                           ((insn >> 5) & 3) << 6 | ((insn >> 3) & 3) << 1 |
                           ((insn >> 2) & 1) << 5;
            return branch(rp1, NO_REG, pc + (uint64_t)sext(imm, 9)); /* c.beqz, c.bnez */
        }
        }
    }
    switch (funct3) {
    case 0: return alu1(xr(r), xr(r), NO_REG);  /* c.slli */
    case 1: return load(fr(r), 2, 1);           /* c.fldsp */
    case 2:
    case 3: return load(xr(r), 2, 0);           /* c.lwsp, c.ldsp */
    case 5: return store(2, fr(r2));            /* c.fsdsp */
    case 6:
    case 7: return store(2, xr(r2));            /* c.swsp, c.sdsp */
    default:
        if (((insn >> 12) & 1) == 0) {
            return r2 == 0 ? jump(NO_REG, xr(r), 0) : alu1(xr(r), xr(r2), NO_REG); /* c.jr, c.mv */
        }
        if (r2 != 0) {
            return alu1(xr(r), xr(r), xr(r2)); /* c.add */
        }
        return r == 0 ? sinsn(P_ANY, NO_REG, 1, 1) : jump(1, xr(r), 0); /* c.ebreak, c.jalr */
    }
}

static struct sched_insn sched_decode(const struct qemu_plugin_insn *insn) {
    const uint8_t *bytes = qemu_plugin_insn_data(insn);
    size_t size = qemu_plugin_insn_size(insn);
    uint64_t pc = qemu_plugin_insn_vaddr(insn);
    if (size == 2) {
        return sched16((uint32_t)bytes[0] | (uint32_t)bytes[1] << 8, pc);
    }
    if (size == 4) {
        uint32_t word;
        memcpy(&word, bytes, 4);
        return sched32(word, pc);
    }
    return sinsn(P_ANY, NO_REG, 1, 1);
}

/* The scoreboard and issue state carried through a block (and, for a one-block
 * loop, into its second iteration). */
struct machine {
    int64_t early[N_REGS], late[N_REGS]; /* cycle a register is ready, per use kind */
    int64_t unit_free[3];                /* cycle each unpipelined unit is free */
    int64_t cycle;                       /* cycle of the last issue */
    int slots;                           /* instructions issued in `cycle` */
    int first_pipe;                      /* pipe of the first instruction in `cycle` */
    int64_t next_min;                    /* earliest cycle for the next issue */
};

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Issues `s`, returning its issue cycle. */
static int64_t issue(struct machine *m, const struct sched_insn *s) {
    int64_t t = max64(m->cycle, m->next_min);
    /* Every operand's early readiness, and what each operand needs by its kind. */
    int64_t early_all = 0, need = 0, late_all = 0;
    for (int k = 0; k < 3; k++) {
        int r = s->src[k];
        if (r == NO_REG) {
            continue;
        }
        early_all = max64(early_all, m->early[r]);
        late_all = max64(late_all, m->late[r]);
        need = max64(need, s->kind[k] == U_EARLY ? m->early[r] : m->late[r]);
    }
    /* The late ALU only waits for late readiness. */
    t = max64(t, s->alu ? late_all : need);
    if (s->unit) {
        t = max64(t, m->unit_free[s->unit]);
    }
    /* Dual issue: a second instruction in the same cycle needs a free pipe. */
    if (t == m->cycle && m->slots > 0) {
        int clash = m->slots >= 2 || (s->pipe != P_ANY && s->pipe == m->first_pipe);
        if (clash) {
            t++;
        }
    }
    int ran_late = s->alu && early_all > t;
    if (t != m->cycle || m->slots == 0) {
        m->cycle = t;
        m->slots = 0;
        m->first_pipe = s->pipe;
    }
    m->slots++;
    if (s->unit) {
        m->unit_free[s->unit] = t + s->unit_busy;
    }
    if (s->rd != NO_REG) {
        m->early[s->rd] = t + (ran_late ? 3 : s->early);
        m->late[s->rd] = t + s->late;
    }
    if (s->control) {
        m->next_min = t + 2; /* one bubble cycle per branch or jump */
    }
    return t;
}

/* End of the block: the cycle after the last issue, plus a branch's bubble. */
static int64_t block_end(const struct machine *m) {
    return max64(m->cycle + 1, m->next_min);
}

/* The U74 cycles of one execution of `tb`; `share[i]` receives instruction i's
 * part of it (summing to the total). */
static uint64_t u74_block_cycles(struct qemu_plugin_tb *tb, int *share) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (n == 0) {
        return 0;
    }
    struct sched_insn *s = malloc(n * sizeof *s);
    for (size_t i = 0; i < n; i++) {
        s[i] = sched_decode(qemu_plugin_tb_get_insn(tb, i));
    }
    struct machine m;
    memset(&m, 0, sizeof m);
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t t = issue(&m, &s[i]);
        share[i] = (int)(t - prev);
        prev = t;
    }
    int64_t end = block_end(&m);
    share[n - 1] += (int)(end - prev);
    if (!s[n - 1].control) {
        /* QEMU split the code here (a page boundary, its block size limit) or
         * the block ends at a system instruction: the next instruction follows
         * at once and may wait for a result still in flight, but the next block
         * starts with every register ready. Charge the results' readiness for an
         * ALU operand and the busy units here instead (a loop split in two
         * still misses the latency carried round its back edge). */
        int64_t flight = end;
        for (int r = 0; r < N_REGS; r++) {
            flight = max64(flight, m.late[r]);
        }
        for (int u = 0; u < 3; u++) {
            flight = max64(flight, m.unit_free[u]);
        }
        share[n - 1] += (int)(flight - end);
        end = flight;
    }
    uint64_t start = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
    if (s[n - 1].control && s[n - 1].target == start) {
        /* One-block loop: charge the second iteration, which starts at `end` with
         * the first one's scoreboard. */
        m.cycle = end;
        m.slots = 0;
        m.next_min = end;
        prev = end;
        for (size_t i = 0; i < n; i++) {
            int64_t t = issue(&m, &s[i]);
            share[i] = (int)(t - prev);
            prev = t;
        }
        int64_t end2 = block_end(&m);
        share[n - 1] += (int)(end2 - prev);
        end = end2 - end;
    }
    free(s);
    return (uint64_t)end;
}

/* -------------------------------------------------------------- callbacks */

static void count_one(const struct marked_insn *m) {
    totals[m->d.cls]++;
    totals[K_INSNS]++;
    totals[K_CYCLES] += (uint64_t)m->d.cost;
    totals[K_U74] += (uint64_t)m->u74;
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
    count_one(m);
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
    int *share = calloc(n ? n : 1, sizeof *share);
    uint64_t u74 = u74_block_cycles(tb, share);
    if (profile_path && n > 0) {
        struct tb_profile *p = calloc(1, sizeof *p); /* lives to the end of the run */
        p->vaddr = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
        p->n = n;
        p->u74 = u74;
        p->share = malloc(n * sizeof *p->share);
        memcpy(p->share, share, n * sizeof *share);
        p->next = profiles;
        profiles = p;
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &p->execs, 1);
    }
    if (marked) {
        for (size_t i = 0; i < n; i++) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            struct marked_insn *m = malloc(sizeof *m); /* lives as long as the block */
            m->d = decode(insn);
            m->marker = marker_of(qemu_plugin_insn_vaddr(insn));
            m->u74 = share[i];
            qemu_plugin_register_vcpu_insn_exec_cb(insn, marked_exec, QEMU_PLUGIN_CB_NO_REGS, m);
        }
        free(share);
        return;
    }
    free(share);
    uint64_t add[N_COUNTERS] = {0};
    for (size_t i = 0; i < n; i++) {
        struct decoded d = decode(qemu_plugin_tb_get_insn(tb, i));
        add[d.cls]++;
        add[K_CYCLES] += (uint64_t)d.cost;
    }
    add[K_INSNS] = n;
    add[K_U74] = u74;
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
    if (k == K_U74) {
        return "u74";
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

/* Blocks translated again (same start and length) are merged; most cycles first. */
static int by_block(const void *a, const void *b) {
    const struct tb_profile *x = *(struct tb_profile *const *)a, *y = *(struct tb_profile *const *)b;
    if (x->vaddr != y->vaddr) {
        return x->vaddr < y->vaddr ? -1 : 1;
    }
    return x->n < y->n ? -1 : x->n > y->n;
}

static int by_cycles(const void *a, const void *b) {
    const struct tb_profile *x = *(struct tb_profile *const *)a, *y = *(struct tb_profile *const *)b;
    uint64_t cx = x->execs * x->u74, cy = y->execs * y->u74;
    if (cx != cy) {
        return cx > cy ? -1 : 1;
    }
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static void write_profile(FILE *f) {
    size_t count = 0;
    for (struct tb_profile *p = profiles; p; p = p->next) {
        count++;
    }
    struct tb_profile **all = malloc((count ? count : 1) * sizeof *all);
    size_t k = 0;
    for (struct tb_profile *p = profiles; p; p = p->next) {
        all[k++] = p;
    }
    qsort(all, count, sizeof *all, by_block);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (kept > 0 && by_block(&all[kept - 1], &all[i]) == 0) {
            all[kept - 1]->execs += all[i]->execs;
        } else {
            all[kept++] = all[i];
        }
    }
    qsort(all, kept, sizeof *all, by_cycles);
    fprintf(f, "# vaddr insns execs u74-per-exec u74-total shares\n");
    for (size_t i = 0; i < kept; i++) {
        const struct tb_profile *p = all[i];
        if (p->execs == 0) {
            continue;
        }
        fprintf(f, "0x%" PRIx64 " %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " ", p->vaddr, p->n,
                p->execs, p->u74, p->execs * p->u74);
        for (size_t j = 0; j < p->n; j++) {
            fprintf(f, j ? ",%d" : "%d", p->share[j]);
        }
        fprintf(f, "\n");
    }
    free(all);
}

static void at_exit(qemu_plugin_id_t id, void *udata) {
    (void)id;
    (void)udata;
    if (profile_path) {
        FILE *pf = fopen(profile_path, "w");
        if (pf) {
            write_profile(pf);
            fclose(pf);
        } else {
            fprintf(stderr, "insn_count: cannot write %s\n", profile_path);
        }
    }
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
        } else if (strncmp(a, "profile=", 8) == 0) {
            profile_path = strdup(a + 8);
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
