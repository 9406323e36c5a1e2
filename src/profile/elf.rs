//! Whether an executable was built with frame pointers, read from its
//! machine code: the share of its functions whose first instructions set up
//! a frame (`mov %rsp,%rbp`, after `push %rbp`).
//!
//! A compiler that keeps frame pointers (`-fno-omit-frame-pointer`, as
//! Debian builds PostgreSQL and MariaDB) sets one up near the start of
//! nearly every function, though scheduling may put other instructions
//! between the push and the move; one that omits them (gcc's and rustc's
//! default at -O2) almost never copies `%rsp` to `%rbp`, using `%rbp` as an
//! ordinary register. Measured here (window of 24 bytes): PostgreSQL 15
//! 0.92, MariaDB 10.11 0.91, its MyRocks plugin 0.94, OpenJDK's libjvm 0.90;
//! libc 0.03, libcrypto 0.00, bash 0.00, redis-server 0.00, ibench (Rust,
//! release) 0.05. So 1/2 separates the two.

use std::path::Path;

/// The share of functions above which an executable counts as built with
/// frame pointers.
pub const FRAME_POINTER_SHARE: f64 = 0.5;

/// Functions this small are skipped: a compiler may leave a leaf function
/// without a frame even when it keeps frame pointers elsewhere.
const MIN_FUNCTION_BYTES: u64 = 64;

/// At most this many functions are read, spread evenly over the symbol table.
const MAX_FUNCTIONS: usize = 4000;

/// How far into a function the frame set-up is looked for: the push, the
/// move and what the compiler schedules between them (the shortest window
/// that finds gcc's frames in 9 of 10 functions).
const PROLOGUE_BYTES: usize = 24;

/// The share of the functions in the x86-64 ELF file at `path` that set up a
/// frame pointer, with the number of functions read; None when the file is
/// not an x86-64 ELF file with a symbol table, so nothing can be told.
pub fn frame_pointer_share(path: &Path) -> Option<(f64, usize)> {
    let data = std::fs::read(path).ok()?;
    let elf = Elf::parse(&data)?;
    let functions = elf.functions()?;
    let step = functions.len().div_ceil(MAX_FUNCTIONS).max(1);
    let (mut read, mut framed) = (0usize, 0usize);
    for &addr in functions.iter().step_by(step) {
        let Some(code) = elf.code_at(addr, PROLOGUE_BYTES) else {
            continue;
        };
        read += 1;
        framed += usize::from(sets_up_frame(code));
    }
    (read > 0).then(|| (framed as f64 / read as f64, read))
}

/// `mov %rsp,%rbp` (either encoding) in `code`, a function's first bytes.
fn sets_up_frame(code: &[u8]) -> bool {
    code.windows(3)
        .any(|w| w == [0x48, 0x89, 0xe5] || w == [0x48, 0x8b, 0xec])
}

/// The parts of a little-endian ELF64 file that locate its functions' code.
struct Elf<'a> {
    data: &'a [u8],
    /// (type, address, file offset, size, entry size) of each section.
    sections: Vec<(u32, u64, u64, u64, u64)>,
}

const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_DYNSYM: u32 = 11;
const EM_X86_64: u16 = 62;
const STT_FUNC: u8 = 2;

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Option<Elf<'a>> {
        // ELF magic, 64-bit, little-endian, x86-64.
        if data.get(..6)? != b"\x7fELF\x02\x01" || u16_at(data, 18)? != EM_X86_64 {
            return None;
        }
        let (shoff, shentsize, shnum) = (u64_at(data, 40)?, u16_at(data, 58)?, u16_at(data, 60)?);
        let sections = (0..u64::from(shnum))
            .map(|i| {
                let at = usize::try_from(shoff + i * u64::from(shentsize)).ok()?;
                Some((
                    u32_at(data, at + 4)?,
                    u64_at(data, at + 16)?,
                    u64_at(data, at + 24)?,
                    u64_at(data, at + 32)?,
                    u64_at(data, at + 56)?,
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Elf { data, sections })
    }

    /// The addresses of the functions of at least [`MIN_FUNCTION_BYTES`] in
    /// the full symbol table, or the dynamic one when the file is stripped
    /// (Debian's servers are: their exported functions are what is left).
    fn functions(&self) -> Option<Vec<u64>> {
        let table = [SHT_SYMTAB, SHT_DYNSYM]
            .iter()
            .find_map(|&t| self.sections.iter().find(|s| s.0 == t))?;
        let (_, _, offset, size, entsize) = *table;
        if entsize < 24 {
            return None;
        }
        let mut out: Vec<u64> = (0..size / entsize)
            .filter_map(|i| {
                let at = usize::try_from(offset + i * entsize).ok()?;
                let info = *self.data.get(at + 4)?;
                let (shndx, value, bytes) = (
                    u16_at(self.data, at + 6)?,
                    u64_at(self.data, at + 8)?,
                    u64_at(self.data, at + 16)?,
                );
                (info & 0xf == STT_FUNC && shndx != 0 && bytes >= MIN_FUNCTION_BYTES).then_some(value)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Up to `len` bytes of code at virtual address `addr` (fewer at the
    /// end of its section).
    fn code_at(&self, addr: u64, len: usize) -> Option<&'a [u8]> {
        let &(_, start, offset, size, _) = self
            .sections
            .iter()
            .find(|s| s.0 == SHT_PROGBITS && s.1 != 0 && (s.1..s.1 + s.3).contains(&addr))?;
        let (at, end) = (offset + (addr - start), offset + size);
        let at = usize::try_from(at).ok()?;
        let end = usize::try_from(end).ok()?.min(at + len);
        self.data.get(at..end)
    }
}

fn u16_at(d: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_set_up_by_copying_the_stack_pointer_near_the_start() {
        assert!(sets_up_frame(&[0x55, 0x48, 0x89, 0xe5, 0x41, 0x57]));
        assert!(sets_up_frame(&[0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5])); // after endbr64
                                                                                   // PostgreSQL's interval_in: push %rbp; mov $0x19,%r9d; mov %rsp,%rbp
        assert!(sets_up_frame(&[0x55, 0x41, 0xb9, 0x19, 0, 0, 0, 0x48, 0x89, 0xe5]));
        assert!(!sets_up_frame(&[0x55, 0x4c, 0x8d, 0x87, 0x88, 0x00])); // rbp saved as a plain register
        assert!(!sets_up_frame(&[0x41, 0x57, 0x41, 0x56]));
    }

    #[test]
    fn a_file_that_is_not_elf_tells_nothing() {
        let dir = std::env::temp_dir().join(format!("ibench-elf-test-{}", std::process::id()));
        std::fs::write(&dir, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(frame_pointer_share(&dir), None);
        std::fs::remove_file(&dir).unwrap();
    }
}
