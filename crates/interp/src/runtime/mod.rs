//! The SysY runtime library, implemented natively (same behaviour as the project's
//! `runtime/sylib.c` linked with compiled programs): calls to declared, body-less
//! functions with these names run here instead of in IR.

pub(crate) mod hexfloat;
pub(crate) mod printf;
pub(crate) mod scan;
pub(crate) mod timer;

use crate::error::ErrorKind;
use crate::memory::Memory;
use ir::Type;
use scan::Input;
use std::io::Write;
use timer::Timers;

/// A runtime function.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Builtin {
    GetInt,
    GetCh,
    GetFloat,
    GetArray,
    GetFArray,
    PutInt,
    PutCh,
    PutFloat,
    PutArray,
    PutFArray,
    PutF,
    StartTime,
    StopTime,
    /// C's `memset(ptr, byte, size_t len)`, which the loop idiom pass calls.
    MemSet,
}

impl Builtin {
    /// The runtime function called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "getint" => Builtin::GetInt,
            "getch" => Builtin::GetCh,
            "getfloat" => Builtin::GetFloat,
            "getarray" => Builtin::GetArray,
            "getfarray" => Builtin::GetFArray,
            "putint" => Builtin::PutInt,
            "putch" => Builtin::PutCh,
            "putfloat" => Builtin::PutFloat,
            "putarray" => Builtin::PutArray,
            "putfarray" => Builtin::PutFArray,
            "putf" => Builtin::PutF,
            "_sysy_starttime" => Builtin::StartTime,
            "_sysy_stoptime" => Builtin::StopTime,
            "memset" => Builtin::MemSet,
            _ => return None,
        })
    }

    /// Number of fixed arguments (`putf` takes any number more).
    pub fn arity(self) -> usize {
        match self {
            Builtin::GetInt | Builtin::GetCh | Builtin::GetFloat => 0,
            Builtin::GetArray | Builtin::GetFArray => 1,
            Builtin::PutInt | Builtin::PutCh | Builtin::PutFloat => 1,
            Builtin::PutArray | Builtin::PutFArray => 2,
            Builtin::PutF => 1,
            Builtin::StartTime | Builtin::StopTime => 1,
            Builtin::MemSet => 3,
        }
    }

    pub fn is_variadic(self) -> bool {
        self == Builtin::PutF
    }
}

/// Flush the stdout buffer to the real writer once it holds this much.
const FLUSH_AT: usize = 1 << 16;

/// I/O state of a run: stdin, buffered stdout, timers.
pub(crate) struct Runtime<'io> {
    pub input: Input<'io>,
    out: Vec<u8>,
    stdout: &'io mut dyn Write,
    pub timers: Timers,
}

fn io_err(e: std::io::Error) -> ErrorKind {
    ErrorKind::Io(e.to_string())
}

impl<'io> Runtime<'io> {
    pub fn new(
        stdin: &'io mut dyn std::io::Read,
        stdout: &'io mut dyn Write,
        wall_clock: bool,
    ) -> Self {
        Runtime {
            input: Input::new(stdin),
            out: Vec::with_capacity(FLUSH_AT * 2),
            stdout,
            timers: Timers::new(wall_clock),
        }
    }

    /// Writes buffered output to the real stdout.
    pub fn flush(&mut self) -> Result<(), ErrorKind> {
        self.stdout.write_all(&self.out).map_err(io_err)?;
        self.out.clear();
        self.stdout.flush().map_err(io_err)
    }

    /// Runs `b` with argument register values `args` (of IR types `types`); returns
    /// the result register value (0 for void functions).
    pub fn call(
        &mut self,
        b: Builtin,
        args: &[u64],
        types: &[Type],
        mem: &mut Memory,
    ) -> Result<u64, ErrorKind> {
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        let result = match b {
            Builtin::GetInt => self.input.scan_int().unwrap_or(0) as u32 as u64,
            Builtin::GetCh => match self.input.next_byte() {
                // RV64 `char` is unsigned.
                Some(c) => c as u64,
                None => -1i32 as u32 as u64,
            },
            Builtin::GetFloat => self.input.scan_float().unwrap_or(0.0).to_bits() as u64,
            Builtin::GetArray | Builtin::GetFArray => {
                let n = self.input.scan_int().unwrap_or(0);
                let base = arg(0);
                for i in 0..n.max(0) as u64 {
                    let bits = if b == Builtin::GetArray {
                        self.input.scan_int().unwrap_or(0) as u32
                    } else {
                        self.input.scan_float().unwrap_or(0.0).to_bits()
                    };
                    mem.store32(base.wrapping_add(i * 4), bits)?;
                }
                n as u32 as u64
            }
            Builtin::PutInt => {
                let _ = write!(self.out, "{}", arg(0) as i32);
                0
            }
            Builtin::PutCh => {
                self.out.push(arg(0) as u8);
                0
            }
            Builtin::PutFloat => {
                let s = hexfloat::putfloat_text(f32::from_bits(arg(0) as u32));
                self.out.extend_from_slice(s.as_bytes());
                0
            }
            Builtin::PutArray | Builtin::PutFArray => {
                let n = arg(0) as i32;
                let base = arg(1);
                let _ = write!(self.out, "{n}:");
                for i in 0..n.max(0) as u64 {
                    let bits = mem.load32(base.wrapping_add(i * 4))?;
                    if b == Builtin::PutArray {
                        let _ = write!(self.out, " {}", bits as i32);
                    } else {
                        self.out.push(b' ');
                        let s = hexfloat::putfloat_text(f32::from_bits(bits));
                        self.out.extend_from_slice(s.as_bytes());
                    }
                }
                self.out.push(b'\n');
                0
            }
            Builtin::PutF => {
                let fmt = mem.c_string(arg(0))?;
                // Variadic arguments as RV64 passes them: ints sign-extended,
                // floats promoted to double.
                let varargs: Vec<u64> = args
                    .iter()
                    .zip(types)
                    .skip(1)
                    .map(|(&v, &ty)| match ty {
                        Type::F32 => hexfloat::f32_to_f64_riscv(f32::from_bits(v as u32)).to_bits(),
                        Type::I32 => v as i32 as i64 as u64,
                        Type::I8 => v as u8 as u64,
                        _ => v,
                    })
                    .collect();
                printf::format(&fmt, &varargs, mem, &mut self.out)?;
                0
            }
            Builtin::StartTime => {
                self.timers.start(arg(0) as i32);
                0
            }
            Builtin::StopTime => {
                self.timers.stop(arg(0) as i32);
                0
            }
            Builtin::MemSet => {
                mem.fill(arg(0), arg(2), arg(1) as u8)?;
                arg(0)
            }
        };
        if let Some(e) = self.input.error.take() {
            return Err(ErrorKind::Io(format!("reading stdin: {e}")));
        }
        if self.out.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(result)
    }
}
