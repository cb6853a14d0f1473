//! Branch-name globs: `*` matches any run of characters, `?` any one character.

use std::fmt;
use std::str::FromStr;

/// A shell-style pattern over branch names (`Muon_*`, `Jet_?t`), or one exact name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    /// `*` and `?` are plain characters ([`Glob::exact`]).
    literal: bool,
}

impl Glob {
    /// A pattern that matches `name` alone, even if it holds `*` or `?`.
    pub fn exact(name: &str) -> Glob {
        Glob {
            pattern: name.to_owned(),
            literal: true,
        }
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        if self.literal {
            return self.pattern == name;
        }
        let (p, n): (Vec<char>, Vec<char>) =
            (self.pattern.chars().collect(), name.chars().collect());
        // Iterative matching with backtracking to the last `*`.
        let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
        while j < n.len() {
            if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
                i += 1;
                j += 1;
            } else if i < p.len() && p[i] == '*' {
                star = Some(i);
                mark = j;
                i += 1;
            } else if let Some(s) = star {
                i = s + 1;
                mark += 1;
                j = mark;
            } else {
                return false;
            }
        }
        p[i..].iter().all(|&c| c == '*')
    }
}

impl FromStr for Glob {
    type Err = String;

    fn from_str(s: &str) -> Result<Glob, String> {
        if s.is_empty() {
            return Err("an empty branch pattern".into());
        }
        Ok(Glob {
            pattern: s.to_owned(),
            literal: false,
        })
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn matches() {
        let g = |p: &str| p.parse::<Glob>().unwrap();
        assert!(g("Muon_*").matches("Muon_pt"));
        assert!(!g("Muon_*").matches("nMuon"));
        assert!(g("*").matches(""));
        assert!(g("J?t_*t").matches("Jet_pt"));
        assert!(g("*_pt").matches("Electron_pt"));
        assert!(!g("*_pt").matches("Electron_eta"));
        assert!(g("a*b*c").matches("axxbyyc"));
        assert!(!g("a*b*c").matches("axxbyy"));
        assert!(g("nMuon").matches("nMuon") && !g("nMuon").matches("nMuons"));
    }
}
