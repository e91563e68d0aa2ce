//! Python-level signatures and argument binding (shared by the frontend, which binds calls to
//! known callees at compile time, and the VM, which binds calls to computed callees).

use std::sync::Arc;

use crate::Const;

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Arc<str>,
    pub default: Option<Const>,
}

impl Param {
    pub fn required(name: &str) -> Param {
        Param {
            name: Arc::from(name),
            default: None,
        }
    }

    pub fn optional(name: &str, default: Const) -> Param {
        Param {
            name: Arc::from(name),
            default: Some(default),
        }
    }
}

/// `def f(a, b=1, /, c=2, *args, d, e=3)`: `params` are the positional parameters (the first
/// `posonly` of them positional-only), `varargs` says whether extra positional arguments are
/// collected, `kwonly` are keyword-only parameters. A primitive takes the extra arguments one
/// by one; a Python function (`packs`) takes them as one tuple, its parameter after `params`.
#[derive(Clone, Debug)]
pub struct Signature {
    /// The name used in error messages (Python's `__qualname__`).
    pub name: Arc<str>,
    pub params: Vec<Param>,
    pub posonly: usize,
    pub varargs: bool,
    /// The extra positional arguments are one tuple argument (`*args` of a `def`).
    pub packs: bool,
    pub kwonly: Vec<Param>,
    /// The keyword arguments no parameter takes are one dict argument, after the keyword-only
    /// parameters (`**kwargs` of a `def`).
    pub packs_keywords: bool,
}

/// Where one bound argument comes from.
#[derive(Clone, Debug)]
pub enum ArgSource {
    Positional(usize),
    Keyword(usize),
    Default(Const),
    /// The positional arguments `start..end`, as one tuple (`*args` of a `def`).
    Packed(usize, usize),
    /// The keyword arguments (by index) no parameter takes, as one dict (`**kwargs`).
    PackedKeywords(Vec<usize>),
}

impl ArgSource {
    /// The argument this source picks: one of the `positional` or `keyword` arguments, the
    /// default, made by `default`, a tuple of positional ones, made by `pack`, or a dict of
    /// keyword ones (`names` are the keywords' names), made by `pack_keywords`.
    pub fn pick<T: Clone>(
        self,
        positional: &[T],
        (names, keyword): (&[&str], &[T]),
        default: &mut dyn FnMut(&Const) -> T,
        pack: &mut dyn FnMut(Vec<T>) -> T,
        pack_keywords: &mut dyn FnMut(Vec<(Arc<str>, T)>) -> T,
    ) -> T {
        match self {
            ArgSource::Positional(i) => positional[i].clone(),
            ArgSource::Keyword(j) => keyword[j].clone(),
            ArgSource::Default(c) => default(&c),
            ArgSource::Packed(start, end) => pack(positional[start..end].to_vec()),
            ArgSource::PackedKeywords(js) => pack_keywords(
                js.iter()
                    .map(|&j| (Arc::from(names[j]), keyword[j].clone()))
                    .collect(),
            ),
        }
    }
}

/// Where one argument of a call went in a binding: to parameter `param`, or to item `item` of
/// the tuple (`*args`) or dict (`**kwargs`) that parameter packs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgPlace {
    pub param: usize,
    pub item: Option<usize>,
}

/// Where each of `n_positional` positional and `n_keyword` keyword arguments went in binding
/// `sources` (the transpose of [`ArgSource::pick`]: the gradient of a star call routes each
/// parameter's sensitivity back to the argument it came from).
pub fn arg_places(
    sources: &[ArgSource],
    n_positional: usize,
    n_keyword: usize,
) -> (Vec<Option<ArgPlace>>, Vec<Option<ArgPlace>>) {
    let mut positional = vec![None; n_positional];
    let mut keyword = vec![None; n_keyword];
    for (param, s) in sources.iter().enumerate() {
        let place = |item| Some(ArgPlace { param, item });
        match s {
            ArgSource::Positional(i) => positional[*i] = place(None),
            ArgSource::Keyword(j) => keyword[*j] = place(None),
            ArgSource::Default(_) => {}
            ArgSource::Packed(start, end) => {
                for (q, slot) in positional[*start..*end].iter_mut().enumerate() {
                    *slot = place(Some(q));
                }
            }
            ArgSource::PackedKeywords(js) => {
                for (q, &j) in js.iter().enumerate() {
                    keyword[j] = place(Some(q));
                }
            }
        }
    }
    (positional, keyword)
}

/// A failed binding, rendered with Python's wording by [`BindError::message`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindError {
    TooManyPositional {
        max: usize,
        min: usize,
        given: usize,
    },
    Missing {
        names: Vec<String>,
        keyword_only: bool,
    },
    UnexpectedKeyword(String),
    MultipleValues(String),
    PositionalOnlyAsKeyword(String),
}

impl BindError {
    /// The message CPython gives, for a function called `func_name`.
    pub fn message(&self, func_name: &str) -> String {
        match self {
            BindError::TooManyPositional { max, min, given } => {
                let takes = if min == max {
                    format!("{max} positional argument{}", plural(*max))
                } else {
                    format!("from {min} to {max} positional arguments")
                };
                let were = if *given == 1 { "was" } else { "were" };
                format!("{func_name}() takes {takes} but {given} {were} given")
            }
            BindError::Missing {
                names,
                keyword_only,
            } => {
                let kind = if *keyword_only {
                    "keyword-only"
                } else {
                    "positional"
                };
                let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
                let list = match quoted.len() {
                    1 => quoted[0].clone(),
                    2 => format!("{} and {}", quoted[0], quoted[1]),
                    _ => format!(
                        "{}, and {}",
                        quoted[..quoted.len() - 1].join(", "),
                        quoted[quoted.len() - 1]
                    ),
                };
                format!(
                    "{func_name}() missing {} required {kind} argument{}: {list}",
                    names.len(),
                    plural(names.len())
                )
            }
            BindError::UnexpectedKeyword(k) => {
                format!("{func_name}() got an unexpected keyword argument '{k}'")
            }
            BindError::MultipleValues(k) => {
                format!("{func_name}() got multiple values for argument '{k}'")
            }
            BindError::PositionalOnlyAsKeyword(k) => format!(
                "{func_name}() got some positional-only arguments passed as keyword arguments: '{k}'"
            ),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl Signature {
    pub fn new(name: &str, params: Vec<Param>, varargs: bool, kwonly: Vec<Param>) -> Signature {
        Signature {
            name: Arc::from(name),
            params,
            posonly: 0,
            varargs,
            packs: false,
            kwonly,
            packs_keywords: false,
        }
    }

    /// Binds `n_positional` positional arguments and the keyword arguments `keywords` (in call
    /// order). The result lists, in order, the positional parameters, then any extra positional
    /// arguments (varargs), then the keyword-only parameters.
    pub fn bind(
        &self,
        n_positional: usize,
        keywords: &[&str],
    ) -> Result<Vec<ArgSource>, BindError> {
        let n_params = self.params.len();
        if n_positional > n_params && !self.varargs {
            let min = self.params.iter().filter(|p| p.default.is_none()).count();
            return Err(BindError::TooManyPositional {
                max: n_params,
                min: min.min(n_params),
                given: n_positional,
            });
        }
        let mut used = vec![false; keywords.len()];
        let take_keyword = |name: &str, used: &mut Vec<bool>| -> Option<usize> {
            let j = keywords.iter().position(|k| *k == name)?;
            used[j] = true;
            Some(j)
        };
        let mut out = Vec::with_capacity(n_positional.max(n_params) + self.kwonly.len());
        let mut missing = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            let kw = if i < self.posonly {
                None
            } else {
                take_keyword(&p.name, &mut used)
            };
            if i < n_positional {
                if kw.is_some() {
                    return Err(BindError::MultipleValues(p.name.to_string()));
                }
                out.push(ArgSource::Positional(i));
            } else {
                bind_by_name(p, kw, &mut out, &mut missing);
            }
        }
        missing_error(&mut missing, false)?;
        if self.packs {
            let start = n_params.min(n_positional);
            out.push(ArgSource::Packed(start, n_positional.max(start)));
        } else {
            for i in n_params..n_positional {
                out.push(ArgSource::Positional(i));
            }
        }
        for p in &self.kwonly {
            bind_by_name(p, take_keyword(&p.name, &mut used), &mut out, &mut missing);
        }
        missing_error(&mut missing, true)?;
        if self.packs_keywords {
            let rest = (0..keywords.len()).filter(|&j| !used[j]);
            let rest: Vec<usize> = rest.collect();
            // A positional-only parameter's name is free to appear among `**kwargs`.
            out.push(ArgSource::PackedKeywords(rest));
            return Ok(out);
        }
        if let Some(j) = used.iter().position(|u| !u) {
            let name = keywords[j];
            if self.params[..self.posonly].iter().any(|p| &*p.name == name) {
                return Err(BindError::PositionalOnlyAsKeyword(name.to_string()));
            }
            return Err(BindError::UnexpectedKeyword(name.to_string()));
        }
        Ok(out)
    }

    /// The arguments of a call with the `positional` ones and the keyword arguments `names` =
    /// `keyword`, bound: in the order of [`Signature::bind`], defaults made by `default`,
    /// `*args` by `pack` and `**kwargs` by `pack_keywords`.
    pub fn bind_args<T: Clone>(
        &self,
        positional: &[T],
        (names, keyword): (&[&str], &[T]),
        mut default: impl FnMut(&Const) -> T,
        mut pack: impl FnMut(Vec<T>) -> T,
        mut pack_keywords: impl FnMut(Vec<(Arc<str>, T)>) -> T,
    ) -> Result<Vec<T>, BindError> {
        let sources = self.bind(positional.len(), names)?;
        Ok(sources
            .into_iter()
            .map(|s| {
                s.pick(
                    positional,
                    (names, keyword),
                    &mut default,
                    &mut pack,
                    &mut pack_keywords,
                )
            })
            .collect())
    }

    /// The signature written as Python writes a parameter list, `"(x, axis=None, *, k=1)"`:
    /// names, `*args` (or a bare `*`) before the keyword-only parameters, and defaults that are
    /// `None`, `True`, `False`, ints, floats or single-quoted strings (with `\\n`).
    pub fn parse(name: &str, text: &str) -> Result<Signature, String> {
        let inner = text
            .trim()
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .ok_or_else(|| format!("{text:?} is not a parenthesized parameter list"))?;
        let mut sig = Signature::new(name, vec![], false, vec![]);
        let mut star = false;
        for part in split_params(inner) {
            if let Some(rest) = part.strip_prefix('*') {
                if star {
                    return Err(format!("two `*` in {text:?}"));
                }
                star = true;
                sig.varargs = !rest.is_empty();
                continue;
            }
            let (pname, default) = match part.split_once('=') {
                Some((n, d)) => (n.trim(), Some(parse_default(d.trim())?)),
                None => (part, None),
            };
            if pname.is_empty() || !pname.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                return Err(format!("bad parameter {part:?} in {text:?}"));
            }
            let param = Param {
                name: Arc::from(pname),
                default,
            };
            if star {
                sig.kwonly.push(param);
            } else {
                sig.params.push(param);
            }
        }
        Ok(sig)
    }

    /// The parameter list as Python writes it, the inverse of [`Signature::parse`]:
    /// `"(x, axis=None, *, keepdims=False)"`.
    pub fn python_text(&self) -> String {
        let mut parts: Vec<String> = self.params.iter().map(param_text).collect();
        if self.posonly > 0 {
            parts.insert(self.posonly, "/".into());
        }
        if self.varargs {
            parts.push("*args".into());
        } else if !self.kwonly.is_empty() {
            parts.push("*".into());
        }
        parts.extend(self.kwonly.iter().map(param_text));
        if self.packs_keywords {
            parts.push("**kwargs".into());
        }
        format!("({})", parts.join(", "))
    }

    /// Number of inputs a bound call has for `n_positional` positional arguments.
    pub fn bound_len(&self, n_positional: usize) -> usize {
        let positional = if self.packs {
            self.params.len() + 1
        } else {
            self.params.len().max(n_positional)
        };
        positional + self.kwonly.len() + usize::from(self.packs_keywords)
    }
}

/// The comma-separated parts of a parameter list (commas inside quotes do not split).
fn split_params(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in inner.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

fn parse_default(text: &str) -> Result<Const, String> {
    Ok(match text {
        "None" => Const::None,
        "True" => Const::Bool(true),
        "False" => Const::Bool(false),
        "()" => Const::tuple(vec![]),
        quoted if quoted.len() >= 2 && quoted.starts_with('\'') && quoted.ends_with('\'') => {
            Const::str(&quoted[1..quoted.len() - 1].replace("\\n", "\n"))
        }
        number => match number.parse::<i64>() {
            Ok(i) => Const::Int(i),
            Err(_) => Const::Float(
                number
                    .parse::<f64>()
                    .map_err(|_| format!("bad default {text:?}"))?,
            ),
        },
    })
}

/// `name` or `name=default`, the default as Python writes it.
fn param_text(p: &Param) -> String {
    let Some(default) = &p.default else {
        return p.name.to_string();
    };
    let text = match default {
        Const::None => "None".into(),
        Const::Bool(b) => if *b { "True" } else { "False" }.into(),
        Const::Int(i) => i.to_string(),
        Const::Float(f) => crate::pynum::float_repr(*f),
        Const::Str(s) => crate::pynum::str_repr(s),
        Const::Tuple(t) if t.is_empty() => "()".into(),
        other => other.to_string(),
    };
    format!("{}={text}", p.name)
}

/// A parameter not given positionally: its keyword argument, else its default, else missing.
fn bind_by_name(
    p: &Param,
    keyword: Option<usize>,
    out: &mut Vec<ArgSource>,
    missing: &mut Vec<String>,
) {
    if let Some(j) = keyword {
        out.push(ArgSource::Keyword(j));
    } else if let Some(d) = &p.default {
        out.push(ArgSource::Default(d.clone()));
    } else {
        missing.push(p.name.to_string());
    }
}

/// Python's error for the `missing` required parameters, when there are any.
fn missing_error(missing: &mut Vec<String>, keyword_only: bool) -> Result<(), BindError> {
    if missing.is_empty() {
        return Ok(());
    }
    Err(BindError::Missing {
        names: std::mem::take(missing),
        keyword_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig() -> Signature {
        Signature::new(
            "f",
            vec![Param::required("x"), Param::optional("y", Const::Int(2))],
            false,
            vec![Param::optional("k", Const::Int(3))],
        )
    }

    #[test]
    fn binds_positional_keyword_and_defaults() {
        let b = sig().bind(1, &["k"]).unwrap();
        assert!(matches!(b[0], ArgSource::Positional(0)));
        assert!(matches!(b[1], ArgSource::Default(Const::Int(2))));
        assert!(matches!(b[2], ArgSource::Keyword(0)));
        let b = sig().bind(0, &["y", "x"]).unwrap();
        assert!(matches!(b[0], ArgSource::Keyword(1)));
        assert!(matches!(b[1], ArgSource::Keyword(0)));
    }

    #[test]
    fn arg_places_invert_a_binding_through_packing() {
        // def f(x, y=2, *args, k=3, **kw) called as f(1, 2, 3, 4, q=5, k=6, r=7).
        let mut s = sig();
        s.varargs = true;
        s.packs = true;
        s.packs_keywords = true;
        let sources = s.bind(4, &["q", "k", "r"]).unwrap();
        let (positional, keyword) = arg_places(&sources, 4, 3);
        let at = |param, item| Some(ArgPlace { param, item });
        assert_eq!(
            positional,
            vec![at(0, None), at(1, None), at(2, Some(0)), at(2, Some(1))]
        );
        assert_eq!(keyword, vec![at(4, Some(0)), at(3, None), at(4, Some(1))]);
        // A default takes no argument: nothing goes to y.
        let sources = sig().bind(1, &["k"]).unwrap();
        assert_eq!(
            arg_places(&sources, 1, 1),
            (vec![at(0, None)], vec![at(2, None)])
        );
    }

    #[test]
    fn errors_use_python_wording() {
        let s = sig();
        assert_eq!(
            s.bind(3, &[]).unwrap_err().message("f"),
            "f() takes from 1 to 2 positional arguments but 3 were given"
        );
        assert_eq!(
            s.bind(0, &[]).unwrap_err().message("f"),
            "f() missing 1 required positional argument: 'x'"
        );
        assert_eq!(
            s.bind(1, &["z"]).unwrap_err().message("f"),
            "f() got an unexpected keyword argument 'z'"
        );
        assert_eq!(
            s.bind(1, &["x"]).unwrap_err().message("f"),
            "f() got multiple values for argument 'x'"
        );
        let three = Signature::new(
            "g",
            vec![
                Param::required("a"),
                Param::required("b"),
                Param::required("c"),
            ],
            false,
            vec![],
        );
        assert_eq!(
            three.bind(0, &[]).unwrap_err().message("g"),
            "g() missing 3 required positional arguments: 'a', 'b', and 'c'"
        );
        assert_eq!(
            three.bind(4, &[]).unwrap_err().message("g"),
            "g() takes 3 positional arguments but 4 were given"
        );
    }

    #[test]
    fn varargs_collect_extra_positionals() {
        let s = Signature::new(
            "print",
            vec![],
            true,
            vec![Param::optional("sep", Const::str(" "))],
        );
        let b = s.bind(3, &["sep"]).unwrap();
        assert_eq!(b.len(), 4);
        assert!(matches!(b[3], ArgSource::Keyword(0)));
    }

    #[test]
    fn parses_python_parameter_lists() {
        let s = Signature::parse("f", "(x, axis=None, keepdims=False, lr=0.001, n=-2)").unwrap();
        assert_eq!(s.params.len(), 5);
        assert!(matches!(s.params[1].default, Some(Const::None)));
        assert!(matches!(s.params[2].default, Some(Const::Bool(false))));
        assert!(matches!(s.params[3].default, Some(Const::Float(f)) if f == 0.001));
        assert!(matches!(s.params[4].default, Some(Const::Int(-2))));
        let p = Signature::parse("print", "(*values, sep=' ', end='\\n')").unwrap();
        assert!(p.varargs && p.params.is_empty() && p.kwonly.len() == 2);
        assert!(matches!(&p.kwonly[1].default, Some(Const::Str(s)) if &**s == "\n"));
        let d = Signature::parse("Depend", "(value, *states)").unwrap();
        assert!(d.varargs && d.params.len() == 1);
        assert!(Signature::parse("g", "()").unwrap().params.is_empty());
        assert!(Signature::parse("bad", "x, y").is_err());
        assert!(Signature::parse("bad", "(x, *a, *b)").is_err());
        assert!(Signature::parse("bad", "(x=nope)").is_err());
    }

    #[test]
    fn python_text_is_the_parsed_text() {
        for text in [
            "(x, axis=None, keepdims=False, lr=0.001, n=-2)",
            "(*args, sep=' ', end='\\n')",
            "(value, *args)",
            "(x, *, mode='constant', pad=())",
            "()",
        ] {
            let sig = Signature::parse("f", text).unwrap();
            assert_eq!(sig.python_text(), text);
        }
    }
}
