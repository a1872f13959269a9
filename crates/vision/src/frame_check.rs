//! What a camera frame may be, checked from its bytes before anything is decoded: the one limit
//! (pixels, sides, 8 bits a channel) that every source and the vision share, and the structure
//! of the file — a JPEG's segments, its Huffman tables and every block of every sequential scan
//! walked through to the end (so a cut scan with an end marker glued on is caught), a PNG's
//! chunks from `IHDR` to `IEND`. Linear in the bytes, allocates nothing in proportion to the
//! pixels, never panics.

use thiserror::Error;

/// What a frame may be. One value serves every edge (posted frames, pulled cameras, folders)
/// and the vision's decoder, so a frame accepted at the edge is one the vision can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    /// Largest accepted width or height in pixels.
    pub max_side: u32,
    /// Largest accepted width × height.
    pub max_pixels: u64,
    /// Smallest accepted width or height: a board cannot be read from fewer pixels.
    pub min_side: u32,
}

impl Default for FrameLimits {
    /// Up to 12.6 megapixels (4096 × 3072, which holds a 12 MP phone photo of 4032 × 3024 and
    /// 4K video), at most 8192 a side, at least 64 a side (the board search's minimum).
    fn default() -> Self {
        Self { max_side: 8192, max_pixels: 4096 * 3072, min_side: 64 }
    }
}

/// The two encodings frames may come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFormat {
    /// JPEG (baseline, extended or progressive Huffman coding).
    Jpeg,
    /// PNG.
    Png,
}

impl FrameFormat {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
        }
    }

    /// Recognises the format by its first bytes.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.starts_with(PNG_SIGNATURE) {
            Some(Self::Png)
        } else {
            None
        }
    }
}

/// A frame that passed the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInfo {
    /// Its encoding.
    pub format: FrameFormat,
    /// Stored width (before any EXIF rotation).
    pub width: u32,
    /// Stored height.
    pub height: u32,
}

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameCheckError {
    /// The input holds no bytes at all.
    #[error("empty image data")]
    Empty,
    /// Neither JPEG nor PNG by its first bytes.
    #[error("unrecognised image format (expected JPEG or PNG)")]
    UnknownFormat,
    /// The header announces more pixels than the limits allow.
    #[error("image is {width}×{height}, larger than the limit of {max_side} px a side / {max_pixels} pixels")]
    TooLarge {
        /// Width from the header.
        width: u32,
        /// Height from the header.
        height: u32,
        /// Limit on either side.
        max_side: u32,
        /// Limit on the pixel count.
        max_pixels: u64,
    },
    /// The image is too small to show a board.
    #[error("image is {width}×{height}, smaller than {min_side} px a side")]
    TooSmall {
        /// Width from the header.
        width: u32,
        /// Height from the header.
        height: u32,
        /// Smallest accepted side.
        min_side: u32,
    },
    /// More than 8 bits a channel (or a coding we do not decode).
    #[error("unsupported image encoding: {0}")]
    Unsupported(String),
    /// The file ends before it is complete.
    #[error("truncated image: {0}")]
    Truncated(String),
    /// The structure is broken.
    #[error("corrupt image: {0}")]
    Corrupt(String),
}

/// Checks a frame's format, size and structure without decoding its pixels.
pub fn check_frame(bytes: &[u8], limits: &FrameLimits) -> Result<FrameInfo, FrameCheckError> {
    if bytes.is_empty() {
        return Err(FrameCheckError::Empty);
    }
    let format = FrameFormat::sniff(bytes).ok_or(FrameCheckError::UnknownFormat)?;
    let (width, height) = match format {
        FrameFormat::Jpeg => jpeg::check(bytes, limits)?,
        FrameFormat::Png => png::check(bytes, limits)?,
    };
    Ok(FrameInfo { format, width, height })
}

/// Checks the announced size against the limits (before any pixel work).
fn check_size(width: u32, height: u32, limits: &FrameLimits) -> Result<(), FrameCheckError> {
    let pixels = u64::from(width) * u64::from(height);
    if width > limits.max_side || height > limits.max_side || pixels > limits.max_pixels {
        return Err(FrameCheckError::TooLarge {
            width,
            height,
            max_side: limits.max_side,
            max_pixels: limits.max_pixels,
        });
    }
    if width < limits.min_side || height < limits.min_side {
        return Err(FrameCheckError::TooSmall { width, height, min_side: limits.min_side });
    }
    Ok(())
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

mod png {
    use super::{check_size, FrameCheckError, FrameLimits, PNG_SIGNATURE};

    /// Walks the chunks: `IHDR` first with a size within the limits and 8 bits a channel at
    /// most, at least one `IDAT`, `IEND` last with nothing after it. The chunk CRCs and the
    /// compressed data are the decoder's to check.
    pub(super) fn check(bytes: &[u8], limits: &FrameLimits) -> Result<(u32, u32), FrameCheckError> {
        let mut at = PNG_SIGNATURE.len();
        let mut size = None;
        let mut idat = false;
        loop {
            let Some(header) = bytes.get(at..at + 8) else {
                return Err(FrameCheckError::Truncated("the PNG ends before its IEND chunk".into()));
            };
            let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
            let kind = &header[4..8];
            let data_start = at + 8;
            let Some(end) = data_start.checked_add(len).and_then(|e| e.checked_add(4)) else {
                return Err(FrameCheckError::Corrupt("a PNG chunk length overflows".into()));
            };
            if end > bytes.len() {
                return Err(FrameCheckError::Truncated(format!(
                    "the PNG chunk {} runs past the end of the data",
                    String::from_utf8_lossy(kind)
                )));
            }
            let data = &bytes[data_start..data_start + len];
            match (kind, size) {
                (b"IHDR", None) => size = Some(ihdr(data, limits)?),
                (b"IHDR", Some(_)) => return Err(FrameCheckError::Corrupt("two IHDR chunks".into())),
                (_, None) => return Err(FrameCheckError::Corrupt("the PNG does not start with IHDR".into())),
                (b"IDAT", Some(_)) => idat = true,
                (b"IEND", Some(size)) => {
                    if !idat {
                        return Err(FrameCheckError::Corrupt("the PNG has no image data (IDAT)".into()));
                    }
                    if end != bytes.len() {
                        return Err(FrameCheckError::Corrupt("data after the PNG's IEND chunk".into()));
                    }
                    return Ok(size);
                }
                _ => {}
            }
            at = end;
        }
    }

    fn ihdr(data: &[u8], limits: &FrameLimits) -> Result<(u32, u32), FrameCheckError> {
        let [w0, w1, w2, w3, h0, h1, h2, h3, depth, colour, compression, filter, interlace] = *data else {
            return Err(FrameCheckError::Corrupt("the PNG's IHDR is not 13 bytes".into()));
        };
        let (width, height) = (u32::from_be_bytes([w0, w1, w2, w3]), u32::from_be_bytes([h0, h1, h2, h3]));
        if width == 0 || height == 0 || compression != 0 || filter != 0 || interlace > 1 {
            return Err(FrameCheckError::Corrupt("invalid PNG header".into()));
        }
        let depth_ok = match colour {
            0 => matches!(depth, 1 | 2 | 4 | 8 | 16),
            3 => matches!(depth, 1 | 2 | 4 | 8),
            2 | 4 | 6 => matches!(depth, 8 | 16),
            _ => return Err(FrameCheckError::Corrupt(format!("PNG colour type {colour} does not exist"))),
        };
        if !depth_ok {
            return Err(FrameCheckError::Corrupt(format!("PNG bit depth {depth} with colour type {colour}")));
        }
        check_size(width, height, limits)?;
        if depth > 8 {
            return Err(FrameCheckError::Unsupported(format!("{depth} bits a channel (cameras send 8)")));
        }
        Ok((width, height))
    }
}

mod jpeg {
    use super::{check_size, FrameCheckError, FrameLimits};

    /// One Huffman table, decodable by a 9-bit lookahead and the canonical code's per-length
    /// bounds for longer codes.
    #[derive(Clone)]
    struct Huffman {
        /// Indexed by the next 9 bits: (code length, symbol), length 0 when longer than 9.
        fast: Vec<(u8, u8)>,
        /// Largest code of each length 1..=16 (−1 when none), as in JPEG's DECODE procedure.
        max_code: [i32; 17],
        /// Index in `symbols` of the first code of each length, minus that code.
        offset: [i32; 17],
        symbols: Vec<u8>,
    }

    const FAST_BITS: u32 = 9;

    impl Huffman {
        fn new(counts: &[u8; 16], symbols: &[u8]) -> Result<Self, FrameCheckError> {
            let mut max_code = [-1i32; 17];
            let mut offset = [0i32; 17];
            let mut fast = vec![(0u8, 0u8); 1 << FAST_BITS];
            let mut code = 0i32;
            let mut k = 0usize;
            for len in 1..=16usize {
                let n = usize::from(counts[len - 1]);
                offset[len] = k as i32 - code;
                for _ in 0..n {
                    // A canonical code of this length cannot reach 2^len.
                    if code >= 1 << len {
                        return Err(FrameCheckError::Corrupt("a Huffman table has too many codes".into()));
                    }
                    if len as u32 <= FAST_BITS {
                        let shift = FAST_BITS - len as u32;
                        let first = (code as usize) << shift;
                        for slot in &mut fast[first..first + (1 << shift)] {
                            *slot = (len as u8, symbols[k]);
                        }
                    }
                    code += 1;
                    k += 1;
                }
                if n > 0 {
                    max_code[len] = code - 1;
                }
                code <<= 1;
            }
            Ok(Self { fast, max_code, offset, symbols: symbols.to_vec() })
        }
    }

    /// A component of the frame.
    #[derive(Clone, Copy)]
    struct Component {
        id: u8,
        h: u32,
        v: u32,
    }

    struct Frame {
        width: u32,
        height: u32,
        progressive: bool,
        components: Vec<Component>,
    }

    /// Reads the bits of an entropy-coded segment, unstuffing `FF 00`, stopping at a marker.
    struct Bits<'a> {
        data: &'a [u8],
        pos: usize,
        buffer: u64,
        count: u32,
        /// Bits taken after the data ran out (the scan was cut short when nonzero).
        overrun: bool,
    }

    impl<'a> Bits<'a> {
        fn new(data: &'a [u8], pos: usize) -> Self {
            Self { data, pos, buffer: 0, count: 0, overrun: false }
        }

        fn fill(&mut self) {
            while self.count <= 56 {
                let byte = match self.data.get(self.pos) {
                    Some(&0xFF) if self.data.get(self.pos + 1) == Some(&0x00) => {
                        self.pos += 2;
                        0xFF
                    }
                    // A marker (or the end): the data of this interval is over.
                    Some(&0xFF) | None => return,
                    Some(&b) => {
                        self.pos += 1;
                        b
                    }
                };
                self.buffer |= u64::from(byte) << (56 - self.count);
                self.count += 8;
            }
        }

        fn peek(&mut self, n: u32) -> u32 {
            if self.count < n {
                self.fill();
            }
            (self.buffer >> (64 - n)) as u32
        }

        fn skip(&mut self, n: u32) {
            if self.count < n {
                self.fill();
                if self.count < n {
                    self.overrun = true;
                    self.buffer = 0;
                    self.count = 0;
                    return;
                }
            }
            self.buffer = if n == 64 { 0 } else { self.buffer << n };
            self.count -= n;
        }

        fn decode(&mut self, table: &Huffman) -> Option<u8> {
            let look = self.peek(FAST_BITS) as usize;
            let (len, symbol) = table.fast[look];
            if len > 0 {
                self.skip(u32::from(len));
                return (!self.overrun).then_some(symbol);
            }
            let word = self.peek(16) as i32;
            for len in (FAST_BITS as usize + 1)..=16 {
                let code = word >> (16 - len);
                if code <= table.max_code[len] {
                    self.skip(len as u32);
                    let index = usize::try_from(code + table.offset[len]).ok()?;
                    return if self.overrun { None } else { table.symbols.get(index).copied() };
                }
            }
            None
        }

        /// Where the data used so far ends (the padding bits of the last byte dropped): whole
        /// bytes still buffered were read ahead but not used, and each was one byte of the
        /// data or a stuffed pair `FF 00` (inside entropy-coded data `FF` is always stuffed,
        /// so a `00` after an `FF` is the stuffing).
        fn end(&self) -> usize {
            let mut at = self.pos;
            for _ in 0..self.count / 8 {
                let stuffed = at >= 2 && self.data[at - 1] == 0x00 && self.data[at - 2] == 0xFF;
                at -= if stuffed { 2 } else { 1 };
            }
            at
        }
    }

    fn be16(bytes: &[u8], at: usize) -> Option<usize> {
        Some(usize::from(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?])))
    }

    fn truncated(what: &str) -> FrameCheckError {
        FrameCheckError::Truncated(format!("the JPEG ends inside {what}"))
    }

    fn corrupt(what: impl Into<String>) -> FrameCheckError {
        FrameCheckError::Corrupt(what.into())
    }

    /// Walks the segments from SOI to EOI; each sequential scan is decoded symbol by symbol
    /// (no arithmetic on coefficients) to check that it holds every block it must.
    pub(super) fn check(bytes: &[u8], limits: &FrameLimits) -> Result<(u32, u32), FrameCheckError> {
        let mut at = 2;
        let mut frame: Option<Frame> = None;
        let mut dc_tables: [Option<Huffman>; 4] = [None, None, None, None];
        let mut ac_tables: [Option<Huffman>; 4] = [None, None, None, None];
        let mut restart_interval = 0usize;
        let mut scans = 0usize;
        loop {
            // Markers may be preceded by any number of fill bytes.
            if bytes.get(at) != Some(&0xFF) {
                return Err(match bytes.get(at) {
                    None => truncated("its headers (no end-of-image marker)"),
                    Some(_) => corrupt("a JPEG segment does not start with a marker"),
                });
            }
            while bytes.get(at) == Some(&0xFF) {
                at += 1;
            }
            let Some(&marker) = bytes.get(at) else {
                return Err(truncated("a marker"));
            };
            at += 1;
            match marker {
                0xD9 => {
                    if scans == 0 {
                        return Err(corrupt("the JPEG has no image data (no scan before its end marker)"));
                    }
                    let Some(frame) = frame else {
                        return Err(corrupt("the JPEG has no frame header"));
                    };
                    return Ok((frame.width, frame.height));
                }
                0xD8 => return Err(corrupt("a second start-of-image marker")),
                0x01 | 0xD0..=0xD7 => return Err(corrupt("a restart marker outside a scan")),
                0x00 => return Err(corrupt("a stuffed byte outside a scan")),
                _ => {}
            }
            let len = be16(bytes, at).ok_or_else(|| truncated("a segment length"))?;
            if len < 2 {
                return Err(corrupt("a JPEG segment shorter than its length field"));
            }
            let Some(segment) = bytes.get(at + 2..at + len) else {
                return Err(truncated("a segment"));
            };
            at += len;
            match marker {
                0xC0..=0xC2 => {
                    if frame.is_some() {
                        return Err(corrupt("two frame headers"));
                    }
                    let parsed = frame_header(segment, marker == 0xC2)?;
                    check_size(parsed.width, parsed.height, limits)?;
                    frame = Some(parsed);
                }
                0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => {
                    return Err(FrameCheckError::Unsupported(format!(
                        "JPEG coding SOF{} (only baseline, extended and progressive Huffman)",
                        marker - 0xC0
                    )));
                }
                0xC4 => huffman_tables(segment, &mut dc_tables, &mut ac_tables)?,
                0xDD => restart_interval = be16(segment, 0).ok_or_else(|| corrupt("short restart interval"))?,
                0xDA => {
                    let Some(frame) = frame.as_ref() else {
                        return Err(corrupt("a scan before the frame header"));
                    };
                    let scan = scan_header(segment, frame)?;
                    let end = if frame.progressive {
                        skip_entropy(bytes, at)
                    } else {
                        walk_scan(bytes, at, frame, &scan, &dc_tables, &ac_tables, restart_interval)?
                    };
                    if end == at {
                        return Err(corrupt("a scan with no data"));
                    }
                    at = end;
                    scans += 1;
                }
                _ => {}
            }
        }
    }

    fn frame_header(segment: &[u8], progressive: bool) -> Result<Frame, FrameCheckError> {
        let [precision, h0, h1, w0, w1, count, ref rest @ ..] = *segment else {
            return Err(corrupt("short frame header"));
        };
        if precision != 8 {
            return Err(FrameCheckError::Unsupported(format!("{precision}-bit JPEG samples (cameras send 8)")));
        }
        let (height, width) = (u32::from(u16::from_be_bytes([h0, h1])), u32::from(u16::from_be_bytes([w0, w1])));
        if width == 0 || height == 0 {
            return Err(corrupt("a JPEG frame of zero size (or with the height given later, which we do not read)"));
        }
        let count = usize::from(count);
        if !(1..=4).contains(&count) || rest.len() != 3 * count {
            return Err(corrupt("bad component list in the frame header"));
        }
        let mut components = Vec::with_capacity(count);
        for c in rest.chunks_exact(3) {
            let (h, v) = (u32::from(c[1] >> 4), u32::from(c[1] & 15));
            if !(1..=4).contains(&h) || !(1..=4).contains(&v) || c[2] > 3 {
                return Err(corrupt("bad sampling factors or table in the frame header"));
            }
            components.push(Component { id: c[0], h, v });
        }
        Ok(Frame { width, height, progressive, components })
    }

    fn huffman_tables(
        mut segment: &[u8],
        dc: &mut [Option<Huffman>; 4],
        ac: &mut [Option<Huffman>; 4],
    ) -> Result<(), FrameCheckError> {
        while !segment.is_empty() {
            let Some((&class_id, rest)) = segment.split_first() else {
                break;
            };
            let Some(counts) = rest.get(..16) else {
                return Err(corrupt("short Huffman table"));
            };
            let counts: [u8; 16] = counts.try_into().map_err(|_| corrupt("short Huffman table"))?;
            let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
            let Some(symbols) = rest.get(16..16 + total) else {
                return Err(corrupt("short Huffman table"));
            };
            let table = Huffman::new(&counts, symbols)?;
            let (class, id) = (class_id >> 4, usize::from(class_id & 15));
            match (class, id) {
                (0, 0..=3) => dc[id] = Some(table),
                (1, 0..=3) => ac[id] = Some(table),
                _ => return Err(corrupt("bad Huffman table class or id")),
            }
            segment = &rest[16 + total..];
        }
        Ok(())
    }

    /// For each component of the scan: its index in the frame, DC and AC table ids.
    struct Scan {
        components: Vec<(usize, usize, usize)>,
    }

    fn scan_header(segment: &[u8], frame: &Frame) -> Result<Scan, FrameCheckError> {
        let Some((&count, rest)) = segment.split_first() else {
            return Err(corrupt("empty scan header"));
        };
        let count = usize::from(count);
        if !(1..=4).contains(&count) || rest.len() != 2 * count + 3 {
            return Err(corrupt("bad scan header"));
        }
        let mut components = Vec::with_capacity(count);
        for c in rest[..2 * count].chunks_exact(2) {
            let index = frame
                .components
                .iter()
                .position(|f| f.id == c[0])
                .ok_or_else(|| corrupt("a scan names a component the frame does not have"))?;
            components.push((index, usize::from(c[1] >> 4), usize::from(c[1] & 15)));
        }
        if components.iter().any(|&(_, dc, ac)| dc > 3 || ac > 3) {
            return Err(corrupt("a scan names a Huffman table that cannot exist"));
        }
        Ok(Scan { components })
    }

    /// The end of an entropy-coded segment: the first marker that is neither a stuffed byte
    /// nor a restart marker.
    fn skip_entropy(bytes: &[u8], mut at: usize) -> usize {
        while at + 1 < bytes.len() {
            if bytes[at] == 0xFF && !matches!(bytes[at + 1], 0x00 | 0xD0..=0xD7 | 0xFF) {
                return at;
            }
            at += 1;
        }
        bytes.len()
    }

    /// Decodes the Huffman symbols of every block of a sequential scan and returns where its
    /// data ends (at the next marker). Refuses data that runs out before the last block, codes
    /// no table holds, and blocks with more than 64 coefficients.
    fn walk_scan(
        bytes: &[u8],
        start: usize,
        frame: &Frame,
        scan: &Scan,
        dc_tables: &[Option<Huffman>; 4],
        ac_tables: &[Option<Huffman>; 4],
        restart_interval: usize,
    ) -> Result<usize, FrameCheckError> {
        let mut tables = Vec::with_capacity(scan.components.len());
        for &(index, dc, ac) in &scan.components {
            let (Some(dc), Some(ac)) = (dc_tables[dc].as_ref(), ac_tables[ac].as_ref()) else {
                // Motion-JPEG frames may leave out their Huffman tables (the standard ones are
                // meant); without them only the scan's presence can be checked.
                return Ok(skip_entropy(bytes, start));
            };
            tables.push((frame.components[index], dc, ac));
        }
        let h_max = frame.components.iter().map(|c| c.h).max().unwrap_or(1);
        let v_max = frame.components.iter().map(|c| c.v).max().unwrap_or(1);
        let ceil_div = |a: u32, b: u32| a.div_ceil(b);
        // Blocks per MCU and MCUs in the scan (a single-component scan is not interleaved).
        let (mcus, blocks_per_mcu): (u64, Vec<u32>) = if let [(c, _, _)] = tables[..] {
            let across = ceil_div(ceil_div(frame.width * c.h, h_max), 8);
            let down = ceil_div(ceil_div(frame.height * c.v, v_max), 8);
            (u64::from(across) * u64::from(down), vec![1])
        } else {
            let across = ceil_div(frame.width, 8 * h_max);
            let down = ceil_div(frame.height, 8 * v_max);
            (u64::from(across) * u64::from(down), tables.iter().map(|(c, _, _)| c.h * c.v).collect())
        };
        let mut bits = Bits::new(bytes, start);
        for mcu in 0..mcus {
            if restart_interval > 0 && mcu > 0 && mcu % restart_interval as u64 == 0 {
                // The interval's data must end here, at a restart marker.
                let at = bits.end();
                match bytes.get(at..at + 2) {
                    Some([0xFF, 0xD0..=0xD7]) => bits = Bits::new(bytes, at + 2),
                    None | Some([0xFF, 0xD9]) => {
                        return Err(truncated("its image data (a restart interval is cut short)"))
                    }
                    Some(_) => return Err(corrupt("a restart interval holds more data than its blocks")),
                }
            }
            for (&(_, dc, ac), &blocks) in tables.iter().zip(&blocks_per_mcu) {
                for _ in 0..blocks {
                    block(&mut bits, dc, ac)?;
                }
            }
        }
        // Padding to the byte, then the next marker (fill bytes allowed).
        let end = bits.end();
        match bytes.get(end) {
            Some(0xFF) => Ok(end),
            None => Err(truncated("its image data (no marker after the scan)")),
            Some(_) => Err(corrupt("a scan holds more data than its blocks")),
        }
    }

    fn block(bits: &mut Bits<'_>, dc: &Huffman, ac: &Huffman) -> Result<(), FrameCheckError> {
        let cut = || truncated("its image data (a scan is cut short)");
        let size = bits.decode(dc).ok_or_else(|| if bits.overrun { cut() } else { corrupt("an invalid DC code") })?;
        if size > 11 {
            return Err(corrupt("a DC difference of more than 11 bits"));
        }
        bits.skip(u32::from(size));
        let mut k = 1u32;
        while k < 64 {
            let rs = bits.decode(ac).ok_or_else(|| if bits.overrun { cut() } else { corrupt("an invalid AC code") })?;
            let (run, size) = (u32::from(rs >> 4), u32::from(rs & 15));
            if size == 0 {
                if run != 15 {
                    break;
                }
                k += 16;
                continue;
            }
            if size > 10 {
                return Err(corrupt("an AC coefficient of more than 10 bits"));
            }
            k += run;
            bits.skip(size);
            k += 1;
        }
        if k > 64 {
            return Err(corrupt("a block with more than 64 coefficients"));
        }
        if bits.overrun {
            return Err(cut());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{DynamicImage, ImageFormat, RgbImage};
    use std::io::Cursor;

    fn encoded(img: DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), format).map_err(|e| e.to_string()).unwrap_or_default();
        out
    }

    /// A textured frame, so the scan holds real coefficients and not only end-of-block codes.
    fn textured(width: u32, height: u32) -> DynamicImage {
        DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x * 7 % 256) as u8, ((x ^ y) % 256) as u8, ((x * y) / 13 % 256) as u8])
        }))
    }

    #[test]
    fn whole_frames_pass_with_their_size() {
        let jpeg = encoded(textured(333, 217), ImageFormat::Jpeg);
        assert_eq!(
            check_frame(&jpeg, &FrameLimits::default()),
            Ok(FrameInfo { format: FrameFormat::Jpeg, width: 333, height: 217 })
        );
        let grey = encoded(DynamicImage::ImageLuma8(textured(90, 70).to_luma8()), ImageFormat::Jpeg);
        assert_eq!(check_frame(&grey, &FrameLimits::default()).map(|i| (i.width, i.height)), Ok((90, 70)));
        let png = encoded(textured(120, 80), ImageFormat::Png);
        assert_eq!(
            check_frame(&png, &FrameLimits::default()),
            Ok(FrameInfo { format: FrameFormat::Png, width: 120, height: 80 })
        );
    }

    #[test]
    fn a_cut_jpeg_is_refused_even_with_an_end_marker_glued_on() {
        let jpeg = encoded(textured(320, 240), ImageFormat::Jpeg);
        for fraction in [0.05, 0.3, 0.5, 0.9, 0.99] {
            let cut = (jpeg.len() as f64 * fraction) as usize;
            let bare = &jpeg[..cut];
            assert!(check_frame(bare, &FrameLimits::default()).is_err(), "cut at {cut}");
            let mut glued = bare.to_vec();
            glued.extend_from_slice(&[0xFF, 0xD9]);
            let result = check_frame(&glued, &FrameLimits::default());
            assert!(
                matches!(result, Err(FrameCheckError::Truncated(_) | FrameCheckError::Corrupt(_))),
                "cut at {cut} of {} with FF D9: {result:?}",
                jpeg.len()
            );
        }
    }

    #[test]
    fn a_jpeg_without_image_data_is_refused() {
        let jpeg = encoded(textured(100, 100), ImageFormat::Jpeg);
        let Some(sos) = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]) else { panic!("no scan written") };
        let mut headers_only = jpeg[..sos].to_vec();
        headers_only.extend_from_slice(&[0xFF, 0xD9]);
        assert!(matches!(check_frame(&headers_only, &FrameLimits::default()), Err(FrameCheckError::Corrupt(_))));
    }

    #[test]
    fn limits_are_checked_from_the_header() {
        let jpeg = encoded(textured(300, 200), ImageFormat::Jpeg);
        let small = FrameLimits { max_side: 8192, max_pixels: 300 * 200 - 1, min_side: 64 };
        assert!(matches!(check_frame(&jpeg, &small), Err(FrameCheckError::TooLarge { width: 300, height: 200, .. })));
        let png = encoded(textured(300, 63), ImageFormat::Png);
        assert!(matches!(check_frame(&png, &FrameLimits::default()), Err(FrameCheckError::TooSmall { .. })));
    }

    #[test]
    fn sixteen_bit_png_is_refused_and_png_structure_is_checked() {
        let deep = DynamicImage::ImageRgba16(image::ImageBuffer::from_pixel(100, 100, image::Rgba([0u16, 0, 0, 0])));
        let png16 = encoded(deep, ImageFormat::Png);
        assert!(matches!(check_frame(&png16, &FrameLimits::default()), Err(FrameCheckError::Unsupported(_))));
        let png = encoded(textured(100, 100), ImageFormat::Png);
        assert!(matches!(
            check_frame(&png[..png.len() - 12], &FrameLimits::default()),
            Err(FrameCheckError::Truncated(_))
        ));
        let mut trailing = png.clone();
        trailing.extend_from_slice(b"junk");
        assert!(matches!(check_frame(&trailing, &FrameLimits::default()), Err(FrameCheckError::Corrupt(_))));
        assert!(matches!(check_frame(&png[..40], &FrameLimits::default()), Err(FrameCheckError::Truncated(_))));
    }

    #[test]
    fn garbage_never_panics() {
        // Every prefix and a few bit flips of a small JPEG and PNG: an answer each, no panic.
        for bytes in [encoded(textured(64, 64), ImageFormat::Jpeg), encoded(textured(64, 64), ImageFormat::Png)] {
            for cut in 0..bytes.len() {
                let _ = check_frame(&bytes[..cut], &FrameLimits::default());
            }
            for i in (0..bytes.len()).step_by(3) {
                let mut flipped = bytes.clone();
                flipped[i] ^= 1 << (i % 8);
                let _ = check_frame(&flipped, &FrameLimits::default());
            }
        }
    }
}
