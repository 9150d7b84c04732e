//! Reads tensors from a `.safetensors` file: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the raw data. F32, F16 and BF16 tensors
//! are widened to f32.

use std::collections::HashMap;

use serde_json::Value;

use crate::EmbedError;

/// One tensor, as f32 in row-major order.
#[derive(Debug)]
pub(crate) struct Tensor {
    pub(crate) shape: Vec<usize>,
    pub(crate) data: Vec<f32>,
}

/// All floating-point tensors of a file, by name.
#[derive(Debug)]
pub(crate) struct Tensors(HashMap<String, Tensor>);

impl Tensors {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, EmbedError> {
        let bad = |m: String| EmbedError::Model(format!("model.safetensors: {m}"));
        let len_bytes: [u8; 8] = bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("shorter than its header".into()))?;
        let header_len = usize::try_from(u64::from_le_bytes(len_bytes))
            .map_err(|_| bad("header length too large".into()))?;
        let data_start = 8usize
            .checked_add(header_len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("header runs past the end of the file".into()))?;
        let header: serde_json::Map<String, Value> = serde_json::from_slice(&bytes[8..data_start])
            .map_err(|e| bad(format!("header is not JSON: {e}")))?;
        let data = &bytes[data_start..];
        let mut out = HashMap::new();
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let dtype = info.get("dtype").and_then(Value::as_str).unwrap_or("");
            let width = match dtype {
                "F32" => 4,
                "F16" | "BF16" => 2,
                _ => continue, // integer buffers such as position_ids are not weights
            };
            let shape: Vec<usize> = info
                .get("shape")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|d| d.as_u64().map(|d| d as usize))
                        .collect()
                })
                .unwrap_or_default();
            let range = info
                .get("data_offsets")
                .and_then(Value::as_array)
                .and_then(|o| Some((o.first()?.as_u64()? as usize, o.get(1)?.as_u64()? as usize)))
                .ok_or_else(|| bad(format!("{name} has no data_offsets")))?;
            let count: usize = shape.iter().product();
            let raw = data
                .get(range.0..range.1)
                .filter(|r| r.len() == count * width)
                .ok_or_else(|| bad(format!("{name}'s bytes do not match its shape")))?;
            let values = match dtype {
                "F32" => raw
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
                "BF16" => raw
                    .chunks_exact(2)
                    .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                    .collect(),
                _ => raw
                    .chunks_exact(2)
                    .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                    .collect(),
            };
            out.insert(
                name,
                Tensor {
                    shape,
                    data: values,
                },
            );
        }
        Ok(Self(out))
    }

    /// Takes the tensor `name`, checking its shape.
    pub(crate) fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
        // Checkpoints exported from a task model prefix every weight with `bert.`.
        let t = self
            .0
            .remove(name)
            .or_else(|| self.0.remove(&format!("bert.{name}")))
            .ok_or_else(|| EmbedError::Model(format!("model.safetensors has no tensor {name}")))?;
        if t.shape != shape {
            return Err(EmbedError::Model(format!(
                "model.safetensors: {name} has shape {:?}, expected {shape:?}",
                t.shape
            )));
        }
        Ok(t.data)
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise the mantissa.
            let shift = m.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((m << shift) & 0x3ff) << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn reads_f32_f16_bf16() {
        let mut data = Vec::new();
        data.extend_from_slice(&1.5f32.to_le_bytes());
        data.extend_from_slice(&0x3c00u16.to_le_bytes()); // f16 1.0
        data.extend_from_slice(&0xc000u16.to_le_bytes()); // f16 -2.0
        data.extend_from_slice(&0x3f80u16.to_le_bytes()); // bf16 1.0
        let h = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[4,8]},"c":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]}}"#;
        let mut t = Tensors::parse(&file(h, &data)).unwrap();
        assert_eq!(t.take("a", &[1]).unwrap(), [1.5]);
        assert_eq!(t.take("b", &[2]).unwrap(), [1.0, -2.0]);
        assert_eq!(t.take("c", &[1]).unwrap(), [1.0]);
        assert!(t.take("a", &[1]).is_err(), "taken once");
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    }

    #[test]
    fn refuses_truncated_and_mismatched_files() {
        assert!(Tensors::parse(&[1, 2]).is_err());
        assert!(Tensors::parse(&file("{", &[])).is_err());
        let mut long = 100u64.to_le_bytes().to_vec();
        long.extend_from_slice(b"{}");
        assert!(Tensors::parse(&long).is_err());
        let h = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#;
        let err = Tensors::parse(&file(h, &[0; 4])).unwrap_err();
        assert!(err.to_string().contains("shape"), "{err}");
        let h = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
        let mut t = Tensors::parse(&file(h, &[0; 4])).unwrap();
        assert!(
            t.take("a", &[2])
                .unwrap_err()
                .to_string()
                .contains("expected [2]")
        );
    }
}
