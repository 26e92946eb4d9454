//! The flat byte memory of an interpreted program. Addresses are byte offsets into
//! one `Vec<u8>`: the first [`NULL_GUARD`] bytes are never valid (so null and small
//! garbage pointers trap), globals follow (zero-filled in bulk, then the explicit
//! initialisers written), and the stack for `alloc` grows upward after them, one
//! frame per call, released on return. Every access is bounds-checked against the
//! live region `[NULL_GUARD, sp)`.

use crate::error::ErrorKind;
use ir::{GlobalInit, Module};

/// Addresses below this are invalid.
pub const NULL_GUARD: u64 = 4096;

/// Alignment of every global and every `alloc` (enough for pointers).
pub(crate) const ALIGN: u64 = 8;

/// Rounds `x` up to a multiple of `align` (a power of two), saturating.
pub(crate) fn align_up(x: u64, align: u64) -> u64 {
    x.saturating_add(align - 1) & !(align - 1)
}

/// Where each global lives and where the stack starts.
pub(crate) struct GlobalLayout {
    /// Address of each global, indexed by `GlobalId`.
    pub addrs: Vec<u64>,
    /// First address after the globals (16-byte aligned): the stack base.
    pub end: u64,
}

/// Assigns addresses to the globals of `m`, in declaration order.
pub(crate) fn layout_globals(m: &Module, max_bytes: u64) -> Result<GlobalLayout, ErrorKind> {
    let mut addr = NULL_GUARD;
    let mut addrs = Vec::with_capacity(m.globals.len());
    for (_, g) in m.globals.iter() {
        addr = align_up(addr, ALIGN);
        addrs.push(addr);
        addr = addr.saturating_add(g.size());
        if addr > max_bytes {
            return Err(ErrorKind::InvalidIr(format!(
                "globals need more than {max_bytes} bytes"
            )));
        }
    }
    // At least 8 bytes past the guard, so the bounds check below cannot underflow.
    Ok(GlobalLayout {
        addrs,
        end: align_up(addr.max(NULL_GUARD + 8), 16),
    })
}

/// The program's memory.
pub(crate) struct Memory {
    bytes: Vec<u8>,
    /// End of the live stack: valid addresses are `[NULL_GUARD, sp)`.
    pub sp: u64,
    /// Where the stack starts (the end of the globals).
    stack_base: u64,
    /// Highest value `sp` may take (the backing vector never grows beyond it).
    max_sp: u64,
    /// When non-zero, stack bytes claimed by a call are first set to this.
    pub fresh_byte: u8,
}

impl Memory {
    /// A memory holding `m`'s initialised globals (laid out by `layout`), with an
    /// empty stack that may grow up to `stack_bytes`.
    pub fn new(m: &Module, layout: &GlobalLayout, stack_bytes: u64) -> Memory {
        let mut bytes = vec![0u8; layout.end as usize];
        for ((_, g), &addr) in m.globals.iter().zip(&layout.addrs) {
            let at = addr as usize;
            let size = g.size() as usize;
            match &g.init {
                GlobalInit::Zero => {}
                GlobalInit::Bytes(b) => {
                    let n = b.len().min(size);
                    bytes[at..at + n].copy_from_slice(&b[..n]);
                }
                GlobalInit::Words(words) => {
                    let esize = g.elem.size() as usize;
                    if esize == 0 {
                        continue;
                    }
                    for (i, &w) in words.iter().take(size / esize).enumerate() {
                        let p = at + i * esize;
                        let le = (w as u64).to_le_bytes();
                        bytes[p..p + esize].copy_from_slice(&le[..esize]);
                    }
                }
            }
        }
        Memory {
            bytes,
            sp: layout.end,
            stack_base: layout.end,
            max_sp: layout.end.saturating_add(stack_bytes),
            fresh_byte: 0,
        }
    }

    /// Moves the stack end to `new_sp`, growing the backing store when needed.
    /// Fails when the stack would exceed its limit.
    #[inline]
    pub fn set_sp(&mut self, new_sp: u64) -> Result<(), ()> {
        if new_sp > self.bytes.len() as u64 {
            if new_sp > self.max_sp {
                return Err(());
            }
            // Double the stack part (not the globals), at least 1 MiB at a time.
            let stack_len = self.bytes.len() as u64 - self.stack_base;
            let grown = self.stack_base + (stack_len * 2).max(1 << 20);
            let want = new_sp.max(grown).min(self.max_sp);
            self.bytes.resize(want as usize, 0);
        }
        if self.fresh_byte != 0 && new_sp > self.sp {
            self.bytes[self.sp as usize..new_sp as usize].fill(self.fresh_byte);
        }
        self.sp = new_sp;
        Ok(())
    }

    /// Checks that `size` bytes at `addr` are live memory and returns the index.
    #[inline(always)]
    fn check(&self, addr: u64, size: u32, write: bool) -> Result<usize, ErrorKind> {
        // One comparison: addresses below NULL_GUARD wrap around to huge offsets.
        // `sp >= NULL_GUARD + 16` always holds (globals end is aligned past the guard).
        if addr.wrapping_sub(NULL_GUARD) <= self.sp - NULL_GUARD - size as u64 {
            Ok(addr as usize)
        } else {
            Err(ErrorKind::OutOfBounds { addr, size, write })
        }
    }

    #[inline(always)]
    pub fn load8(&self, addr: u64) -> Result<u8, ErrorKind> {
        let a = self.check(addr, 1, false)?;
        Ok(self.bytes[a])
    }

    #[inline(always)]
    pub fn load32(&self, addr: u64) -> Result<u32, ErrorKind> {
        let a = self.check(addr, 4, false)?;
        let b = &self.bytes[a..a + 4];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline(always)]
    pub fn load64(&self, addr: u64) -> Result<u64, ErrorKind> {
        let a = self.check(addr, 8, false)?;
        let b = &self.bytes[a..a + 8];
        Ok(u64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    #[inline(always)]
    pub fn store8(&mut self, addr: u64, v: u8) -> Result<(), ErrorKind> {
        let a = self.check(addr, 1, true)?;
        self.bytes[a] = v;
        Ok(())
    }

    #[inline(always)]
    pub fn store32(&mut self, addr: u64, v: u32) -> Result<(), ErrorKind> {
        let a = self.check(addr, 4, true)?;
        self.bytes[a..a + 4].copy_from_slice(&v.to_le_bytes());
        Ok(())
    }

    #[inline(always)]
    pub fn store64(&mut self, addr: u64, v: u64) -> Result<(), ErrorKind> {
        let a = self.check(addr, 8, true)?;
        self.bytes[a..a + 8].copy_from_slice(&v.to_le_bytes());
        Ok(())
    }

    /// Sets the `len` bytes at `addr` to `byte` (C's `memset`), bounds-checked: live
    /// memory is one range, so its first and last bytes being live is enough.
    pub fn fill(&mut self, addr: u64, len: u64, byte: u8) -> Result<(), ErrorKind> {
        if len == 0 {
            return Ok(());
        }
        let Some(last) = addr.checked_add(len - 1) else {
            return Err(ErrorKind::OutOfBounds {
                addr,
                size: u32::MAX,
                write: true,
            });
        };
        let a = self.check(addr, 1, true)?;
        let b = self.check(last, 1, true)?;
        self.bytes[a..=b].fill(byte);
        Ok(())
    }

    /// Reads the NUL-terminated string at `addr` (without the NUL), bounds-checked.
    pub fn c_string(&self, addr: u64) -> Result<Vec<u8>, ErrorKind> {
        let mut out = Vec::new();
        let mut a = addr;
        loop {
            let b = self.load8(a)?;
            if b == 0 {
                return Ok(out);
            }
            out.push(b);
            a = a.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{GlobalData, Type};

    #[test]
    fn globals_are_initialised_and_bounds_checked() {
        let mut m = Module::new();
        m.add_global(GlobalData {
            name: "a".into(),
            elem: Type::I32,
            len: 3,
            init: GlobalInit::Words(vec![7, 0xffff_ffff]),
        });
        m.add_global(GlobalData {
            name: "s".into(),
            elem: Type::I8,
            len: 3,
            init: GlobalInit::Bytes(b"hi\0".to_vec()),
        });
        let layout = layout_globals(&m, 1 << 30).unwrap();
        let mem = Memory::new(&m, &layout, 1 << 20);
        let a = layout.addrs[0];
        assert_eq!(a, NULL_GUARD);
        assert_eq!(layout.addrs[1], NULL_GUARD + 16);
        assert_eq!(layout.end, NULL_GUARD + 32);
        assert_eq!(mem.load32(a).unwrap(), 7);
        assert_eq!(mem.load32(a + 4).unwrap(), 0xffff_ffff);
        assert_eq!(mem.load32(a + 8).unwrap(), 0);
        assert_eq!(mem.c_string(layout.addrs[1]).unwrap(), b"hi");
        assert!(mem.load32(0).is_err());
        assert!(mem.load32(NULL_GUARD - 1).is_err());
        assert!(mem.load32(u64::MAX - 1).is_err());
        assert!(mem.load32(layout.end).is_err());
        assert!(mem.load64(layout.end - 8).is_ok());
        assert!(mem.load64(layout.end - 7).is_err());
    }

    #[test]
    fn stack_grows_to_its_limit() {
        let m = Module::new();
        let layout = layout_globals(&m, 1 << 30).unwrap();
        let mut mem = Memory::new(&m, &layout, 1000);
        let base = mem.sp;
        assert!(mem.set_sp(base + 1000).is_ok());
        assert!(mem.store32(base + 996, 5).is_ok());
        assert_eq!(mem.load32(base + 996).unwrap(), 5);
        assert!(mem.set_sp(base + 1001).is_err());
        assert!(mem.set_sp(base).is_ok());
        assert!(mem.load32(base).is_err());
    }
}
