//! The MPI group under real `mpirun`: this test binary starts itself in 2 and 3 processes,
//! where `child` runs the collectives through `anfora_ops::collective` and checks their
//! values (a wrong value panics, which fails the job).

use std::process::Command;
use std::time::Duration;

use anfora_ops::collective::{all_gather, all_reduce, all_reduce_many, barrier, broadcast};
use anfora_tensor::Tensor;

const CHILD: &str = "ANFORA_DIST_TEST_CHILD";

fn job(n: usize) -> (bool, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &n.to_string(),
        ])
        .arg(exe)
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("mpirun runs (scripts/setup.sh installs OpenMPI)");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn collectives_agree_with_their_definitions_in_2_and_3_processes() {
    for n in [2, 3] {
        let (ok, text) = job(n);
        assert!(ok, "{text}");
        for r in 0..n {
            assert!(
                text.contains(&format!("rank {r} of {n}: collectives ok")),
                "{text}"
            );
        }
    }
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_f64_vec().into_iter().map(|v| v as f32).collect()
}

/// Runs only as a process of the job above.
#[test]
fn child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let g = anfora_dist::init(Duration::from_secs(30)).expect("MPI starts");
    let (r, n) = (g.rank(), g.size());
    let x = Tensor::from_f32(vec![r as f32, 1.0, 2.0 * r as f32], &[3]).unwrap();
    let tri = (n * (n - 1) / 2) as f32;
    assert_eq!(
        f32s(&all_reduce(&x, "sum").unwrap()),
        [tri, n as f32, 2.0 * tri]
    );
    assert_eq!(
        f32s(&all_reduce(&x, "max").unwrap()),
        [(n - 1) as f32, 1.0, 2.0 * (n - 1) as f32]
    );
    let gathered = all_gather(&x, 0).unwrap();
    assert_eq!(gathered.shape(), [3 * n]);
    assert_eq!(f32s(&gathered)[3 * (n - 1)], (n - 1) as f32);
    assert_eq!(f32s(&broadcast(&x, 1).unwrap()), [1.0, 1.0, 2.0]);
    let ints = Tensor::from_i64(vec![r as i64 + 1], &[1]).unwrap();
    let parts = all_reduce_many(&[x.clone(), x], "mean").unwrap();
    assert_eq!(f32s(&parts[1]), [tri / n as f32, 1.0, 2.0 * tri / n as f32]);
    assert_eq!(
        all_reduce(&ints, "sum").unwrap().to_f64_vec(),
        [(n * (n + 1) / 2) as f64]
    );
    barrier().unwrap();
    println!("rank {r} of {n}: collectives ok");
    anfora_dist::finalize();
}
