//! Friend trees: a tree read together with trees of other files, entry by entry, as if their
//! branches were its own (ROOT's `TTree::AddFriend`).

use super::{BranchReader, TreeReader};
use crate::error::{Error, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::BranchMeta;

/// A tree and its friends: trees of other files (or of the same) with as many entries, whose
/// branches read as the tree's own. A name several trees have is the first's: the tree's own
/// branches, then its friends' in the order given.
///
/// ```
/// use evtc_format::{BranchSpec, FileReader, FileWriter, FriendTrees, ScalarType, WriteOptions};
/// let dir = tempfile::tempdir()?;
/// for (file, branch, values) in [("events.evtc", "run", [1u32, 1, 2]), ("scores.evtc", "score", [7, 8, 9])] {
///     let mut writer = FileWriter::create(dir.path().join(file), WriteOptions::default())?;
///     let mut tree = writer.tree("Events", vec![BranchSpec::scalar(branch, ScalarType::U32)])?;
///     tree.fill_column(0, &values)?;
///     tree.commit()?;
///     tree.finish()?;
///     writer.finish()?;
/// }
/// let events = FileReader::open(dir.path().join("events.evtc"))?;
/// let scores = FileReader::open(dir.path().join("scores.evtc"))?;
/// let tree = FriendTrees::new(events.tree("Events")?, vec![scores.tree("Events")?])?;
/// assert_eq!(tree.branch("score")?.read::<u32>()?, [7, 8, 9]);
/// assert_eq!(tree.branch("run")?.read::<u32>()?, [1, 1, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FriendTrees<'a, R: ReadAt = LocalFile> {
    trees: Vec<TreeReader<'a, R>>,
}

impl<'a, R: ReadAt> FriendTrees<'a, R> {
    /// `tree` with `friends`.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] for a friend whose entries are not the tree's.
    pub fn new(tree: TreeReader<'a, R>, friends: Vec<TreeReader<'a, R>>) -> Result<Self> {
        for friend in &friends {
            if friend.entries() != tree.entries() {
                return Err(Error::InvalidSchema {
                    tree: tree.name().to_owned(),
                    reason: format!(
                        "it has {} entries, its friend {:?}{} {}: a friend's entries are read as \
                         the tree's, one for one",
                        tree.entries(),
                        friend.name(),
                        friend
                            .file
                            .source
                            .path()
                            .map(|p| format!(" of {}", p.display()))
                            .unwrap_or_default(),
                        friend.entries()
                    ),
                });
            }
        }
        let mut trees = vec![tree];
        trees.extend(friends);
        Ok(FriendTrees { trees })
    }

    /// The tree the friends were added to.
    pub fn tree(&self) -> &TreeReader<'a, R> {
        &self.trees[0]
    }

    /// The friends, in order.
    pub fn friends(&self) -> &[TreeReader<'a, R>] {
        &self.trees[1..]
    }

    /// The entries of the tree (and of each friend).
    pub fn entries(&self) -> u64 {
        self.trees[0].entries()
    }

    /// Every branch, the tree's first, then each friend's that no tree before has.
    pub fn branches(&self) -> Vec<&'a BranchMeta> {
        let mut out: Vec<&'a BranchMeta> = Vec::new();
        for tree in &self.trees {
            for b in tree.branches() {
                if !out.iter().any(|o| o.name == b.name) {
                    out.push(b);
                }
            }
        }
        out
    }

    /// The branch named `name`: the tree's, else the first friend's that has it.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`] (naming the tree) when no tree has it.
    pub fn branch(&self, name: &str) -> Result<BranchReader<'a, R>> {
        self.trees
            .iter()
            .find_map(|t| t.branch(name).ok())
            .ok_or_else(|| Error::NoSuchBranch {
                tree: self.trees[0].name().to_owned(),
                name: name.to_owned(),
            })
    }
}
