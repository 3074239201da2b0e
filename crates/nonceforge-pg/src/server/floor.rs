//! The floor file (`nonceforge_floor` in the data directory): its text, read
//! at server start, and the durable write that moves it (temporary file,
//! fsync, rename, directory fsync). What the floor means: the module above.

use super::{MS_END, NO_MARK};
use pgrx::pg_sys;
use std::io::Write;

pub(super) const FLOOR_FILE: &str = "nonceforge_floor";
const FLOOR_HEADER_V1: &str = "nonceforge floor v1";
const FLOOR_HEADER: &str = "nonceforge floor v2";

pub(super) fn floor_path() -> std::path::PathBuf {
    // SAFETY: DataDir is set (and absolute) before any library is preloaded.
    let dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) };
    std::path::Path::new(&*dir.to_string_lossy()).join(FLOOR_FILE)
}

/// Parses the floor file's text: the header line, Unix milliseconds, and (v2)
/// the floor origin's value when the file was written (`-`: none).
pub(crate) fn parse_floor(text: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines();
    let v2 = match lines.next()? {
        FLOOR_HEADER => true,
        FLOOR_HEADER_V1 => false,
        _ => return None,
    };
    let ms: u64 = lines.next()?.trim().parse().ok()?;
    let mark = if v2 {
        match lines.next()?.trim() {
            "-" => NO_MARK,
            m => m.parse().ok().filter(|&m| m < MS_END)?,
        }
    } else {
        NO_MARK
    };
    (ms < MS_END).then_some((ms, mark))
}

/// Writes `ms` as the floor, durably, with `mark`: the floor origin's value
/// now, if this run knows it (`-` in the file otherwise).
pub(super) fn persist(ms: u64, mark: Option<u64>) -> std::io::Result<()> {
    let path = floor_path();
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        let mark = mark.map_or_else(|| "-".to_owned(), |m| m.to_string());
        writeln!(f, "{FLOOR_HEADER}\n{ms}\n{mark}")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(path.parent().unwrap_or(std::path::Path::new(".")))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_text() {
        assert_eq!(
            parse_floor("nonceforge floor v1\n1790000000000\n"),
            Some((1_790_000_000_000, NO_MARK))
        );
        assert_eq!(
            parse_floor("nonceforge floor v2\n1790000000000\n1790000003000\n"),
            Some((1_790_000_000_000, 1_790_000_003_000))
        );
        assert_eq!(
            parse_floor("nonceforge floor v2\n1790000000000\n-\n"),
            Some((1_790_000_000_000, NO_MARK))
        );
        assert_eq!(parse_floor("nonceforge floor v2\n1\n"), None);
        assert_eq!(parse_floor("nonceforge floor v2\n1\nx\n"), None);
        assert_eq!(parse_floor("nonceforge floor v3\n1\n-\n"), None);
        assert_eq!(parse_floor("nonceforge floor v1\n-1\n"), None);
        assert_eq!(parse_floor("nonceforge floor v1\n281474976710656\n"), None);
        assert_eq!(parse_floor(""), None);
    }
}
