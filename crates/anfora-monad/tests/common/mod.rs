//! Helpers shared by the auto-monad integration tests.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session, repr};

pub fn session(src: &str, engine: Engine) -> Session {
    let mut s = Session::load("m.py", src, Options::default());
    s.engine = engine;
    s
}

/// Runs `main(args)` and returns (printed output, repr of the result).
pub fn run(s: &mut Session, args: Vec<Value>) -> (String, String) {
    let mut out = Vec::new();
    let v = s
        .call("main", args.into_iter().map(Arg::from).collect(), &mut out)
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    (String::from_utf8(out).unwrap(), repr(&v))
}

pub fn both(src: &str, args: Vec<Value>) -> (String, String) {
    let compiled = run(&mut session(src, Engine::Compiled), args.clone());
    let reference = run(&mut session(src, Engine::Reference), args);
    assert_eq!(compiled, reference, "the engines disagree");
    compiled
}

pub fn dump(src: &str, stage: &str, args: Vec<Value>) -> String {
    let mut s = session(src, Engine::Compiled);
    let args: Vec<Arg> = args.into_iter().map(Arg::from).collect();
    let mut text = String::new();
    s.compile_pipeline("main", Some(&args), &mut |view| {
        if view.stage == stage {
            text = view.ir();
        }
    })
    .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    text
}
