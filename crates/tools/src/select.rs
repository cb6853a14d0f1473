//! Selection expressions over a tree's branches (`evtc skim --where 'nMuon >= 2 && MET_pt > 50'`):
//! parsed once ([`Selection::parse`]), then evaluated cluster by cluster over the branches they
//! name, which are read as `f64` values.
//!
//! The language: numbers, branch names (letters, digits, `_`, `.`, `/`; a name that is not an
//! identifier goes in backquotes, `` `tm/map<string,string>.first` ``), `+ - * /`, comparisons
//! `< <= > >= == !=` (1 or 0), `&& || !` (non-zero is true), parentheses, and functions of one
//! argument: `abs`, and over each entry's list `any`, `all`, `count` (of true elements), `len`,
//! `sum`, `min`, `max`. A scalar branch has a value per entry; a variable-length branch
//! (`Muon_pt`) a list per entry, and operations on lists go element by element (a scalar is
//! used for every element of its entry's list; two lists must be as long as each other). The
//! whole expression must give one value per entry (`any(Muon_pt > 20)`, not `Muon_pt > 20`).

use std::collections::BTreeSet;

/// A parsed selection.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    root: Expr,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Number(f64),
    Branch(String),
    Not(Box<Expr>),
    Negate(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Call(Func, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Or,
    And,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Abs,
    Any,
    All,
    Count,
    Len,
    Sum,
    Min,
    Max,
}

impl Func {
    fn of(name: &str) -> Option<Func> {
        Some(match name {
            "abs" => Func::Abs,
            "any" => Func::Any,
            "all" => Func::All,
            "count" => Func::Count,
            "len" => Func::Len,
            "sum" => Func::Sum,
            "min" => Func::Min,
            "max" => Func::Max,
            _ => return None,
        })
    }
}

/// One branch's values for some entries: a value per entry, or a list per entry (`offsets`,
/// one more than the entries, into `values`).
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// A value per entry.
    Scalar(Vec<f64>),
    /// A list per entry.
    Lists {
        /// Where each entry's list starts in `values`, and where the last ends.
        offsets: Vec<u64>,
        /// The lists' values, back to back.
        values: Vec<f64>,
    },
}

impl Selection {
    /// Parses `text`.
    ///
    /// # Errors
    /// What does not parse, and where (a byte offset into `text`).
    pub fn parse(text: &str) -> Result<Selection, String> {
        let tokens = tokenize(text)?;
        let mut parser = Parser { tokens, at: 0 };
        let root = parser.or()?;
        if let Some((position, token)) = parser.tokens.get(parser.at) {
            return Err(format!(
                "unexpected {} at byte {position} of the selection",
                token.describe()
            ));
        }
        Ok(Selection { root })
    }

    /// The branches the expression reads, each once, sorted.
    pub fn branches(&self) -> Vec<String> {
        let mut names = BTreeSet::new();
        collect(&self.root, &mut names);
        names.into_iter().collect()
    }

    /// Which of `entries` entries pass, given `column(name)`, each branch's values for them.
    ///
    /// # Errors
    /// Lists of unequal lengths combined, or an expression that gives a list per entry.
    pub fn evaluate(
        &self,
        entries: usize,
        column: &dyn Fn(&str) -> Option<Column>,
    ) -> Result<Vec<bool>, String> {
        match eval(&self.root, entries, column)? {
            Column::Scalar(v) => Ok(v.into_iter().map(|x| x != 0.0 && !x.is_nan()).collect()),
            Column::Lists { .. } => Err(
                "the selection gives a list per entry (a variable-length branch compared \
                 element by element): wrap it in any(), all() or count()"
                    .into(),
            ),
        }
    }
}

fn collect(e: &Expr, names: &mut BTreeSet<String>) {
    match e {
        Expr::Number(_) => {}
        Expr::Branch(name) => {
            names.insert(name.clone());
        }
        Expr::Not(a) | Expr::Negate(a) | Expr::Call(_, a) => collect(a, names),
        Expr::Binary(_, a, b) => {
            collect(a, names);
            collect(b, names);
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Op(&'static str),
    Open,
    Close,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Number(x) => format!("number {x}"),
            Token::Name(n) => format!("name {n:?}"),
            Token::Op(o) => format!("{o:?}"),
            Token::Open => "\"(\"".into(),
            Token::Close => "\")\"".into(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, String> {
    const OPS: [&str; 16] = [
        "&&", "||", "<=", ">=", "==", "!=", "<", ">", "!", "+", "-", "*", "/", "(", ")", "`",
    ];
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '`' {
            let end = text[i + 1..]
                .find('`')
                .ok_or_else(|| format!("a backquoted name at byte {i} is not closed"))?;
            out.push((i, Token::Name(text[i + 1..i + 1 + end].to_owned())));
            i += end + 2;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || ((bytes[i] == b'+' || bytes[i] == b'-')
                        && matches!(bytes[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            let number = text[start..i]
                .parse()
                .map_err(|_| format!("{:?} at byte {start} is not a number", &text[start..i]))?;
            out.push((start, Token::Number(number)));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b'.' | b'/'))
            {
                i += 1;
            }
            out.push((start, Token::Name(text[start..i].to_owned())));
            continue;
        }
        let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) else {
            return Err(format!("unexpected {c:?} at byte {i} of the selection"));
        };
        out.push((
            i,
            match *op {
                "(" => Token::Open,
                ")" => Token::Close,
                op => Token::Op(op),
            },
        ));
        i += op.len();
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn eat(&mut self, op: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Op(o)) if *o == op);
        if found {
            self.at += 1;
        }
        found
    }

    fn end_error(&self, what: &str) -> String {
        match self.tokens.get(self.at) {
            Some((position, token)) => format!(
                "expected {what} at byte {position} of the selection, found {}",
                token.describe()
            ),
            None => format!("expected {what} at the end of the selection"),
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.eat("||") {
            left = Expr::Binary(Op::Or, Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.comparison()?;
        while self.eat("&&") {
            left = Expr::Binary(Op::And, Box::new(left), Box::new(self.comparison()?));
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Expr, String> {
        let left = self.sum()?;
        for (text, op) in [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            (">", Op::Gt),
        ] {
            if self.eat(text) {
                return Ok(Expr::Binary(op, Box::new(left), Box::new(self.sum()?)));
            }
        }
        Ok(left)
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.product()?;
        loop {
            let op = if self.eat("+") {
                Op::Add
            } else if self.eat("-") {
                Op::Sub
            } else {
                return Ok(left);
            };
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat("*") {
                Op::Mul
            } else if self.eat("/") {
                Op::Div
            } else {
                return Ok(left);
            };
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Expr::Negate(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, String> {
        let Some((position, token)) = self.tokens.get(self.at).cloned() else {
            return Err(self.end_error("a value"));
        };
        self.at += 1;
        match token {
            Token::Number(x) => Ok(Expr::Number(x)),
            Token::Open => {
                let inner = self.or()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(self.end_error("\")\""));
                }
                self.at += 1;
                Ok(inner)
            }
            Token::Name(name) if self.peek() == Some(&Token::Open) => {
                let func = Func::of(&name).ok_or_else(|| {
                    format!(
                        "unknown function {name:?} at byte {position} (functions: abs, any, all, \
                         count, len, sum, min, max)"
                    )
                })?;
                self.at += 1;
                let inner = self.or()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(self.end_error("\")\""));
                }
                self.at += 1;
                Ok(Expr::Call(func, Box::new(inner)))
            }
            Token::Name(name) => Ok(Expr::Branch(name)),
            other => Err(format!(
                "expected a value at byte {position} of the selection, found {}",
                other.describe()
            )),
        }
    }
}

fn eval(e: &Expr, n: usize, column: &dyn Fn(&str) -> Option<Column>) -> Result<Column, String> {
    Ok(match e {
        Expr::Number(x) => Column::Scalar(vec![*x; n]),
        Expr::Branch(name) => column(name).ok_or_else(|| format!("no branch {name:?}"))?,
        Expr::Not(a) => map(eval(a, n, column)?, |x| f64::from(u8::from(x == 0.0))),
        Expr::Negate(a) => map(eval(a, n, column)?, |x| -x),
        Expr::Call(func, a) => call(*func, eval(a, n, column)?),
        Expr::Binary(op, a, b) => binary(*op, eval(a, n, column)?, eval(b, n, column)?)?,
    })
}

fn map(c: Column, f: impl Fn(f64) -> f64) -> Column {
    match c {
        Column::Scalar(v) => Column::Scalar(v.into_iter().map(f).collect()),
        Column::Lists { offsets, values } => Column::Lists {
            offsets,
            values: values.into_iter().map(f).collect(),
        },
    }
}

fn call(func: Func, c: Column) -> Column {
    let truth = |x: f64| x != 0.0 && !x.is_nan();
    let Column::Lists { offsets, values } = c else {
        return match func {
            Func::Abs => map(c, f64::abs),
            // A scalar is a list of one.
            Func::Any | Func::All => map(c, |x| f64::from(u8::from(truth(x)))),
            Func::Count => map(c, |x| f64::from(u8::from(truth(x)))),
            Func::Len => map(c, |_| 1.0),
            Func::Sum | Func::Min | Func::Max => c,
        };
    };
    if func == Func::Abs {
        return Column::Lists {
            offsets,
            values: values.into_iter().map(f64::abs).collect(),
        };
    }
    let per_entry = offsets.windows(2).map(|w| {
        let list = &values[w[0] as usize..w[1] as usize];
        match func {
            Func::Any => f64::from(u8::from(list.iter().any(|&x| truth(x)))),
            Func::All => f64::from(u8::from(list.iter().all(|&x| truth(x)))),
            Func::Count => list.iter().filter(|&&x| truth(x)).count() as f64,
            Func::Len => list.len() as f64,
            Func::Sum => list.iter().sum(),
            // Of an empty list: NaN, which no comparison passes.
            Func::Min => list.iter().copied().reduce(f64::min).unwrap_or(f64::NAN),
            Func::Max => list.iter().copied().reduce(f64::max).unwrap_or(f64::NAN),
            Func::Abs => unreachable!("handled above"),
        }
    });
    Column::Scalar(per_entry.collect())
}

fn apply(op: Op, x: f64, y: f64) -> f64 {
    let truth = |x: f64| x != 0.0 && !x.is_nan();
    let bool = |b: bool| f64::from(u8::from(b));
    match op {
        Op::Or => bool(truth(x) || truth(y)),
        Op::And => bool(truth(x) && truth(y)),
        Op::Lt => bool(x < y),
        Op::Le => bool(x <= y),
        Op::Gt => bool(x > y),
        Op::Ge => bool(x >= y),
        Op::Eq => bool(x == y),
        Op::Ne => bool(x != y),
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
    }
}

fn binary(op: Op, a: Column, b: Column) -> Result<Column, String> {
    Ok(match (a, b) {
        (Column::Scalar(x), Column::Scalar(y)) => {
            Column::Scalar(x.iter().zip(&y).map(|(&x, &y)| apply(op, x, y)).collect())
        }
        (Column::Lists { offsets, values }, Column::Scalar(y)) => {
            let values = broadcast(&offsets, &values, &y, |v, s| apply(op, v, s));
            Column::Lists { offsets, values }
        }
        (Column::Scalar(x), Column::Lists { offsets, values }) => {
            let values = broadcast(&offsets, &values, &x, |v, s| apply(op, s, v));
            Column::Lists { offsets, values }
        }
        (
            Column::Lists { offsets, values },
            Column::Lists {
                offsets: other,
                values: w,
            },
        ) => {
            let lengths = |o: &[u64]| o.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
            if lengths(&offsets) != lengths(&other) {
                return Err(
                    "two variable-length branches combined element by element have \
                            lists of different lengths in some entry (they have different \
                            counters?)"
                        .into(),
                );
            }
            let values = values
                .iter()
                .zip(&w)
                .map(|(&x, &y)| apply(op, x, y))
                .collect();
            Column::Lists { offsets, values }
        }
    })
}

/// `f(value, its entry's scalar)` for every value of the lists.
fn broadcast(
    offsets: &[u64],
    values: &[f64],
    scalars: &[f64],
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let mut out = Vec::with_capacity(values.len());
    for (w, &s) in offsets.windows(2).zip(scalars) {
        out.extend(
            values[w[0] as usize..w[1] as usize]
                .iter()
                .map(|&v| f(v, s)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(name: &str) -> Option<Column> {
        match name {
            "n" => Some(Column::Scalar(vec![0.0, 1.0, 2.0, 3.0])),
            "met" => Some(Column::Scalar(vec![10.0, 60.0, 40.0, 80.0])),
            "pt" => Some(Column::Lists {
                offsets: vec![0, 0, 1, 3, 6],
                values: vec![5.0, 30.0, 10.0, 1.0, 2.0, 25.0],
            }),
            "eta" => Some(Column::Lists {
                offsets: vec![0, 0, 1, 3, 6],
                values: vec![0.1, -3.0, 1.0, 0.0, 0.0, 2.5],
            }),
            _ => None,
        }
    }

    fn pass(text: &str) -> Vec<bool> {
        Selection::parse(text)
            .unwrap()
            .evaluate(4, &columns)
            .unwrap()
    }

    #[test]
    fn scalars_lists_and_functions() {
        assert_eq!(pass("n >= 2 && met > 50"), [false, false, false, true]);
        assert_eq!(pass("n >= 2 || met > 50"), [false, true, true, true]);
        assert_eq!(pass("!(n == 1)"), [true, false, true, true]);
        assert_eq!(pass("any(pt > 20)"), [false, false, true, true]);
        assert_eq!(pass("all(pt > 1.5)"), [true, true, true, false]);
        assert_eq!(
            pass("count(pt > 1.5 && abs(eta) < 2.4) >= 1"),
            [false, true, true, true]
        );
        assert_eq!(pass("len(pt) == n"), [true, true, true, true]);
        assert_eq!(pass("sum(pt) / 2 > 10"), [false, false, true, true]);
        assert_eq!(
            pass("max(pt) > 20 && min(pt) < 2"),
            [false, false, false, true]
        );
        assert_eq!(pass("any(pt * 2 > met)"), [false, false, true, false]);
        assert_eq!(pass("-n < -1.5e0"), [false, false, true, true]);
        assert_eq!(
            Selection::parse("any(pt > 20) && `met` > 0")
                .unwrap()
                .branches(),
            ["met", "pt"]
        );
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = |text: &str| Selection::parse(text).unwrap_err();
        assert!(e("n >= ").contains("at the end"), "{}", e("n >= "));
        assert!(e("n >= 2 )").contains("byte 7"), "{}", e("n >= 2 )"));
        assert!(e("n # 2").contains("'#'"), "{}", e("n # 2"));
        assert!(e("foo(n)").contains("unknown function"));
        assert!(e("(n > 1").contains("\")\""));
        let list = Selection::parse("pt > 20").unwrap().evaluate(4, &columns);
        assert!(list.unwrap_err().contains("any(), all() or count()"));
        let missing = Selection::parse("nope > 1").unwrap().evaluate(4, &columns);
        assert!(missing.unwrap_err().contains("\"nope\""));
        let different = Column::Lists {
            offsets: vec![0, 1, 1, 1, 1],
            values: vec![1.0],
        };
        let other = |name: &str| {
            if name == "x" {
                Some(different.clone())
            } else {
                columns(name)
            }
        };
        let mixed = Selection::parse("any(pt > x)").unwrap().evaluate(4, &other);
        assert!(mixed.unwrap_err().contains("different lengths"));
    }
}
