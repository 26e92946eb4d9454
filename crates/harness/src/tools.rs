//! Locating the external tools: the RISC-V cross compiler and qemu user mode.
//!
//! Each tool can be overridden by an environment variable (`SYSY_CC`,
//! `SYSY_QEMU`); otherwise it is searched on `PATH`.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};

/// A required external program that could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Program name searched for.
    pub tool: String,
    /// How to get it.
    pub hint: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` not found on PATH ({})", self.tool, self.hint)
    }
}

impl std::error::Error for ToolError {}

/// The cross toolchain used to link and run SysY programs.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// `riscv64-linux-gnu-gcc` (assembler, linker, C compiler for the runtime).
    pub cc: PathBuf,
    /// `qemu-riscv64` (user-mode emulator).
    pub qemu: PathBuf,
}

impl Toolchain {
    /// Finds both tools, or says which one is missing and how to install it.
    pub fn find() -> Result<Toolchain, ToolError> {
        let cc = find_tool(
            "SYSY_CC",
            "riscv64-linux-gnu-gcc",
            "apt-get install gcc-riscv64-linux-gnu",
        )?;
        let qemu = find_tool("SYSY_QEMU", "qemu-riscv64", "apt-get install qemu-user")?;
        Ok(Toolchain { cc, qemu })
    }
}

/// Finds `name`, honouring the override variable `var` first.
pub fn find_tool(var: &str, name: &str, hint: &str) -> Result<PathBuf, ToolError> {
    if let Some(p) = env::var_os(var) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
    }
    which(name).ok_or_else(|| ToolError {
        tool: name.to_string(),
        hint: hint.to_string(),
    })
}

/// Searches `PATH` for an executable file called `name`.
pub fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return is_executable(p).then(|| p.to_path_buf());
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_not_nonsense() {
        assert!(which("sh").is_some());
        assert!(which("definitely-not-a-tool-xyz").is_none());
        let err = find_tool("SYSY_NOPE", "definitely-not-a-tool-xyz", "install it").unwrap_err();
        assert!(err.to_string().contains("definitely-not-a-tool-xyz"));
    }
}
