//! numpy's `.npy` files (format versions 1 to 3, little-endian, C order): how `anfora
//! run-model` and the examples pass tensors in and out.

use anfora_tensor::{DType, Tensor};

/// Each dtype and numpy's `descr` for it.
const DESCRS: [(DType, &str); 8] = [
    (DType::Bool, "|b1"),
    (DType::I8, "|i1"),
    (DType::U8, "|u1"),
    (DType::I32, "<i4"),
    (DType::I64, "<i8"),
    (DType::F32, "<f4"),
    (DType::F64, "<f8"),
    (DType::F16, "<f2"),
];

/// The `.npy` file of `t` (bfloat16, which numpy lacks, is written as float32).
pub fn write(t: &Tensor) -> Vec<u8> {
    let t = if t.dtype() == DType::BF16 {
        t.cast(DType::F32)
    } else {
        t.clone()
    };
    let descr = DESCRS
        .iter()
        .find(|(d, _)| *d == t.dtype())
        .map_or("<f4", |(_, s)| s);
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // The data starts at a multiple of 64 bytes; the header ends with a newline.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&t.to_le_bytes());
    out
}

/// The tensor in an `.npy` file.
pub fn read(bytes: &[u8]) -> Result<Tensor, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not an .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!(".npy format version {v} is not supported")),
    };
    let header = bytes
        .get(start..start.saturating_add(len))
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("the .npy header is cut short or not text")?;
    let descr = field(header, "descr").ok_or("the .npy header has no descr")?;
    let quote = descr.chars().next().filter(|&c| c == '\'' || c == '"');
    let descr = quote
        .and_then(|q| descr[1..].split(q).next())
        .ok_or("the .npy descr is not a string")?;
    let dtype = DESCRS
        .iter()
        .find(|(_, s)| *s == descr || (s.ends_with("b1") && descr == "?"))
        .map(|(d, _)| *d)
        .ok_or_else(|| format!(".npy dtype '{descr}' is not supported (bool, int32, int64, float16, float32, float64 are)"))?;
    if field(header, "fortran_order").is_some_and(|f| f.starts_with("True")) {
        return Err("Fortran-ordered .npy files are not supported".into());
    }
    let shape_text = field(header, "shape").ok_or("the .npy header has no shape")?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("the .npy shape is not a tuple")?;
    let shape: Vec<usize> = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad .npy dimension '{s}'")))
        .collect::<Result<_, _>>()?;
    Tensor::from_le_bytes(dtype, &shape, &bytes[start + len..]).map_err(|e| e.message)
}

/// The text after `'key':` in a header dict.
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))?;
    let rest = &header[at + key.len() + 2..];
    Some(rest.trim_start().strip_prefix(':')?.trim_start())
}

/// The arrays of an `.npz` file (`numpy.savez`: a zip archive of `.npy` files, stored
/// uncompressed), by name without the `.npy` suffix, in archive order. Compressed archives
/// (`savez_compressed`) are refused.
pub fn read_npz(bytes: &[u8]) -> Result<Vec<(String, Tensor)>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let u16_at = |i: usize| -> Result<usize, String> {
        (bytes
            .get(i..i + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize))
        .ok_or_else(|| format!("the archive ends inside a header at byte {i}"))
    };
    let u32_at = |i: usize| -> Result<usize, String> {
        (bytes
            .get(i..i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize))
        .ok_or_else(|| format!("the archive ends inside a header at byte {i}"))
    };
    // Local file headers ("PK\x03\x04") follow each other until the central directory.
    while bytes.get(at..at + 4) == Some(b"PK\x03\x04") {
        let (flags, method) = (u16_at(at + 6)?, u16_at(at + 8)?);
        let (mut size, name_len, extra_len) =
            (u32_at(at + 18)?, u16_at(at + 26)?, u16_at(at + 28)?);
        if method != 0 {
            return Err(
                "a compressed .npz (numpy.savez_compressed) is not read: save it with numpy.savez"
                    .into(),
            );
        }
        let name_at = at + 30;
        let name = bytes
            .get(name_at..name_at + name_len)
            .ok_or_else(|| format!("the archive ends inside a name at byte {name_at}"))?;
        let name = String::from_utf8_lossy(name).into_owned();
        let extra = bytes.get(name_at + name_len..name_at + name_len + extra_len);
        if size == 0xFFFF_FFFF || flags & 8 != 0 {
            // ZIP64 (numpy writes it for every entry) keeps the sizes in the extra field.
            size = zip64_size(extra.unwrap_or_default()).ok_or_else(|| {
                format!("entry '{name}' has no size (streamed archives are not read)")
            })?;
        }
        let data_at = name_at + name_len + extra_len;
        let data = bytes
            .get(data_at..data_at.saturating_add(size))
            .ok_or_else(|| format!("entry '{name}' runs past the end of the archive"))?;
        let t = read(data).map_err(|e| format!("entry '{name}': {e}"))?;
        out.push((name.trim_end_matches(".npy").to_string(), t));
        at = data_at + size;
    }
    if out.is_empty() {
        return Err("not an .npz archive (no entries)".into());
    }
    Ok(out)
}

/// The uncompressed size in a ZIP64 extra field (header id 1).
fn zip64_size(mut extra: &[u8]) -> Option<usize> {
    while extra.len() >= 4 {
        let id = u16::from_le_bytes([extra[0], extra[1]]);
        let len = u16::from_le_bytes([extra[2], extra[3]]) as usize;
        let body = extra.get(4..4 + len)?;
        if id == 1 && len >= 8 {
            return usize::try_from(u64::from_le_bytes(body[..8].try_into().ok()?)).ok();
        }
        extra = &extra[4 + len..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_each_dtype() {
        let cases = [
            Tensor::from_f32(vec![1.5, -2.0, 3.25, 0.0, 7.0, 8.5], &[2, 3]).unwrap(),
            Tensor::from_f64(vec![1e300], &[1]).unwrap(),
            Tensor::from_i64(vec![-5, 6], &[2]).unwrap(),
            Tensor::from_i32(vec![], &[0, 3]).unwrap(),
            Tensor::from_bool(vec![true, false], &[2]).unwrap(),
            Tensor::from_f64(vec![2.0], &[]).unwrap(),
        ];
        for t in cases {
            let back = read(&write(&t)).unwrap();
            assert_eq!(back.dtype(), t.dtype());
            assert_eq!(back.shape(), t.shape());
            assert_eq!(back.to_le_bytes(), t.to_le_bytes());
        }
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(read(b"hello").unwrap_err().contains("magic"));
        let mut f = write(&Tensor::from_f32(vec![1.0, 2.0], &[2]).unwrap());
        f.truncate(f.len() - 1);
        assert!(read(&f).unwrap_err().contains("bytes do not hold"));
    }

    /// A stored (uncompressed) zip entry, as numpy.savez writes one (without ZIP64).
    fn entry(name: &str, data: &[u8]) -> Vec<u8> {
        let mut e = b"PK\x03\x04".to_vec();
        e.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        e.extend_from_slice(&(data.len() as u32).to_le_bytes());
        e.extend_from_slice(&(data.len() as u32).to_le_bytes());
        e.extend_from_slice(&(name.len() as u16).to_le_bytes());
        e.extend_from_slice(&0u16.to_le_bytes());
        e.extend_from_slice(name.as_bytes());
        e.extend_from_slice(data);
        e
    }

    #[test]
    fn npz_archives_hold_arrays_in_order() {
        let a = Tensor::from_f32(vec![1.0, 2.0], &[2]).unwrap();
        let b = Tensor::from_u8(vec![7, 8, 9], &[3]).unwrap();
        let mut zip = entry("a.npy", &write(&a));
        zip.extend(entry("b.npy", &write(&b)));
        zip.extend_from_slice(b"PK\x01\x02 central directory");
        let got = read_npz(&zip).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0.as_str(), got[1].0.as_str()), ("a", "b"));
        assert!(got[0].1.same_as(&a) && got[1].1.same_as(&b));
        let mut compressed = entry("a.npy", &write(&a));
        compressed[8] = 8;
        assert!(
            read_npz(&compressed)
                .unwrap_err()
                .contains("numpy.savez_compressed")
        );
        let truncated = &zip[..40];
        assert!(read_npz(truncated).unwrap_err().contains("past the end"));
        assert_eq!(
            read_npz(b"nothing").unwrap_err(),
            "not an .npz archive (no entries)"
        );
    }
}
