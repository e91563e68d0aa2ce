//! One primitive call as ONNX nodes. Every operand is cast to the dtype the call computes in
//! (the result's, from its abstract, for arithmetic), so numpy's promotion, NEP 50's weak Python
//! scalars included, is written out as explicit `Cast`s.

use anfora_ir::{Const, NodeId, Prim, Span};
use anfora_ops::Abs;
use anfora_tensor::{DType, Scalar, promote_types};

use crate::{Exporter, OnnxError, Result, Tv, Val, attr_int, attr_ints, attr_tensor};

/// The dtype, shape and weakness a call's abstract gives its result.
fn result_type(a: &Abs) -> Option<(DType, Vec<Option<usize>>, bool)> {
    match a {
        Abs::Tensor(t) => Some((t.dtype, t.shape.clone(), false)),
        Abs::Int(_) => Some((DType::I64, vec![], true)),
        Abs::Float(_) => Some((DType::F64, vec![], true)),
        Abs::Bool(_) => Some((DType::Bool, vec![], true)),
        _ => None,
    }
}

fn unsupported(p: Prim, why: &str, span: Span) -> OnnxError {
    OnnxError::new(
        format!("primitive {}", p.name()),
        format!("the primitive `{}` {why}", p.name()),
        span,
    )
}

/// The dtype a comparison of `a` and `b` computes in (numpy's, Python scalars weak).
fn common_dtype(a: &Tv, b: &Tv) -> DType {
    fn rank(d: DType) -> u8 {
        match d {
            DType::Bool => 0,
            d if d.is_int() => 1,
            _ => 2,
        }
    }
    match (a.weak, b.weak) {
        (true, false) | (false, true) => {
            let (s, t) = if a.weak { (a, b) } else { (b, a) };
            if rank(s.dtype) <= rank(t.dtype) {
                t.dtype
            } else if rank(s.dtype) == 2 {
                DType::F64
            } else {
                DType::I64
            }
        }
        (true, true) => {
            if rank(a.dtype) >= rank(b.dtype) {
                a.dtype
            } else {
                b.dtype
            }
        }
        (false, false) => promote_types(a.dtype, b.dtype),
    }
}

fn const_int(v: &Val) -> Option<i64> {
    match v {
        Val::Const(Const::Int(i)) => Some(*i),
        Val::Const(Const::Bool(b)) => Some(i64::from(*b)),
        _ => None,
    }
}

fn const_bool(v: &Val) -> Option<bool> {
    match v {
        Val::Const(Const::Bool(b)) => Some(*b),
        Val::Const(Const::Int(i)) => Some(*i != 0),
        _ => None,
    }
}

/// An int or a tuple/list of ints; `None` for Python's None.
fn const_ints(v: &Val) -> Option<Option<Vec<i64>>> {
    match v {
        Val::Const(Const::None) => Some(None),
        Val::Const(Const::Int(i)) => Some(Some(vec![*i])),
        Val::Const(Const::Tuple(items) | Const::List(items)) => items
            .iter()
            .map(|c| match c {
                Const::Int(i) => Some(*i),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(Some),
        _ => None,
    }
}

fn pair(v: &Val) -> Option<[i64; 2]> {
    match const_ints(v)?? {
        ref x if x.len() == 1 => Some([x[0], x[0]]),
        ref x if x.len() == 2 => Some([x[0], x[1]]),
        _ => None,
    }
}

fn normalize_axis(axis: i64, rank: usize) -> i64 {
    if axis < 0 { axis + rank as i64 } else { axis }
}

fn static_shape(shape: &[Option<usize>]) -> Option<Vec<i64>> {
    shape.iter().map(|d| d.map(|v| v as i64)).collect()
}

impl Exporter<'_> {
    pub(crate) fn prim(&mut self, n: NodeId, p: Prim, args: &[Val]) -> Result<Val> {
        let span = self.span(n);
        let result = self.abs_of(n).clone();
        self.current_result = Some(result.clone());
        // A call whose value inference knows is that constant.
        if let Abs::Tensor(t) = &result
            && let Some(v) = &t.value
            && !matches!(p, Prim::Load)
        {
            return Ok(Val::T(self.constant(v, false, span)?));
        }
        let rt = result_type(&result);
        let need_rt = || {
            rt.clone().ok_or_else(|| {
                unsupported(
                    p,
                    "gives a value that is not a tensor or a number here",
                    span,
                )
            })
        };
        use Prim as P;
        let onnx_binary = match p {
            P::Add | P::InplaceAdd => Some("Add"),
            P::Sub => Some("Sub"),
            P::Mul | P::InplaceMul => Some("Mul"),
            P::Div => Some("Div"),
            P::Pow => Some("Pow"),
            P::Maximum => Some("Max"),
            P::Minimum => Some("Min"),
            _ => None,
        };
        if let Some(op) = onnx_binary {
            let (d, shape, weak) = need_rt()?;
            if d == DType::Bool && op != "Max" && op != "Min" {
                return Err(unsupported(p, "on booleans has no ONNX translation", span));
            }
            let a = self.operand(&args[0], d, span)?;
            let b = self.operand(&args[1], d, span)?;
            return Ok(Val::T(self.emit(
                op,
                vec![a.name, b.name],
                vec![],
                d,
                shape,
                weak,
            )));
        }
        let compare = match p {
            P::Eq => Some(("Equal", false)),
            P::Ne => Some(("Equal", true)),
            P::Lt => Some(("Less", false)),
            P::Le => Some(("LessOrEqual", false)),
            P::Gt => Some(("Greater", false)),
            P::Ge => Some(("GreaterOrEqual", false)),
            _ => None,
        };
        if let Some((op, negate)) = compare {
            let (_, shape, weak) = need_rt()?;
            let a = self.tensor(&args[0], span)?;
            let b = self.tensor(&args[1], span)?;
            let d = common_dtype(&a, &b);
            let a = self.operand(&args[0], d, span)?;
            let b = self.operand(&args[1], d, span)?;
            let r = self.emit(
                op,
                vec![a.name, b.name],
                vec![],
                DType::Bool,
                shape.clone(),
                weak,
            );
            return Ok(Val::T(if negate {
                self.emit("Not", vec![r.name], vec![], DType::Bool, shape, weak)
            } else {
                r
            }));
        }
        let unary = match p {
            P::Neg => Some("Neg"),
            P::Abs => Some("Abs"),
            P::Exp => Some("Exp"),
            P::Log => Some("Log"),
            P::Sqrt => Some("Sqrt"),
            P::Tanh => Some("Tanh"),
            P::Sin => Some("Sin"),
            P::Cos => Some("Cos"),
            P::Sigmoid => Some("Sigmoid"),
            P::Relu => Some("Relu"),
            P::Erf => Some("Erf"),
            P::Sign => Some("Sign"),
            P::Softplus => Some("Softplus"),
            P::HardSwish => Some("HardSwish"),
            P::Pos => Some("Identity"),
            _ => None,
        };
        if let Some(op) = unary {
            let (d, shape, weak) = need_rt()?;
            let x = self.operand(&args[0], d, span)?;
            return Ok(Val::T(self.emit(op, vec![x.name], vec![], d, shape, weak)));
        }
        match p {
            P::Depend => Ok(args[0].clone()),
            P::UpdateState => Ok(Val::Monad),
            P::CheckBound => Ok(args[0].clone()),
            P::Load => match &args[0] {
                Val::Const(Const::Ref(r)) => {
                    let r = r.clone();
                    Ok(Val::T(self.param_value(&r, span)?))
                }
                _ => Err(unsupported(
                    p,
                    "of a Parameter not known at compile time",
                    span,
                )),
            },
            P::MakeTuple | P::MakeList => Ok(Val::Tuple(args.to_vec())),
            P::MakeSlice => {
                let bound = |v: &Val| match v {
                    Val::Const(Const::None) => Some(None),
                    v => const_int(v).map(Some),
                };
                match (bound(&args[0]), bound(&args[1]), bound(&args[2])) {
                    (Some(start), Some(stop), Some(step)) if step != Some(0) => Ok(Val::Slice {
                        start,
                        stop,
                        step: step.unwrap_or(1),
                    }),
                    _ => Err(unsupported(
                        p,
                        "with bounds not known at compile time",
                        span,
                    )),
                }
            }
            P::Range => {
                let zero = Val::Const(Const::Int(0));
                let (start, stop, step) = match args {
                    [stop] => (zero, stop.clone(), 1),
                    [start, stop] => (start.clone(), stop.clone(), 1),
                    [start, stop, step] => match const_int(step) {
                        Some(s) if s != 0 => (start.clone(), stop.clone(), s),
                        _ => {
                            return Err(unsupported(
                                p,
                                "with a step not known at compile time",
                                span,
                            ));
                        }
                    },
                    _ => return Err(unsupported(p, "with these arguments", span)),
                };
                Ok(Val::Range {
                    start: Box::new(start),
                    stop: Box::new(stop),
                    step,
                })
            }
            P::IterLen => match &args[0] {
                Val::Tuple(items) => Ok(Val::Const(Const::Int(items.len() as i64))),
                Val::Const(Const::Tuple(items) | Const::List(items)) => {
                    Ok(Val::Const(Const::Int(items.len() as i64)))
                }
                Val::Range { start, stop, step } => self.range_len(start, stop, *step, span),
                _ => Err(unsupported(
                    p,
                    "of a value that is not a tuple or a range",
                    span,
                )),
            },
            P::TupleGetItem | P::GetItem => self.get_item(p, args, span),
            P::Switch => {
                let cond = self.truth(&args[0], span)?;
                match (&args[1], &args[2]) {
                    (Val::Graph(t), Val::Graph(f)) => Ok(Val::Switch { cond, t: *t, f: *f }),
                    _ => Err(unsupported(
                        p,
                        "choosing between values that are not functions",
                        span,
                    )),
                }
            }
            P::Truth => Ok(Val::T(self.truth(&args[0], span)?)),
            P::Not | P::LogicalNot => {
                let (_, shape, weak) = need_rt()?;
                let x = if p == P::Not {
                    self.truth(&args[0], span)?
                } else {
                    self.operand(&args[0], DType::Bool, span)?
                };
                Ok(Val::T(self.emit(
                    "Not",
                    vec![x.name],
                    vec![],
                    DType::Bool,
                    shape,
                    weak,
                )))
            }
            P::Log1p | P::Expm1 | P::Rsqrt | P::Silu | P::Gelu => self.composite(p, args, span),
            P::FloorDiv | P::Mod => self.floor_div_mod(p, args, span),
            P::Cast => {
                let (d, shape, weak) = need_rt()?;
                let x = self.tensor(&args[0], span)?;
                let x = Tv { shape, weak, ..x };
                Ok(Val::T(self.cast(x, d)))
            }
            P::Where => {
                let (d, shape, weak) = need_rt()?;
                let c = self.operand(&args[0], DType::Bool, span)?;
                let x = self.operand(&args[1], d, span)?;
                let y = self.operand(&args[2], d, span)?;
                Ok(Val::T(self.emit(
                    "Where",
                    vec![c.name, x.name, y.name],
                    vec![],
                    d,
                    shape,
                    weak,
                )))
            }
            P::Clip => {
                let (d, shape, weak) = need_rt()?;
                let x = self.operand(&args[0], d, span)?;
                let mut inputs = vec![x.name];
                for bound in &args[1..3] {
                    inputs.push(match bound {
                        Val::Const(Const::None) => String::new(),
                        v => self.operand(v, d, span)?.name,
                    });
                }
                while inputs.last().is_some_and(String::is_empty) {
                    inputs.pop();
                }
                Ok(Val::T(self.emit("Clip", inputs, vec![], d, shape, weak)))
            }
            P::ReduceSum
            | P::ReduceMean
            | P::ReduceMax
            | P::ReduceMin
            | P::ReduceProd
            | P::LogSumExp => self.reduce(p, args, span),
            P::ArgMax | P::ArgMin => self.arg_reduce(p, args, span),
            P::Softmax | P::LogSoftmax => {
                let (d, shape, _) = need_rt()?;
                let x = self.operand(&args[0], d, span)?;
                let axis = const_int(&args[1]).ok_or_else(|| {
                    unsupported(p, "with an axis not known at compile time", span)
                })?;
                let op = if p == P::Softmax {
                    "Softmax"
                } else {
                    "LogSoftmax"
                };
                Ok(Val::T(self.emit(
                    op,
                    vec![x.name],
                    vec![attr_int("axis", axis)],
                    d,
                    shape,
                    false,
                )))
            }
            P::MatMul => {
                let (d, shape, _) = need_rt()?;
                let a = self.operand(&args[0], d, span)?;
                let b = self.operand(&args[1], d, span)?;
                Ok(Val::T(self.emit(
                    "MatMul",
                    vec![a.name, b.name],
                    vec![],
                    d,
                    shape,
                    false,
                )))
            }
            P::Gemm => {
                let (d, shape, _) = need_rt()?;
                let a = self.operand(&args[0], d, span)?;
                let b = self.operand(&args[1], d, span)?;
                let (Some(ta), Some(tb)) = (const_bool(&args[3]), const_bool(&args[4])) else {
                    return Err(unsupported(
                        p,
                        "with transposes not known at compile time",
                        span,
                    ));
                };
                let mut inputs = vec![a.name, b.name];
                if !matches!(args[2], Val::Const(Const::None)) {
                    inputs.push(self.operand(&args[2], d, span)?.name);
                }
                let attrs = vec![
                    attr_int("transA", i64::from(ta)),
                    attr_int("transB", i64::from(tb)),
                ];
                Ok(Val::T(self.emit("Gemm", inputs, attrs, d, shape, false)))
            }
            P::Concat | P::Stack => {
                let (d, shape, _) = need_rt()?;
                let items: Vec<Val> = match &args[0] {
                    Val::Tuple(vs) => vs.clone(),
                    Val::Const(Const::Tuple(cs) | Const::List(cs)) => {
                        cs.iter().cloned().map(Val::Const).collect()
                    }
                    _ => {
                        return Err(unsupported(
                            p,
                            "of a sequence not known at compile time",
                            span,
                        ));
                    }
                };
                let axis = const_int(&args[1]).ok_or_else(|| {
                    unsupported(p, "along an axis not known at compile time", span)
                })?;
                let rank = shape.len();
                let axis = normalize_axis(axis, rank);
                let mut names = Vec::new();
                for item in &items {
                    let t = self.operand(item, d, span)?;
                    names.push(if p == P::Stack {
                        // Each item gets the new axis, then they are joined along it.
                        let mut s = t.shape.clone();
                        s.insert(axis as usize, Some(1));
                        let axes = self.ints(&[axis], span)?;
                        self.emit("Unsqueeze", vec![t.name, axes], vec![], d, s, false)
                            .name
                    } else {
                        t.name
                    });
                }
                Ok(Val::T(self.emit(
                    "Concat",
                    names,
                    vec![attr_int("axis", axis)],
                    d,
                    shape,
                    false,
                )))
            }
            P::Conv2D => self.conv2d(p, args, span),
            P::MaxPool2D | P::AvgPool2D => self.pool2d(p, args, span),
            P::Reshape | P::Squeeze | P::ExpandDims => {
                let (d, shape, _) = need_rt()?;
                let x = self.tensor(&args[0], span)?;
                let target = match static_shape(&shape) {
                    Some(s) => s,
                    None if p == P::Reshape => const_ints(&args[1]).flatten().ok_or_else(|| {
                        unsupported(p, "to a shape not known at compile time", span)
                    })?,
                    None => return Err(unsupported(p, "of a tensor of unknown shape", span)),
                };
                let target = self.ints(&target, span)?;
                Ok(Val::T(self.emit(
                    "Reshape",
                    vec![x.name, target],
                    vec![],
                    d,
                    shape,
                    false,
                )))
            }
            P::Transpose | P::Permute => {
                let (d, shape, _) = need_rt()?;
                let x = self.tensor(&args[0], span)?;
                let rank = x.shape.len();
                let perm: Vec<i64> = match const_ints(&args[1]) {
                    Some(None) => (0..rank as i64).rev().collect(),
                    Some(Some(v)) => v.iter().map(|&a| normalize_axis(a, rank)).collect(),
                    None => {
                        return Err(unsupported(p, "with axes not known at compile time", span));
                    }
                };
                Ok(Val::T(self.emit(
                    "Transpose",
                    vec![x.name],
                    vec![attr_ints("perm", &perm)],
                    d,
                    shape,
                    false,
                )))
            }
            P::BroadcastTo => {
                let (d, shape, _) = need_rt()?;
                let x = self.operand(&args[0], d, span)?;
                let target = static_shape(&shape)
                    .ok_or_else(|| unsupported(p, "to a shape not known at compile time", span))?;
                let target = self.ints(&target, span)?;
                Ok(Val::T(self.emit(
                    "Expand",
                    vec![x.name, target],
                    vec![],
                    d,
                    shape,
                    false,
                )))
            }
            P::Zeros | P::Ones | P::Full | P::ZerosLike | P::OnesLike => {
                let (d, shape, _) = need_rt()?;
                let dims = static_shape(&shape)
                    .ok_or_else(|| unsupported(p, "of a shape not known at compile time", span))?;
                let fill = match p {
                    P::Zeros | P::ZerosLike => Some(Scalar::Int(0)),
                    P::Ones | P::OnesLike => Some(Scalar::Int(1)),
                    _ => match &args[1] {
                        Val::Const(Const::Int(i)) => Some(Scalar::Int(*i)),
                        Val::Const(Const::Float(f)) => Some(Scalar::Float(*f)),
                        Val::Const(Const::Bool(b)) => Some(Scalar::Bool(*b)),
                        _ => None,
                    },
                };
                let target = self.ints(&dims, span)?;
                match fill {
                    Some(s) => {
                        let t = crate::scalar_tensor(s, d)
                            .and_then(|t| t.reshape(&[1]).ok())
                            .ok_or_else(|| unsupported(p, "with this fill value", span))?;
                        let value = crate::tensor_proto("value", &t, span)?;
                        Ok(Val::T(self.emit(
                            "ConstantOfShape",
                            vec![target],
                            vec![attr_tensor("value", value)],
                            d,
                            shape,
                            false,
                        )))
                    }
                    None => {
                        let v = self.operand(&args[1], d, span)?;
                        Ok(Val::T(self.emit(
                            "Expand",
                            vec![v.name, target],
                            vec![],
                            d,
                            shape,
                            false,
                        )))
                    }
                }
            }
            _ => {
                let e = p.effects();
                let why = if e.io {
                    "is an effect (print, assert, raise): an ONNX model computes values only"
                } else if e.mem {
                    "writes a Parameter: an ONNX model for inference cannot update its weights"
                } else if e.comm {
                    "communicates with other processes (a collective), which ONNX cannot express"
                } else if e.hidden {
                    "draws random numbers, which anfora's ONNX export does not write"
                } else if p == P::Partial {
                    "makes a closure (a partial application): ONNX values are tensors"
                } else {
                    "has no ONNX translation"
                };
                Err(unsupported(p, why, span))
            }
        }
    }

    fn param_value(&mut self, r: &anfora_ir::ParamRef, span: Span) -> Result<Tv> {
        self.tensor(&Val::Const(Const::Ref(r.clone())), span)
    }

    /// Basic indexing of a tensor (ints, slices, `None`, `...`): one `Slice` over the indexed
    /// axes, then a `Reshape` to the result's shape (dropping the axes ints took, adding the
    /// new ones). An int known only at run time, alone, is a `Gather`.
    fn index_tensor(&mut self, p: Prim, x: Tv, index: &Val, span: Span) -> Result<Val> {
        let (d, shape, _) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        if let Val::T(i) = index
            && i.shape.is_empty()
            && i.dtype.is_int()
        {
            let i = self.cast(i.clone(), DType::I64);
            return Ok(Val::T(self.emit(
                "Gather",
                vec![x.name, i.name],
                vec![attr_int("axis", 0)],
                d,
                shape,
                false,
            )));
        }
        let items: Vec<Val> = match index {
            Val::Tuple(vs) => vs.clone(),
            Val::Const(Const::Tuple(cs)) => cs.iter().cloned().map(Val::Const).collect(),
            v => vec![v.clone()],
        };
        let rank = x.shape.len();
        let consumed = items
            .iter()
            .filter(|v| !matches!(v, Val::Const(Const::None | Const::Ellipsis)))
            .count();
        let (mut starts, mut ends, mut axes, mut steps) = (vec![], vec![], vec![], vec![]);
        let mut axis = 0i64;
        for item in &items {
            match item {
                Val::Const(Const::None) => {}
                Val::Const(Const::Ellipsis) => axis += rank as i64 - consumed as i64,
                Val::Slice { start, stop, step } => {
                    let (lo, hi) = if *step > 0 {
                        (0, i64::MAX)
                    } else {
                        (i64::MAX, i64::MIN)
                    };
                    starts.push(start.unwrap_or(lo));
                    ends.push(stop.unwrap_or(hi));
                    axes.push(axis);
                    steps.push(*step);
                    axis += 1;
                }
                v => match const_int(v) {
                    Some(i) if !matches!(v, Val::Const(Const::Bool(_))) => {
                        starts.push(i);
                        ends.push(if i == -1 { i64::MAX } else { i + 1 });
                        axes.push(axis);
                        steps.push(1);
                        axis += 1;
                    }
                    _ => {
                        return Err(unsupported(
                            p,
                            "with a tensor or run-time index (advanced indexing) has no ONNX translation",
                            span,
                        ));
                    }
                },
            }
        }
        let target = static_shape(&shape)
            .ok_or_else(|| unsupported(p, "giving a shape not known at compile time", span))?;
        let mut y = x;
        if !axes.is_empty() {
            let ins = vec![
                y.name,
                self.ints(&starts, span)?,
                self.ints(&ends, span)?,
                self.ints(&axes, span)?,
                self.ints(&steps, span)?,
            ];
            y = self.emit("Slice", ins, vec![], d, vec![None; rank], false);
        }
        let target = self.ints(&target, span)?;
        Ok(Val::T(self.emit(
            "Reshape",
            vec![y.name, target],
            vec![],
            d,
            shape,
            false,
        )))
    }

    /// `len(range(start, stop, step))` as a Python int.
    fn range_len(&mut self, start: &Val, stop: &Val, step: i64, span: Span) -> Result<Val> {
        if let (Some(a), Some(b)) = (const_int(start), const_int(stop)) {
            let n = if step > 0 {
                (b - a + step - 1).div_euclid(step)
            } else {
                (a - b - step - 1).div_euclid(-step)
            };
            return Ok(Val::Const(Const::Int(n.max(0))));
        }
        let a = self.operand(start, DType::I64, span)?;
        let b = self.operand(stop, DType::I64, span)?;
        let (hi, lo) = if step > 0 { (b, a) } else { (a, b) };
        let int = |s: &mut Self, op: &str, ins: Vec<String>| {
            s.emit(op, ins, vec![], DType::I64, vec![], true)
        };
        let diff = int(self, "Sub", vec![hi.name, lo.name]);
        let zero = self.scalar(Scalar::Int(0), DType::I64, true, span)?;
        let diff = int(self, "Max", vec![diff.name, zero.name]);
        let bias = self.scalar(Scalar::Int(step.abs() - 1), DType::I64, true, span)?;
        let num = int(self, "Add", vec![diff.name, bias.name]);
        let den = self.scalar(Scalar::Int(step.abs()), DType::I64, true, span)?;
        Ok(Val::T(int(self, "Div", vec![num.name, den.name])))
    }

    fn get_item(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        if let Val::Range { start, step, .. } = &args[0] {
            // The loop's index is in range: item i is start + i * step.
            let i = self.operand(&args[1], DType::I64, span)?;
            let step = self.scalar(Scalar::Int(*step), DType::I64, true, span)?;
            let int = |s: &mut Self, op: &str, ins: Vec<String>| {
                s.emit(op, ins, vec![], DType::I64, vec![], true)
            };
            let offset = int(self, "Mul", vec![i.name, step.name]);
            let start = self.operand(start, DType::I64, span)?;
            return Ok(Val::T(int(self, "Add", vec![start.name, offset.name])));
        }
        let items: Vec<Val> = match &args[0] {
            Val::Tuple(vs) => vs.clone(),
            Val::Const(Const::Tuple(cs)) => cs.iter().cloned().map(Val::Const).collect(),
            Val::T(_) | Val::Const(Const::Tensor(_) | Const::Ref(_)) => {
                let x = self.tensor(&args[0], span)?;
                return self.index_tensor(p, x, &args[1], span);
            }
            _ => {
                return Err(unsupported(
                    p,
                    "indexing a value that is not a tensor or a tuple",
                    span,
                ));
            }
        };
        let i = const_int(&args[1])
            .ok_or_else(|| unsupported(p, "with an index not known at compile time", span))?;
        let j = if i < 0 { i + items.len() as i64 } else { i };
        items
            .get(usize::try_from(j).unwrap_or(usize::MAX))
            .cloned()
            .ok_or_else(|| unsupported(p, "with an index out of range", span))
    }

    fn composite(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, weak) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let x = self.operand(&args[0], d, span)?;
        let one = self.scalar(Scalar::Int(1), d, true, span)?;
        let emit = |s: &mut Self, op: &str, ins: Vec<String>| {
            s.emit(op, ins, vec![], d, shape.clone(), weak)
        };
        let r = match p {
            Prim::Log1p => {
                let s = emit(self, "Add", vec![x.name, one.name]);
                emit(self, "Log", vec![s.name])
            }
            Prim::Expm1 => {
                let e = emit(self, "Exp", vec![x.name]);
                emit(self, "Sub", vec![e.name, one.name])
            }
            Prim::Rsqrt => {
                let s = emit(self, "Sqrt", vec![x.name]);
                emit(self, "Reciprocal", vec![s.name])
            }
            Prim::Silu => {
                let s = emit(self, "Sigmoid", vec![x.name.clone()]);
                emit(self, "Mul", vec![x.name, s.name])
            }
            _ => {
                // GeLU: 0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation.
                let approximate = args.get(1).and_then(const_bool).unwrap_or(false);
                let half = self.scalar(Scalar::Float(0.5), d, true, span)?;
                let inner = if approximate {
                    let c = self.scalar(Scalar::Float(0.044715), d, true, span)?;
                    let k = self.scalar(
                        Scalar::Float((2.0 / std::f64::consts::PI).sqrt()),
                        d,
                        true,
                        span,
                    )?;
                    let x2 = emit(self, "Mul", vec![x.name.clone(), x.name.clone()]);
                    let x3 = emit(self, "Mul", vec![x2.name, x.name.clone()]);
                    let cx3 = emit(self, "Mul", vec![x3.name, c.name]);
                    let s = emit(self, "Add", vec![x.name.clone(), cx3.name]);
                    let ks = emit(self, "Mul", vec![s.name, k.name]);
                    emit(self, "Tanh", vec![ks.name])
                } else {
                    let r2 = self.scalar(
                        Scalar::Float(std::f64::consts::FRAC_1_SQRT_2),
                        d,
                        true,
                        span,
                    )?;
                    let xs = emit(self, "Mul", vec![x.name.clone(), r2.name]);
                    emit(self, "Erf", vec![xs.name])
                };
                let one_plus = emit(self, "Add", vec![inner.name, one.name]);
                let hx = emit(self, "Mul", vec![x.name, half.name]);
                emit(self, "Mul", vec![hx.name, one_plus.name])
            }
        };
        Ok(Val::T(r))
    }

    /// The result abstract of the call being translated (by its span, for helpers that were
    /// not handed the node).
    fn abs_of_span_result(&self, span: Span, p: Prim) -> Result<Abs> {
        self.current_result
            .clone()
            .filter(|a| result_type(a).is_some())
            .ok_or_else(|| {
                unsupported(
                    p,
                    "gives a value that is not a tensor or a number here",
                    span,
                )
            })
    }

    /// Python's `//` and `%`: floor division, and the remainder with the divisor's sign.
    fn floor_div_mod(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, weak) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let a = self.operand(&args[0], d, span)?;
        let b = self.operand(&args[1], d, span)?;
        let emit = |s: &mut Self, op: &str, ins: Vec<String>, attrs| {
            s.emit(op, ins, attrs, d, shape.clone(), weak)
        };
        if d.is_float() {
            let q = emit(self, "Div", vec![a.name.clone(), b.name.clone()], vec![]);
            let f = emit(self, "Floor", vec![q.name], vec![]);
            if p == Prim::FloorDiv {
                return Ok(Val::T(f));
            }
            let fb = emit(self, "Mul", vec![f.name, b.name], vec![]);
            return Ok(Val::T(emit(self, "Sub", vec![a.name, fb.name], vec![])));
        }
        if d == DType::Bool {
            return Err(unsupported(p, "on booleans has no ONNX translation", span));
        }
        // Integers: ONNX's Mod with fmod=0 has Python's sign rule; the quotient is exact.
        let r = emit(
            self,
            "Mod",
            vec![a.name.clone(), b.name.clone()],
            vec![attr_int("fmod", 0)],
        );
        if p == Prim::Mod {
            return Ok(Val::T(r));
        }
        let diff = emit(self, "Sub", vec![a.name, r.name], vec![]);
        Ok(Val::T(emit(self, "Div", vec![diff.name, b.name], vec![])))
    }

    fn reduce(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, _) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let x = self.tensor(&args[0], span)?;
        let x = if matches!(p, Prim::ReduceMax | Prim::ReduceMin) {
            x
        } else {
            self.cast(x, d)
        };
        let rank = x.shape.len();
        let axes = const_ints(&args[1])
            .ok_or_else(|| unsupported(p, "over axes not known at compile time", span))?
            .map(|v| {
                v.iter()
                    .map(|&a| normalize_axis(a, rank))
                    .collect::<Vec<_>>()
            });
        let keepdims = const_bool(&args[2])
            .ok_or_else(|| unsupported(p, "with keepdims not known at compile time", span))?;
        let op = match p {
            Prim::ReduceSum => "ReduceSum",
            Prim::ReduceMean => "ReduceMean",
            Prim::ReduceMax => "ReduceMax",
            Prim::ReduceMin => "ReduceMin",
            Prim::ReduceProd => "ReduceProd",
            _ => "ReduceLogSumExp",
        };
        if rank == 0 {
            // Reducing a 0-d tensor: itself.
            let x = self.cast(x, d);
            return Ok(Val::T(Tv { shape, ..x }));
        }
        let mut inputs = vec![x.name];
        let mut attrs = vec![attr_int("keepdims", i64::from(keepdims))];
        if let Some(axes) = axes {
            if axes.is_empty() {
                let x = self.tensor(&args[0], span)?;
                let x = self.cast(Tv { shape, ..x }, d);
                return Ok(Val::T(x));
            }
            if op == "ReduceSum" || self.opset >= 18 {
                inputs.push(self.ints(&axes, span)?);
            } else {
                attrs.push(attr_ints("axes", &axes));
            }
        }
        let r = self.emit(op, inputs, attrs, d, shape.clone(), false);
        Ok(Val::T(self.cast(r, d)))
    }

    fn arg_reduce(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, _) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let mut x = self.tensor(&args[0], span)?;
        let keepdims = const_bool(&args[2]).unwrap_or(false);
        let axis = match const_ints(&args[1]) {
            Some(None) => {
                let flat = self.ints(&[-1], span)?;
                let n = x.shape.iter().try_fold(1usize, |acc, d| d.map(|v| acc * v));
                x = self.emit(
                    "Reshape",
                    vec![x.name, flat],
                    vec![],
                    x.dtype,
                    vec![n],
                    false,
                );
                0
            }
            Some(Some(v)) if v.len() == 1 => normalize_axis(v[0], x.shape.len()),
            _ => {
                return Err(unsupported(
                    p,
                    "over an axis not known at compile time",
                    span,
                ));
            }
        };
        let op = if p == Prim::ArgMax {
            "ArgMax"
        } else {
            "ArgMin"
        };
        let r = self.emit(
            op,
            vec![x.name],
            vec![
                attr_int("axis", axis),
                attr_int("keepdims", i64::from(keepdims)),
                attr_int("select_last_index", 0),
            ],
            DType::I64,
            shape.clone(),
            false,
        );
        let r = if static_shape(&shape).is_some_and(|s| s.len() != r.shape.len()) {
            let target = self.ints(&static_shape(&shape).expect("known"), span)?;
            self.emit(
                "Reshape",
                vec![r.name, target],
                vec![],
                DType::I64,
                shape,
                false,
            )
        } else {
            r
        };
        Ok(Val::T(self.cast(r, d)))
    }

    /// A 3-d (C, H, W) operand as a batch of one, and the result back.
    fn batched(&mut self, x: Tv, span: Span) -> Result<(Tv, bool)> {
        if x.shape.len() != 3 {
            return Ok((x, false));
        }
        let dims = static_shape(&x.shape)
            .ok_or_else(|| OnnxError::new("shape", "an image of unknown shape", span))?;
        let target = self.ints(&[1, dims[0], dims[1], dims[2]], span)?;
        let mut shape = vec![Some(1)];
        shape.extend(x.shape.iter().copied());
        Ok((
            self.emit(
                "Reshape",
                vec![x.name, target],
                vec![],
                x.dtype,
                shape,
                false,
            ),
            true,
        ))
    }

    fn unbatched(
        &mut self,
        r: Tv,
        unbatch: bool,
        shape: Vec<Option<usize>>,
        span: Span,
    ) -> Result<Tv> {
        if !unbatch {
            return Ok(r);
        }
        let dims = static_shape(&shape)
            .ok_or_else(|| OnnxError::new("shape", "an image of unknown shape", span))?;
        let target = self.ints(&dims, span)?;
        Ok(self.emit(
            "Reshape",
            vec![r.name, target],
            vec![],
            r.dtype,
            shape,
            false,
        ))
    }

    fn conv2d(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, _) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let x = self.operand(&args[0], d, span)?;
        let w = self.operand(&args[1], d, span)?;
        let bad =
            |what: &str| unsupported(p, &format!("with {what} not known at compile time"), span);
        let stride = args
            .get(2)
            .map_or(Some([1, 1]), pair)
            .ok_or_else(|| bad("a stride"))?;
        let dilation = args
            .get(4)
            .map_or(Some([1, 1]), pair)
            .ok_or_else(|| bad("a dilation"))?;
        let groups = args
            .get(5)
            .map_or(Some(1), const_int)
            .ok_or_else(|| bad("groups"))?;
        let kernel = static_shape(&w.shape)
            .filter(|s| s.len() == 4)
            .ok_or_else(|| bad("a weight shape"))?;
        let (kh, kw) = (kernel[2], kernel[3]);
        let pads = match args.get(3) {
            Some(Val::Const(Const::Str(s))) if &**s == "valid" => [0, 0, 0, 0],
            Some(Val::Const(Const::Str(s))) if &**s == "same" => {
                let th = dilation[0] * (kh - 1);
                let tw = dilation[1] * (kw - 1);
                [th / 2, tw / 2, th - th / 2, tw - tw / 2]
            }
            None => [0, 0, 0, 0],
            Some(v) => {
                let [h, w] = pair(v).ok_or_else(|| bad("a padding"))?;
                [h, w, h, w]
            }
        };
        let (x, unbatch) = self.batched(x, span)?;
        let mut out_shape = shape.clone();
        if unbatch {
            out_shape.insert(0, Some(1));
        }
        let r = self.emit(
            "Conv",
            vec![x.name, w.name],
            vec![
                attr_ints("kernel_shape", &[kh, kw]),
                attr_ints("strides", &stride),
                attr_ints("dilations", &dilation),
                attr_ints("pads", &pads),
                attr_int("group", groups),
            ],
            d,
            out_shape,
            false,
        );
        Ok(Val::T(self.unbatched(r, unbatch, shape, span)?))
    }

    fn pool2d(&mut self, p: Prim, args: &[Val], span: Span) -> Result<Val> {
        let (d, shape, _) = result_type(&self.abs_of_span_result(span, p)?).expect("checked");
        let x = self.operand(&args[0], d, span)?;
        let bad =
            |what: &str| unsupported(p, &format!("with {what} not known at compile time"), span);
        let kernel = pair(&args[1]).ok_or_else(|| bad("a kernel size"))?;
        let stride = match args.get(2) {
            None | Some(Val::Const(Const::None)) => kernel,
            Some(v) => pair(v).ok_or_else(|| bad("a stride"))?,
        };
        let [ph, pw] = args
            .get(3)
            .map_or(Some([0, 0]), pair)
            .ok_or_else(|| bad("a padding"))?;
        let (x, unbatch) = self.batched(x, span)?;
        let mut out_shape = shape.clone();
        if unbatch {
            out_shape.insert(0, Some(1));
        }
        let mut attrs = vec![
            attr_ints("kernel_shape", &kernel),
            attr_ints("strides", &stride),
            attr_ints("pads", &[ph, pw, ph, pw]),
        ];
        let op = if p == Prim::MaxPool2D {
            "MaxPool"
        } else {
            attrs.push(attr_int("count_include_pad", 1));
            "AveragePool"
        };
        let r = self.emit(op, vec![x.name], attrs, d, out_shape, false);
        Ok(Val::T(self.unbatched(r, unbatch, shape, span)?))
    }
}
