//! Model files are untrusted input: at least 10,000 corrupted variants of real model files
//! (bit flips, truncations, size fields set huge, references out of range), each either
//! refused with an error or loaded and run to a value or a Python exception. None may panic,
//! abort or hang (runs have a time limit). The seed is fixed, so failures reproduce.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use anfora_model::schema;
use anfora_runtime::{LoadOptions, Model};
use common::{CASES, export, input, session};
use prost::Message;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const HUGE: [u64; 5] = [u64::MAX, u64::MAX / 2, 1 << 40, u32::MAX as u64, 1 << 31];

fn flip_bits(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut f = file.to_vec();
    for _ in 0..1 + rng.below(8) {
        let i = rng.below(f.len());
        f[i] ^= 1 << rng.below(8);
    }
    f
}

fn truncate(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    file[..rng.below(file.len())].to_vec()
}

/// One of the header's length and offset fields set huge or off by a little.
fn header_size(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut f = file.to_vec();
    let at = [16, 24, 32][rng.below(3)];
    let old = u64::from_le_bytes(f[at..at + 8].try_into().unwrap());
    let v = match rng.below(3) {
        0 => HUGE[rng.below(HUGE.len())],
        1 => old.wrapping_add(1 + rng.below(128) as u64),
        _ => old.wrapping_sub(1 + rng.below(128) as u64),
    };
    f[at..at + 8].copy_from_slice(&v.to_le_bytes());
    f
}

/// A reference, size or kind inside the graph message set to a wrong value, re-encoded.
fn message_field(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    let len = u64::from_le_bytes(file[16..24].try_into().unwrap()) as usize;
    let mut m = schema::Model::decode(&file[64..64 + len]).unwrap();
    let wild = |rng: &mut Rng, n: usize| -> u32 {
        match rng.below(3) {
            0 => n as u32 + rng.below(4) as u32,
            1 => u32::MAX - rng.below(4) as u32,
            _ => rng.below(n + 2) as u32,
        }
    };
    let (nodes, graphs, blobs, params) = (
        m.nodes.len(),
        m.graphs.len(),
        m.blobs.len(),
        m.parameters.len(),
    );
    match rng.below(10) {
        0 => m.entry = wild(rng, graphs),
        1 => {
            let g = rng.below(graphs);
            let graph = &mut m.graphs[g];
            match rng.below(4) {
                0 if !graph.params.is_empty() => {
                    let i = rng.below(graph.params.len());
                    graph.params[i] = wild(rng, nodes);
                }
                1 => graph.output = wild(rng, nodes + 1),
                2 if !graph.order.is_empty() => {
                    let i = rng.below(graph.order.len());
                    graph.order[i] = wild(rng, nodes);
                }
                _ => graph.kind = rng.below(12) as i32,
            }
        }
        2 | 3 => {
            let n = rng.below(nodes);
            let node = &mut m.nodes[n];
            match &mut node.kind {
                Some(schema::node::Kind::Apply(a)) => {
                    let i = rng.below(a.inputs.len());
                    a.inputs[i] = wild(rng, nodes);
                }
                Some(schema::node::Kind::Value(c)) => match &mut c.kind {
                    Some(schema::r#const::Kind::Graph(g)) => *g = wild(rng, graphs),
                    Some(schema::r#const::Kind::Tensor(t)) => t.blob = wild(rng, blobs),
                    Some(schema::r#const::Kind::Prim(p)) => p.push('x'),
                    _ => node.owner = wild(rng, graphs + 1),
                },
                _ => node.owner = wild(rng, graphs + 1),
            }
        }
        4 => {
            let b = rng.below(blobs.max(1));
            if let Some(blob) = m.blobs.get_mut(b) {
                blob.length = HUGE[rng.below(HUGE.len())];
                if rng.below(2) == 0 {
                    blob.offset = HUGE[rng.below(HUGE.len())];
                }
            }
        }
        5 if params > 0 => {
            let p = rng.below(params);
            if let Some(v) = &mut m.parameters[p].value {
                let d = rng.below(v.shape.len().max(1));
                match v.shape.get_mut(d) {
                    Some(dim) => *dim = HUGE[rng.below(HUGE.len())],
                    None => v.shape.push(2),
                }
            }
        }
        6 => {
            let n = rng.below(nodes);
            if let Some(t) = &mut m.nodes[n].r#type {
                match &mut t.kind {
                    Some(schema::node_type::Kind::Tensor(t)) => t.dtype = rng.below(9) as i32,
                    Some(schema::node_type::Kind::Ref(r)) => r.parameter = wild(rng, params + 1),
                    None => {}
                }
            }
        }
        7 => {
            let n = rng.below(nodes);
            m.nodes[n].span = Some(schema::Span {
                file: wild(rng, m.sources.len() + 1),
                start: rng.below(1 << 20) as u32,
                end: rng.below(1 << 20) as u32,
            });
        }
        8 => {
            if let Some(i) = m.inputs.first_mut()
                && let Some(schema::input::Kind::Tensor(t)) = &mut i.kind
            {
                t.shape.push(HUGE[rng.below(HUGE.len())] as i64);
            }
        }
        _ => {
            let n = rng.below(m.strings.len().max(1));
            if let Some(g) = m.graphs.get_mut(rng.below(graphs)) {
                g.name = n as u32 + rng.below(3) as u32 * m.strings.len() as u32;
            }
        }
    }
    let message = m.encode_to_vec();
    let blobs_start = u64::from_le_bytes(file[24..32].try_into().unwrap()) as usize;
    anfora_model::container::assemble(&message, &file[blobs_start..])
}

#[test]
fn corrupted_model_files_are_refused_or_run_cleanly() {
    let mut s = session();
    let originals: Vec<(Vec<u8>, &str)> = CASES
        .iter()
        .map(|(entry, literal)| (export(&mut s, entry, literal), *literal))
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut refused, mut ran, mut raised, mut panics) = (0, 0, 0, Vec::new());
    let variants = 12_000;
    for i in 0..variants {
        let (file, literal) = &originals[i % originals.len()];
        let bad = match rng.below(4) {
            0 => flip_bits(file, &mut rng),
            1 => truncate(file, &mut rng),
            2 => header_size(file, &mut rng),
            _ => message_field(file, &mut rng),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let model = Model::from_bytes(&bad, &LoadOptions::default())?;
            model.set_timeout(Some(Duration::from_millis(200)));
            model.run(&[input(literal)])
        }));
        match outcome {
            Err(_) => panics.push(i),
            Ok(Err(anfora_runtime::Error::Raised { .. })) => raised += 1,
            Ok(Err(e)) => {
                assert!(!e.to_string().is_empty());
                refused += 1
            }
            Ok(Ok(_)) => ran += 1,
        }
    }
    eprintln!("{variants} variants: {refused} refused, {ran} ran, {raised} raised");
    assert!(panics.is_empty(), "variants {panics:?} panicked");
    assert!(refused > variants / 2, "only {refused} refused");
}

#[test]
fn refusals_name_what_is_wrong() {
    let mut s = session();
    let file = export(&mut s, "fibonacci", "[10.0]");
    let refusal = |f: &[u8]| {
        Model::from_bytes(f, &LoadOptions::default())
            .err()
            .map(|e| e.to_string())
    };
    let load = |f: &[u8]| refusal(f).expect("refused");
    assert_eq!(
        load(b"\x7fELF...."),
        "not an anfora model file: it does not start with the magic bytes \"ANFORA\\0M\" (8 bytes long)"
    );
    assert_eq!(
        load(&file[..20]),
        "malformed model file at byte 20: the header needs 64 bytes; the file ends first"
    );
    let mut v = file.clone();
    v[8] = 9;
    assert_eq!(
        load(&v),
        "model file format version 9 is not supported (this runtime reads version 1)"
    );
    let mut v = file.clone();
    v[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(load(&v).starts_with("malformed model file at byte 16: the graph message's length 18446744073709551615 runs past the end of the file"));
    let mut rng = Rng(1);
    let mut v;
    loop {
        v = message_field(&file, &mut rng);
        let e = refusal(&v).unwrap_or_default();
        if e.contains("does not exist") {
            assert!(e.starts_with("invalid model"), "{e}");
            break;
        }
    }
    let limits = anfora_model::Limits {
        max_bytes: 100,
        ..Default::default()
    };
    let e = Model::from_bytes(
        &file,
        &LoadOptions {
            limits,
            device: None,
        },
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "model file too large: {} bytes would be allocated, over the cap of 100 bytes",
            file.len()
        )
    );
}
