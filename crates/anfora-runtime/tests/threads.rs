//! One thread means one thread: with `set_num_threads(1)` a run computes on the calling
//! thread and creates no other (the process's thread count is unchanged by loading and
//! running, on a thread that had never run a model). Alone in its test binary, so no other
//! test's threads are counted.

mod common;

use anfora_runtime::{LoadOptions, Model};
use common::{export, input, session};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

#[test]
fn one_thread_runs_on_the_caller_alone() {
    let mut s = session();
    let file = export(&mut s, "mlp", "[[1.0, 2.0], [-0.5, 0.25]]");
    anfora_runtime::set_num_threads(1);
    std::thread::spawn(move || {
        let before = threads();
        let model = Model::from_bytes(&file, &LoadOptions::default()).unwrap();
        for _ in 0..100 {
            model.run(&[input("[[1.0, 2.0], [-0.5, 0.25]]")]).unwrap();
        }
        assert_eq!(threads(), before, "threads were created");
        assert_eq!(rayon::current_num_threads(), 1);
        assert_eq!(anfora_runtime::num_threads(), 1);
    })
    .join()
    .unwrap();
}
