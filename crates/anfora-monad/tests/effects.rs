//! The auto-monad stage end to end: dumps, random primitives, and the errors of Parameter
//! updates. (Values of Parameter programs against CPython are in the differential corpus,
//! `tests/corpus/effects_*.py`, run on both engines.)

mod common;

use anfora_ir::diag::Diagnostic;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, repr};
use common::{both, dump, run, session};

fn compile_errors(src: &str, args: Vec<Value>) -> Vec<Diagnostic> {
    let mut s = session(src, Engine::Compiled);
    match s.call(
        "main",
        args.into_iter().map(Arg::from).collect(),
        &mut std::io::sink(),
    ) {
        Err(Failure::Compile(d)) => d,
        Err(other) => panic!("expected a compile error, got {}", s.render(&other)),
        Ok(v) => panic!("expected a compile error, got {}", repr(&v)),
    }
}

fn runtime_error(src: &str, args: Vec<Value>) -> String {
    let mut s = session(src, Engine::Compiled);
    match s.call(
        "main",
        args.into_iter().map(Arg::from).collect(),
        &mut std::io::sink(),
    ) {
        Err(Failure::Runtime(e)) => format!("{}: {}", e.kind, e.message),
        Err(other) => panic!("expected a runtime error, got {}", s.render(&other)),
        Ok(v) => panic!("expected a runtime error, got {}", repr(&v)),
    }
}

const ORDER: &str = "\
import anfora
from anfora import ops

w = anfora.Parameter(ops.ones((2,)), name='w')

def main(x):
    a = w + x
    ops.assign(w, x * 2)
    b = w + x
    print('a', a)
    return a, b
";

#[test]
fn the_dump_shows_the_states_and_each_graphs_effects() {
    let ir = dump(ORDER, "auto_monad", vec![Value::Float(3.0)]);
    let lines: Vec<&str> = ir
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') || l.starts_with("# SideEffect"))
        .filter(|l| !l.trim_start().starts_with(':'))
        .collect();
    let text = lines.join("\n");
    let expected = "\
# SideEffect: { memory io load }
subgraph @main(%para1_x) {
  %0 = Load(%para.w, UMonad[U])
  %1 = UpdateState(UMonad[U], %0)
  %2(a) = Add(%0, %para1_x)
  %3 = Assign(%para.w, F64(6.0), %1)
  %4 = UpdateState(%1, %3)
  %5 = Load(%para.w, %4)
  %6 = UpdateState(%4, %5)
  %7(b) = Add(%5, %para1_x)
  %8 = Print(\"a\", %2, \" \", \"\\n\", IOMonad[IO])
  %9 = UpdateState(IOMonad[IO], %8)
  %10 = MakeTuple(%2, %7)
  %11 = Depend(%10, %6, %9)
  Return(%11)
}";
    assert!(text.contains(expected), "{ir}");
    // The memory and IO chains are independent: print's state never touches the Parameter's.
    assert_eq!(
        both(ORDER, vec![Value::Float(3.0)]),
        (
            "a [4. 4.]\n".to_string(),
            "(Tensor([4., 4.], dtype=float32), Tensor([9., 9.], dtype=float32))".to_string()
        )
    );
}

#[test]
fn loops_carry_the_states_and_stay_tail_calls() {
    let src = "\
import anfora
from anfora import ops

c = anfora.Parameter(ops.zeros(()), name='c')

def main(n):
    i = 0
    while i < n:
        c.assign_add(1.0)
        i = i + 1
    return c + 0
";
    let ir = dump(src, "auto_monad", vec![Value::Int(3)]);
    // The header takes the memory state and the body passes the updated one back.
    assert!(
        ir.contains("subgraph @↵main parent: [subgraph @main](%para2_фi, %para3_u)"),
        "{ir}"
    );
    assert!(ir.contains("%4 = call @↵main(%3, %2)"), "{ir}");
    assert!(ir.contains("call @↵main(I64(0), UMonad[U])"), "{ir}");
    // A long loop runs in constant space (the back edge is still a tail call).
    let (_, r) = both(src, vec![Value::Int(20000)]);
    assert_eq!(r, "Tensor(20000., dtype=float32)");
}

const RANDOM: &str = "\
import anfora
from anfora import ops

anfora.set_seed(7)

def main(n):
    a = ops.uniform((3,))
    b = ops.uniform((3,))
    same = ops.sum(a == b) == 3
    draws = ()
    for i in range(n):
        draws = draws + (ops.normal((2,)),)
    k = ops.randint(0, 10, (4,))
    return same, draws[0], draws[1], k, ops.bernoulli(ops.full((3,), 1.0)), ops.dropout(ops.ones((4,)), 0.0)
";

#[test]
fn random_primitives_draw_new_values_and_a_seed_reproduces_them() {
    let first = both(RANDOM, vec![Value::Int(2)]).1;
    let again = both(RANDOM, vec![Value::Int(2)]).1;
    assert_eq!(first, again, "the same seed gives the same draws");
    // Two identical calls are not merged, and each loop iteration draws anew.
    assert!(first.starts_with("(Tensor(False), "), "{first}");
    let ir = dump(RANDOM, "optimize", vec![Value::Int(2)]);
    assert_eq!(ir.matches("= UniformReal(").count(), 2, "{ir}");
    let parts: Vec<&str> = first.split("Tensor(").collect();
    assert_ne!(parts[1], parts[2], "loop iterations draw different values");
    assert!(
        first.contains(
            "Tensor([1., 1., 1.], dtype=float32), Tensor([1., 1., 1., 1.], dtype=float32))"
        ),
        "{first}"
    );
    // A different seed, different values.
    let other = both(
        &RANDOM.replace("set_seed(7)", "set_seed(8)"),
        vec![Value::Int(2)],
    )
    .1;
    assert_ne!(first, other);
}

#[test]
fn random_draws_keep_going_across_calls() {
    let src = "\
import anfora
from anfora import ops

def main():
    return ops.uniform((2,))
";
    let mut s = session(src, Engine::Compiled);
    let a = run(&mut s, vec![]).1;
    let b = run(&mut s, vec![]).1;
    assert_ne!(a, b, "a second call draws new values");
}

#[test]
fn dropout_zeroes_and_scales() {
    let src = "\
import anfora
from anfora import ops

anfora.set_seed(1)

def main():
    y = ops.dropout(ops.ones((1000,)), 0.25)
    kept = ops.sum(y > 0.0)
    return kept, ops.max(y), ops.min(y)
";
    let (_, r) = both(src, vec![]);
    assert!(
        r.ends_with("Tensor(1.3333334, dtype=float32), Tensor(0., dtype=float32))"),
        "{r}"
    );
    let kept: i64 = r["(Tensor(".len()..r.find(')').unwrap()].parse().unwrap();
    assert!((700..800).contains(&kept), "{r}");
}

#[test]
fn updates_that_do_not_fit_are_compile_errors() {
    let shape = "\
import anfora
from anfora import ops

w = anfora.Parameter(ops.zeros((2, 2)), name='w')

def main():
    w.assign_add(ops.ones((3,)))
    return 0
";
    let d = compile_errors(shape, vec![]);
    assert_eq!(d[0].code, "E0301");
    assert!(
        d[0].message.contains("(2, 2) and (3,)") || d[0].message.contains("shape"),
        "{}",
        d[0].message
    );
    let cast = "\
import anfora
from anfora import ops

n = anfora.Parameter(ops.zeros((2,), dtype=anfora.int64), name='n')

def main():
    n.assign_add(ops.ones((2,)))
    return 0
";
    let d = compile_errors(cast, vec![]);
    assert_eq!(
        d[0].message,
        "assign_add: cannot cast the update of Parameter 'n' from float64 to int64 with casting rule 'same_kind'"
    );
    let create = "\
import anfora
from anfora import ops

def main():
    p = anfora.Parameter(ops.zeros((2,)))
    return 0
";
    let d = compile_errors(create, vec![]);
    assert_eq!(
        d[0].message,
        "anfora.Parameter: Parameters can only be created by module-level code"
    );
    let not_param = "\
from anfora import ops

def main():
    ops.assign(ops.zeros((2,)), 1.0)
    return 0
";
    let d = compile_errors(not_param, vec![]);
    assert!(
        d[0].message
            .contains("ops.assign() writes a Parameter, but argument 1 is <Tensor"),
        "{}",
        d[0].message
    );
}

#[test]
fn update_errors_at_run_time_name_the_parameter() {
    let src = "\
import anfora
from anfora import ops

t = anfora.Parameter(ops.zeros((3,)), name='t')

def main(i):
    ops.scatter_update(t, ops.tensor([i]), ops.ones((1,)))
    return t
";
    assert_eq!(
        runtime_error(src, vec![Value::Int(5)]),
        "IndexError: index 5 is out of bounds for axis 0 with size 3"
    );
    let (_, r) = both(src, vec![Value::Int(-1)]);
    assert_eq!(r, "Tensor([0., 0., 1.], dtype=float32)");
}

#[test]
fn a_keyword_call_of_an_effectful_unknown_function_is_refused() {
    let src = "\
import anfora
from anfora import ops

w = anfora.Parameter(ops.zeros((2,)), name='w')

def add(x, k=1.0):
    w.assign_add(x * k)
    return 0

def sub(x, k=1.0):
    w.assign_sub(x * k)
    return 0

def main(x, c):
    f = add if ops.sum(w) > 0.0 else sub
    f(x, k=2.0)
    return w
";
    // The callee is one of two functions, chosen at run time (a call whose one callee
    // inference knows is bound when it specializes, and states are threaded as usual).
    let d = compile_errors(src, vec![Value::Float(1.0), Value::Bool(true)]);
    assert!(d.iter().any(|d| d.code == "E0401"), "{d:?}");
}

#[test]
fn cell_reads_and_writes_hang_on_the_memory_chain() {
    // `i` lives in a cell: the lambdas escape into a list and read it after the loop.
    let src = "\
def main(n):
    fs = ()
    for i in range(n):
        fs = fs + (lambda: i * 10,)
    return fs[0]() + fs[-1]()
";
    let ir = dump(src, "auto_monad", vec![Value::Int(3)]);
    // Made once when the function starts; each write takes the memory state and advances it.
    assert!(ir.contains("(cell.i) = MakeCell(Unbound)"), "{ir}");
    assert!(
        ir.contains("= CellSet($(@main:%0), %0, %para"),
        "the loop body writes the cell in its memory state:\n{ir}"
    );
    assert!(ir.contains("= CellGet($(@main:%0), %para"), "{ir}");
    assert!(ir.contains("= UpdateState(%para"), "{ir}");
    // The lambda reads the cell when it runs: both see the last value, as in Python.
    assert_eq!(both(src, vec![Value::Int(3)]), (String::new(), "40".into()));
}

#[test]
fn calls_of_closures_whose_identity_is_lost_pass_the_states() {
    // A list grown in a loop holds values inference cannot tell apart: the calls through it
    // reach the closures compiled for any arguments, which print and write cells.
    let src = "\
def main(n):
    fs = []
    count = 0
    for k in range(n):
        def tick(v):
            nonlocal count
            count = count + v
            print('tick', k, count)
            return count
        fs = fs + [tick]
    out = []
    for f in fs:
        out = out + [f(1)]
    return out, count
";
    let (printed, r) = both(src, vec![Value::Int(3)]);
    assert_eq!(printed, "tick 2 1\ntick 2 2\ntick 2 3\n");
    assert_eq!(r, "([1, 2, 3], 3)");
}

const COLLECTIVES: &str = "\
import anfora
from anfora import ops

w = anfora.Parameter(ops.ones((2,)), name='w')

def main(y):
    x = ops.ones((2,)) * y
    a = ops.all_reduce(x, 'sum')
    b = ops.all_reduce(x, 'sum')
    ops.broadcast(x, 0)
    print('a', a)
    ops.assign(w, a)
    return a + b
";

#[test]
fn collectives_hang_on_a_chain_of_their_own() {
    let ir = dump(COLLECTIVES, "auto_monad", vec![Value::Float(3.0)]);
    assert!(ir.contains("# SideEffect: { memory io comm }"), "{ir}");
    let body: Vec<&str> = ir
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('%'))
        .collect();
    let text = body.join("\n");
    for expected in [
        "%0(a) = AllReduce(Tensor(shape=[2], dtype=float32, value=[3. 3.]), \"sum\", CommMonad[C])",
        "%1 = UpdateState(CommMonad[C], %0)",
        "%2(b) = AllReduce(Tensor(shape=[2], dtype=float32, value=[3. 3.]), \"sum\", %1)",
        "%3 = UpdateState(%1, %2)",
        "%4 = Broadcast(Tensor(shape=[2], dtype=float32, value=[3. 3.]), I64(0), %3)",
        "%5 = UpdateState(%3, %4)",
        "%6 = Print(\"a\", %0, \" \", \"\\n\", IOMonad[IO])",
        "%10 = Add(%0, %2)",
        "%11 = Depend(%10, %9, %7, %5)",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{ir}");
    }
}

#[test]
fn the_optimizer_never_merges_reorders_or_drops_a_collective() {
    let ir = dump(COLLECTIVES, "optimize", vec![Value::Float(3.0)]);
    let calls: Vec<&str> = ir
        .lines()
        .filter_map(|l| {
            ["AllReduce(", "Broadcast("]
                .into_iter()
                .find(|p| l.contains(p))
        })
        .collect();
    // Two equal all_reduces stay two, and the broadcast whose value is unused stays, in
    // program order.
    assert_eq!(calls, ["AllReduce(", "AllReduce(", "Broadcast("], "{ir}");
}

#[test]
fn a_collective_without_a_process_group_is_a_clear_runtime_error() {
    let err = runtime_error(COLLECTIVES, vec![Value::Float(3.0)]);
    assert!(
        err.starts_with("RuntimeError: no process group: call anfora.distributed.init()"),
        "{err}"
    );
}
