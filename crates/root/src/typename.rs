//! C++ type names as ROOT writes them in streamer infos, branch titles and RNTuple fields:
//! their compact form, number types, and the arguments of the standard containers.

use crate::types::ScalarType;

/// A type name without white space (and without a leading `const`): ROOT writes
/// `vector<vector<int> >` in one place and `vector<vector<int>>` in another; infos are found,
/// and types matched, by this form.
pub(crate) fn compact(class: &str) -> String {
    // A `const` value streams as the value does.
    let class = class.trim_start();
    let class = class.strip_prefix("const ").unwrap_or(class);
    class.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The number type of a C++ type name with its white space removed (`unsignedint`, `Float_t`).
pub(crate) fn scalar_type(s: &str) -> Option<ScalarType> {
    from_cpp(s).or(match s {
        "Longlong" | "longlong" => Some(ScalarType::I64),
        "unsignedlonglong" => Some(ScalarType::U64),
        "unsignedint" => Some(ScalarType::U32),
        "unsignedshort" => Some(ScalarType::U16),
        "unsignedchar" => Some(ScalarType::U8),
        "unsignedlong" => Some(ScalarType::U64),
        _ => None,
    })
}

/// The arguments of `name<...>` or `std::name<...>` for one of `names` (white space removed),
/// split at their top-level commas.
pub(crate) fn template_args<'a>(compact: &'a str, names: &[&str]) -> Option<Vec<&'a str>> {
    let unqualified = compact.strip_prefix("std::").unwrap_or(compact);
    let inner = names.iter().find_map(|name| {
        unqualified
            .strip_prefix(name)
            .and_then(|s| s.strip_prefix('<'))
            .and_then(|s| s.strip_suffix('>'))
    })?;
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(&inner[start..]);
    Some(args)
}

/// Whether a container's trailing template argument is a standard comparator, hash or
/// allocator, which change nothing in how it is streamed.
pub(crate) fn standard_argument(arg: &str) -> bool {
    let arg = arg.strip_prefix("std::").unwrap_or(arg);
    [
        "allocator<",
        "less<",
        "hash<",
        "equal_to<",
        "ROOT::Detail::VecOps::RAdoptAllocator<",
    ]
    .iter()
    .any(|p| arg.starts_with(p))
}

/// The element type of `std::vector<T>` (white space removed), with or without an allocator
/// (RDataFrame's `vector<T,ROOT::Detail::VecOps::RAdoptAllocator<T>>`), of
/// `ROOT::VecOps::RVec<T>`, which ROOT stores as a `std::vector<T>`, and of `std::list`,
/// `std::deque` and the sets (`std::set`, `multiset`, `unordered_set`, `unordered_multiset`),
/// which ROOT's collection proxy streams exactly as a vector (an object header, the size, the
/// elements). A `std::bitset<N>` is `bool`: its
/// collection proxy streams it as a vector of `N` bools, bit 0 first, one byte each (uproot 5.7
/// reads it so, as a list of booleans).
pub(crate) fn vector_element(compact: &str) -> Option<String> {
    if let Some([bits]) = template_args(compact, &["bitset"]).as_deref()
        && bits.parse::<u64>().is_ok()
    {
        return Some("bool".to_owned());
    }
    const LISTS: [&str; 9] = [
        "vector",
        "ROOT::VecOps::RVec",
        "ROOT::RVec",
        "list",
        "deque",
        "set",
        "multiset",
        "unordered_set",
        "unordered_multiset",
    ];
    match template_args(compact, &LISTS)?.as_slice() {
        [element, rest @ ..] if rest.iter().all(|a| standard_argument(a)) => {
            Some((*element).to_owned())
        }
        _ => None,
    }
}

/// The key and value types of a `std::map`, `multimap`, `unordered_map` or
/// `unordered_multimap` (white space removed), with or without the standard comparator, hash
/// and allocator arguments.
pub(crate) fn map_types(compact: &str) -> Option<(String, String)> {
    const MAPS: [&str; 4] = ["map", "multimap", "unordered_map", "unordered_multimap"];
    match template_args(compact, &MAPS)?.as_slice() {
        [key, value, rest @ ..] if rest.iter().all(|a| standard_argument(a)) => {
            Some(((*key).to_owned(), (*value).to_owned()))
        }
        _ => None,
    }
}

/// The number type of a C++ type name (`float`, `Float_t`, `uint32_t`).
fn from_cpp(name: &str) -> Option<ScalarType> {
    Some(match name.trim() {
        "bool" | "Bool_t" => ScalarType::Bool,
        "char" | "Char_t" | "signed char" | "int8_t" => ScalarType::I8,
        "unsigned char" | "UChar_t" | "uint8_t" => ScalarType::U8,
        "short" | "Short_t" | "int16_t" => ScalarType::I16,
        "unsigned short" | "UShort_t" | "uint16_t" => ScalarType::U16,
        "int" | "Int_t" | "int32_t" => ScalarType::I32,
        "unsigned int" | "UInt_t" | "uint32_t" => ScalarType::U32,
        "long" | "Long_t" | "long long" | "Long64_t" | "int64_t" => ScalarType::I64,
        "unsigned long" | "ULong_t" | "unsigned long long" | "ULong64_t" | "uint64_t" => {
            ScalarType::U64
        }
        "float" | "Float_t" => ScalarType::F32,
        "double" | "Double_t" => ScalarType::F64,
        _ => return None,
    })
}
