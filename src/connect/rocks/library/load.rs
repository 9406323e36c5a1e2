//! Loading a RocksDB release's shared library: the file checked (an ELF
//! shared object of this machine's architecture), opened, its C functions
//! resolved, and its version read from the library itself. A library
//! stays loaded for the process's life (RocksDB's threads and static
//! objects outlive any one database), once per path.

use super::api::Api;
use crate::error::{Error, Result};
use libloading::Library;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A loaded release.
pub(crate) struct Release {
    pub(super) api: Api,
    /// The release's version (`8.1.1`), as its own OPTIONS file says.
    pub(super) version: String,
    /// The library's file, canonical.
    pub(super) path: PathBuf,
    /// Its loader-shared (STB_GNU_UNIQUE) symbols.
    unique_symbols: usize,
}

impl Release {
    /// The release as errors name it: `RocksDB 7.8.3 (/usr/lib/.../librocksdb.so.7.8.3)`.
    pub(super) fn name(&self) -> String {
        format!("RocksDB {} ({})", self.version, self.path.display())
    }

    /// The release in `lib`, loaded once per process.
    pub(crate) fn load(lib: &Path) -> Result<&'static Release> {
        static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static Release>>> = OnceLock::new();
        let path = std::fs::canonicalize(lib).map_err(|e| lib_error(lib, format!("cannot read it: {e}")))?;
        let mut loaded = LOADED.get_or_init(Default::default).lock().expect("not poisoned");
        if let Some(release) = loaded.get(&path) {
            return Ok(release);
        }
        let release: &'static Release = Box::leak(Box::new(open(&path, &loaded)?));
        loaded.insert(path, release);
        Ok(release)
    }
}

/// An error about the `lib=` option's library.
fn lib_error(lib: &Path, what: impl std::fmt::Display) -> Error {
    Error::config("lib", format!("{}: {what}", lib.display()))
}

/// Opens `path`: checked, loaded, resolved, its version read.
fn open(path: &Path, others: &HashMap<PathBuf, &'static Release>) -> Result<Release> {
    let inspected = inspect(path)?;
    refuse_shared_statics(path, &inspected, others)?;
    // SAFETY: loading runs the library's initializers: a RocksDB release's
    // are its static objects; what else a file of the user's choosing runs
    // is the user's to choose, as for any database server binary.
    let lib = unsafe { Library::new(path) }.map_err(|e| lib_error(path, format!("cannot load it: {e}")))?;
    // SAFETY: only the symbol's presence is looked at.
    if unsafe { lib.get::<*const ()>(b"rocksdb_open\0") }.is_err() {
        return Err(lib_error(
            path,
            "not a RocksDB library: it has no rocksdb_open (RocksDB's C API, rocksdb/c.h)",
        ));
    }
    let api = Api::resolve(&lib).map_err(|missing| {
        lib_error(
            path,
            format!(
                "this RocksDB release lacks C functions ibench needs: {}",
                missing.join(", ")
            ),
        )
    })?;
    let version = probe_version(&api).map_err(|e| lib_error(path, format!("cannot read its version: {e}")))?;
    // Never unloaded: see the module's comment.
    std::mem::forget(lib);
    Ok(Release {
        api,
        version,
        path: path.to_path_buf(),
        unique_symbols: inspected.unique_symbols,
    })
}

/// Refuses a second release in one process when both have loader-shared
/// symbols: the later one would run the earlier one's static objects (a
/// cache helper of another release's layout). scripts/rocksdb-build
/// builds without them (-fno-gnu-unique); Debian's librocksdb has them.
fn refuse_shared_statics(
    path: &Path,
    inspected: &Inspected,
    others: &HashMap<PathBuf, &'static Release>,
) -> Result<()> {
    let clash = others.values().find(|r| r.unique_symbols > 0);
    match clash {
        Some(other) if inspected.unique_symbols > 0 => Err(lib_error(
            path,
            format!(
                "this process has loaded {} already, and both libraries have C++ symbols the loader \
                 shares between libraries (STB_GNU_UNIQUE: {} here, {} there), so each would run the other's \
                 static objects; run them in separate processes, or build this release with \
                 scripts/rocksdb-build (-fno-gnu-unique)",
                other.name(),
                inspected.unique_symbols,
                other.unique_symbols
            ),
        )),
        _ => Ok(()),
    }
}

/// What the file says of itself before it is loaded.
struct Inspected {
    /// Its C++ symbols of binding STB_GNU_UNIQUE (static locals of inline
    /// and template functions), which the dynamic loader shares between
    /// every library of the process, RTLD_LOCAL or not.
    unique_symbols: usize,
}

/// This process's architecture, as `object` names it.
const HOST: object::Architecture = if cfg!(target_arch = "x86_64") {
    object::Architecture::X86_64
} else if cfg!(target_arch = "aarch64") {
    object::Architecture::Aarch64
} else {
    object::Architecture::Unknown
};

/// Checks that `path` is an ELF shared object for this machine, so that a
/// library of another architecture is named as such (the loader's own
/// message for it varies), and counts its loader-shared symbols.
fn inspect(path: &Path) -> Result<Inspected> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(path).map_err(|e| lib_error(path, format!("cannot read it: {e}")))?;
    let file = object::File::parse(&*data)
        .map_err(|e| lib_error(path, format!("not a shared library (no ELF header: {e})")))?;
    if !matches!(file, object::File::Elf64(_) | object::File::Elf32(_)) {
        return Err(lib_error(path, "not a shared library (not ELF)"));
    }
    if HOST != object::Architecture::Unknown && (file.architecture() != HOST || !file.is_64()) {
        return Err(lib_error(
            path,
            format!(
                "a library for {:?}{}, not for this machine ({HOST:?})",
                file.architecture(),
                if file.is_64() { "" } else { " (32-bit)" }
            ),
        ));
    }
    if file.kind() != object::ObjectKind::Dynamic {
        return Err(lib_error(path, "an ELF file, but not a shared library"));
    }
    let unique_symbols = file
        .dynamic_symbols()
        .filter(|s| {
            matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. }
                if st_info.st_bind() == object::elf::STB_GNU_UNIQUE)
        })
        .count();
    Ok(Inspected { unique_symbols })
}

/// The release's version: a database opened and closed in a temporary
/// directory, whose OPTIONS file the library writes with its version (the
/// C API has no version function every release keeps).
fn probe_version(api: &Api) -> std::result::Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let name = CString::new(dir.path().to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: the options and the database are made and destroyed here.
    unsafe {
        let opts = (api.rocksdb_options_create)();
        (api.rocksdb_options_set_create_if_missing)(opts, 1);
        let mut err: *mut c_char = std::ptr::null_mut();
        let db = (api.rocksdb_open)(opts, name.as_ptr(), &mut err);
        (api.rocksdb_options_destroy)(opts);
        if !err.is_null() {
            let message = CStr::from_ptr(err).to_string_lossy().into_owned();
            (api.rocksdb_free)(err.cast());
            return Err(message);
        }
        (api.rocksdb_close)(db);
    }
    let text = super::super::resolved::newest_options_file(dir.path())
        .and_then(|f| std::fs::read_to_string(f).ok())
        .ok_or("it wrote no OPTIONS file")?;
    let settings = super::super::options::read_options_file(&text);
    super::super::options::option(&settings, "Version", "rocksdb_version")
        .map(str::to_string)
        .ok_or_else(|| "its OPTIONS file names no rocksdb_version".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_library_of_this_machine_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not a library at all, longer than a header").unwrap();
        let e = Release::load(&text).err().unwrap().to_string();
        assert!(e.contains("notes.txt: not a shared library (no ELF header"), "{e}");
        // This test's own executable, its machine (e_machine, at byte 18) changed to another's.
        let mut elf = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let other: u16 = if HOST == object::Architecture::Aarch64 { 62 } else { 183 };
        elf[18..20].copy_from_slice(&other.to_le_bytes());
        let foreign = dir.path().join("librocksdb-foreign.so");
        std::fs::write(&foreign, &elf).unwrap();
        let e = Release::load(&foreign).err().unwrap().to_string();
        assert!(
            e.contains("a library for ") && e.contains("not for this machine"),
            "{e}"
        );
        let e = Release::load(&dir.path().join("absent.so")).err().unwrap().to_string();
        assert!(
            e.starts_with("invalid lib: ") && e.contains("absent.so: cannot read it"),
            "{e}"
        );
    }
}
