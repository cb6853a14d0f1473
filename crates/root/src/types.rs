//! The value types of columns ([`ScalarType`], [`ColumnKind`]).

pub use evtc_codecs::ScalarType;

/// ROOT's names of the value types.
pub trait RootTypeName {
    /// The C++ type name ROOT uses (`Float_t`, `ULong64_t`).
    fn root_name(self) -> &'static str;
}

impl RootTypeName for ScalarType {
    fn root_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "Bool_t",
            ScalarType::I8 => "Char_t",
            ScalarType::U8 => "UChar_t",
            ScalarType::I16 => "Short_t",
            ScalarType::U16 => "UShort_t",
            ScalarType::I32 => "Int_t",
            ScalarType::U32 => "UInt_t",
            ScalarType::I64 => "Long64_t",
            ScalarType::U64 => "ULong64_t",
            ScalarType::F32 => "Float_t",
            ScalarType::F64 => "Double_t",
        }
    }
}

/// The shape of a column's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// One value per entry.
    Scalar(ScalarType),
    /// Exactly `n` values per entry (`x[3]/F`, `m[2][2]/S` flattened).
    Fixed(ScalarType, usize),
    /// Any number of values per entry (`Muon_pt[nMuon]/F`, `std::vector<float>`).
    Jagged(ScalarType),
    /// Lists of lists per entry, `depth` (2 or more) lists deep, the values in the innermost
    /// (`std::vector<std::vector<T>>` is 2 deep); [`ColumnData::levels`] bounds the lists
    /// below the entries' own.
    ///
    /// [`ColumnData::levels`]: crate::ColumnData::levels
    Nested(ScalarType, u8),
    /// A byte string per entry (`std::string`, `char*` leaves).
    String,
    /// Byte strings `depth` (1 or more) lists deep: 1 a list of strings per entry
    /// (`std::vector<std::string>`, the `TString`s of a split collection's objects), 2 a list of
    /// lists of strings, and so on. [`ColumnData::levels`] bounds the strings in the bytes,
    /// then each list level below the entries' own.
    ///
    /// [`ColumnData::levels`]: crate::ColumnData::levels
    Strings(u8),
}

impl ColumnKind {
    /// The C++ type ROOT holds such entries in: `Float_t`, `Float_t[3]`, `Float_t[]` (a counter
    /// array or vector), `vector<vector<Float_t>>`, `string`, `vector<string>`.
    pub fn cpp_name(self) -> String {
        let vectors = |depth: u8, item: &str| {
            let depth = usize::from(depth);
            format!("{}{item}{}", "vector<".repeat(depth), ">".repeat(depth))
        };
        match self {
            ColumnKind::Scalar(t) => t.root_name().to_owned(),
            ColumnKind::Fixed(t, n) => format!("{}[{n}]", t.root_name()),
            ColumnKind::Jagged(t) => format!("{}[]", t.root_name()),
            ColumnKind::Nested(t, depth) => vectors(depth, t.root_name()),
            ColumnKind::String => "string".to_owned(),
            ColumnKind::Strings(depth) => vectors(depth, "string"),
        }
    }

    /// The value type (`U8` for strings).
    pub fn scalar(self) -> ScalarType {
        match self {
            ColumnKind::Scalar(t)
            | ColumnKind::Fixed(t, _)
            | ColumnKind::Jagged(t)
            | ColumnKind::Nested(t, _) => t,
            ColumnKind::String | ColumnKind::Strings(_) => ScalarType::U8,
        }
    }

    /// Whether an entry is a variable number of items (bytes of a string, values of a list),
    /// bounded by [`ColumnData::offsets`].
    ///
    /// [`ColumnData::offsets`]: crate::ColumnData::offsets
    pub fn is_variable(self) -> bool {
        !matches!(self, ColumnKind::Scalar(_) | ColumnKind::Fixed(..))
    }

    /// How many boundary levels lie below the entries' offsets ([`ColumnData::levels`]): a
    /// list of lists' inner lists, a list of strings' strings, and so on.
    ///
    /// [`ColumnData::levels`]: crate::ColumnData::levels
    pub fn levels(self) -> usize {
        match self {
            ColumnKind::Nested(_, depth) => usize::from(depth).saturating_sub(1),
            ColumnKind::Strings(depth) => usize::from(depth),
            _ => 0,
        }
    }

    /// The kind of values (`item` numbers, or strings when `None`) inside `lists` lists, or
    /// `None` when evtc has no such kind (more than [`ColumnKind::MAX_DEPTH`] lists).
    pub(crate) fn of_lists(item: Option<ScalarType>, lists: usize) -> Option<ColumnKind> {
        let depth = u8::try_from(lists)
            .ok()
            .filter(|&d| usize::from(d) <= ColumnKind::MAX_DEPTH)?;
        Some(match (item, depth) {
            (Some(t), 0) => ColumnKind::Scalar(t),
            (Some(t), 1) => ColumnKind::Jagged(t),
            (Some(t), d) => ColumnKind::Nested(t, d),
            (None, 0) => ColumnKind::String,
            (None, d) => ColumnKind::Strings(d),
        })
    }

    /// The deepest nesting of lists a column may have.
    pub const MAX_DEPTH: usize = 8;
}
