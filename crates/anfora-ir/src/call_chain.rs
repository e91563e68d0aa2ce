//! The calls an inlined node was inlined through, shared between nodes.
//!
//! Inlining a chain of n functions, each calling the next, gives the innermost nodes n calls
//! each; stored as one list per node that would be quadratic in memory and time. A chain is a
//! rope instead: joining two chains is one node, so each inlined node costs constant space,
//! and the list is only spelled out for a traceback.

use std::fmt;
use std::sync::Arc;

use crate::Span;

/// A sequence of calls (the function containing each call and the call's span), outermost
/// first; cheap to clone and to join.
#[derive(Clone, Default)]
pub struct CallChain(Option<Arc<Link>>);

struct Link {
    len: usize,
    kind: LinkKind,
}

enum LinkKind {
    Call(Arc<str>, Span),
    /// The calls of the first chain, then those of the second.
    Join(CallChain, CallChain),
}

impl CallChain {
    /// The chain of one call.
    pub fn call(function: Arc<str>, span: Span) -> CallChain {
        CallChain(Some(Arc::new(Link {
            len: 1,
            kind: LinkKind::Call(function, span),
        })))
    }

    /// The calls of `self`, then those of `inner`.
    pub fn then(&self, inner: &CallChain) -> CallChain {
        if inner.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return inner.clone();
        }
        CallChain(Some(Arc::new(Link {
            len: self.len() + inner.len(),
            kind: LinkKind::Join(self.clone(), inner.clone()),
        })))
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |l| l.len)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The calls, outermost first. (An explicit stack: a rope can be as deep as it is long.)
    pub fn to_vec(&self) -> Vec<(Arc<str>, Span)> {
        let mut out = Vec::with_capacity(self.len());
        let mut stack = vec![self];
        while let Some(chain) = stack.pop() {
            match chain.0.as_deref().map(|l| &l.kind) {
                None => {}
                Some(LinkKind::Call(f, s)) => out.push((f.clone(), *s)),
                Some(LinkKind::Join(a, b)) => {
                    stack.push(b);
                    stack.push(a);
                }
            }
        }
        out
    }
}

impl PartialEq for CallChain {
    fn eq(&self, other: &CallChain) -> bool {
        self.len() == other.len() && self.to_vec() == other.to_vec()
    }
}

impl Eq for CallChain {}

impl fmt::Debug for CallChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

impl Drop for Link {
    /// Drops the links this one alone holds one by one, not by recursion.
    fn drop(&mut self) {
        let LinkKind::Join(a, b) = &mut self.kind else {
            return;
        };
        let mut stack = vec![a.0.take(), b.0.take()];
        while let Some(link) = stack.pop() {
            if let Some(mut link) = link.and_then(Arc::into_inner)
                && let LinkKind::Join(a, b) = &mut link.kind
            {
                stack.push(a.0.take());
                stack.push(b.0.take());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_chains_list_their_calls_outermost_first() {
        let call = |name: &str| CallChain::call(Arc::from(name), Span::NONE);
        let outer = call("main").then(&call("f"));
        let chain = outer
            .then(&CallChain::default())
            .then(&call("g").then(&call("h")));
        let names: Vec<String> = chain.to_vec().iter().map(|(f, _)| f.to_string()).collect();
        assert_eq!(names, ["main", "f", "g", "h"]);
        assert_eq!(chain.len(), 4);
    }

    #[test]
    fn a_chain_a_million_joins_deep_is_listed_and_dropped_without_recursion() {
        let mut chain = CallChain::default();
        for _ in 0..1_000_000 {
            chain = chain.then(&CallChain::call(Arc::from("f"), Span::NONE));
        }
        assert_eq!(chain.to_vec().len(), 1_000_000);
        drop(chain);
    }
}
