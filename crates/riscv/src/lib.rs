//! riscv
