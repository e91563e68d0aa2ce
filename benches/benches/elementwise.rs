//! Elementwise kernels (filled in with the fused-kernel work).

fn main() {
    divan::main();
}
