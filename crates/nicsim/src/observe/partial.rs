//! An output file written under a temporary name beside its own
//! (`.NAME.partial`) and moved into place only when whole, so a run that fails
//! or stops leaves no half-written file behind.

use std::fmt::Display;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

pub struct PartialFile {
    temp: PathBuf,
    path: PathBuf,
}

impl PartialFile {
    /// The temporary file for `path`, open for writing.
    pub fn create(path: &Path) -> Result<(PartialFile, BufWriter<File>), String> {
        let name = path.file_name().ok_or_else(|| format!("{}: not a file name", path.display()))?;
        let temp = path.with_file_name(format!(".{}.partial", name.to_string_lossy()));
        let out = BufWriter::new(File::create(&temp).map_err(|e| format!("{}: {e}", path.display()))?);
        Ok((PartialFile { temp, path: path.to_path_buf() }, out))
    }

    /// `e`, about this file, as errors name it.
    pub fn error(&self, e: impl Display) -> String {
        format!("{}: {e}", self.path.display())
    }

    /// Flush, sync and move the file into place; on failure it is removed.
    pub fn finish(&self, out: BufWriter<File>) -> Result<(), String> {
        let done = out
            .into_inner()
            .map_err(|e| self.error(e.error()))
            .and_then(|file| file.sync_all().map_err(|e| self.error(e)))
            .and_then(|()| std::fs::rename(&self.temp, &self.path).map_err(|e| self.error(e)));
        if done.is_err() {
            self.remove();
        }
        done
    }

    /// Remove what was written.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.temp);
    }
}
