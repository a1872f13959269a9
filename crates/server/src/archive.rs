//! A ZIP archive of small text files, stored uncompressed (game records are a few kilobytes;
//! every operating system opens a stored ZIP without extra software). Written by hand: a local
//! header per file, then the central directory (PKWARE APPNOTE 4.3, no ZIP64, UTF-8 names).

/// CRC-32 (IEEE 802.3, reflected), as ZIP requires.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Appends 16-bit fields, little-endian as ZIP stores them.
fn put16(out: &mut Vec<u8>, fields: &[u16]) {
    out.extend(fields.iter().flat_map(|f| f.to_le_bytes()));
}

/// Appends 32-bit fields, little-endian.
fn put32(out: &mut Vec<u8>, fields: &[u32]) {
    out.extend(fields.iter().flat_map(|f| f.to_le_bytes()));
}

/// Why an archive cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// Over 4 GiB or 65 535 files: would need ZIP64.
    #[error("too large for a plain ZIP archive")]
    TooLarge,
}

/// Writes `files` (name, contents) as one ZIP archive, in the order given.
pub fn zip_stored(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, ArchiveError> {
    let too_large = |_| ArchiveError::TooLarge;
    let count = u16::try_from(files.len()).map_err(too_large)?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let offset = u32::try_from(out.len()).map_err(too_large)?;
        let size = u32::try_from(data.len()).map_err(too_large)?;
        let name_len = u16::try_from(name.len()).map_err(too_large)?;
        let crc = crc32(data);
        // Version 2.0, flag bit 11 (names in UTF-8), method 0 (stored), time 00:00 1 Jan 1980.
        let common = |v: &mut Vec<u8>| {
            put16(v, &[20, 0x0800, 0, 0, 0x0021]);
            put32(v, &[crc, size, size]);
            put16(v, &[name_len, 0]);
        };
        put32(&mut out, &[0x0403_4b50]);
        common(&mut out);
        out.extend(name.as_bytes());
        out.extend(data);
        put32(&mut central, &[0x0201_4b50]);
        put16(&mut central, &[20]);
        common(&mut central);
        // Comment length, disk, internal and external attributes, offset of the local header.
        put16(&mut central, &[0, 0, 0]);
        put32(&mut central, &[0, offset]);
        central.extend(name.as_bytes());
    }
    let central_offset = u32::try_from(out.len()).map_err(too_large)?;
    let central_size = u32::try_from(central.len()).map_err(too_large)?;
    out.extend(central);
    // End of central directory: disks, entries on this disk and in all, its size and offset,
    // comment length.
    put32(&mut out, &[0x0605_4b50]);
    put16(&mut out, &[0, 0, count, count]);
    put32(&mut out, &[central_size, central_offset]);
    put16(&mut out, &[0]);
    Ok(out)
}

/// A file name safe on every system: letters (any script), digits, `-`, `_` and `.` kept,
/// spaces as `_`, anything else dropped; at most 80 characters.
pub fn safe_name(text: &str) -> String {
    let name: String = text
        .trim()
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(80)
        .collect();
    let name = name.trim_start_matches('.').to_owned();
    if name.is_empty() {
        "unnamed".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_and_a_readable_archive() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let files = vec![("R1/T01.sgf".to_owned(), b"(;GM[1])".to_vec()), ("R1/T02 é.sgf".to_owned(), Vec::new())];
        let zip = zip_stored(&files).expect("small");
        assert_eq!(&zip[..4], b"PK\x03\x04");
        // The end record points at the central directory, which names both files.
        let end = zip.len() - 22;
        assert_eq!(&zip[end..end + 4], b"PK\x05\x06");
        let entries = u16::from_le_bytes([zip[end + 10], zip[end + 11]]);
        assert_eq!(entries, 2);
        let offset = u32::from_le_bytes([zip[end + 16], zip[end + 17], zip[end + 18], zip[end + 19]]) as usize;
        assert_eq!(&zip[offset..offset + 4], b"PK\x01\x02");
        // When the system has `unzip`, it tests the archive too.
        let path = std::env::temp_dir().join(format!("tengen-zip-{}.zip", std::process::id()));
        std::fs::write(&path, &zip).expect("write");
        if let Ok(out) = std::process::Command::new("unzip").arg("-t").arg(&path).output() {
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
        }
        let _ = std::fs::remove_file(path);
        assert_eq!(safe_name("Du Pont Jean / ../x"), "Du_Pont_Jean__..x");
        assert_eq!(safe_name("王 立诚"), "王_立诚");
        assert_eq!(safe_name("..."), "unnamed");
    }
}
