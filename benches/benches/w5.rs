//! W5 end to end: the compiled `tanh(x*1.5+0.3)*sigmoid(x) - x/3` called on 4M float32 values
//! (4_194_304) through the session. The optimizer fuses the chain into one kernel. `shared`
//! keeps the caller's x (the kernel writes a new buffer); `moved` hands x over, so the result
//! may be written into x's buffer (x is rebuilt outside the timed part).

use anfora_benches::{W5_CHAIN, vector, warm};
use anfora_ops::Value;
use anfora_session::{Arg, Session};

const N: usize = 4_194_304;

fn main() {
    divan::main();
}

fn session(x: &Value) -> Session {
    warm(W5_CHAIN, "w5", &[Arg::from(x.clone())])
}

#[divan::bench(sample_count = 30)]
fn w5_4m_shared(b: divan::Bencher) {
    let x = Value::Tensor(vector(N, 3.0));
    let mut s = session(&x);
    b.bench_local(|| {
        let v = s
            .call("w5", vec![Arg::from(x.clone())], &mut std::io::sink())
            .unwrap();
        divan::black_box(v)
    });
}

#[divan::bench(sample_count = 30)]
fn w5_4m_moved(b: divan::Bencher) {
    let x = Value::Tensor(vector(N, 3.0));
    let mut s = session(&x);
    b.with_inputs(|| Value::Tensor(vector(N, 3.0)))
        .bench_local_values(|x| {
            let v = s
                .call("w5", vec![Arg::from(x)], &mut std::io::sink())
                .unwrap();
            divan::black_box(v)
        });
}
