//! The streamer infos a written file carries (`TStreamerInfo` records in the file's
//! `StreamerInfo` list): descriptions of the classes whose objects the file stores, from which
//! readers without those classes compiled in (uproot, JSROOT) learn their layout.
//!
//! A class is data ([`ClassInfo`]: name, version, checksum, members); [`streamer_list`]
//! serializes a list of them as ROOT does: a `TList` of `TStreamerInfo`s, each a `TNamed`,
//! the class checksum and version, and a `TObjArray` of `TStreamerElement` subclasses.

use super::buffer::ObjectBuffer;

/// `TStreamerInfo`'s version written: 9, the layout of ROOT 6 before 6.36 (which writes 10 for
/// the same fields), so that every ROOT 6 reads it.
const STREAMER_INFO_VERSION: i16 = 9;
/// `TStreamerInfo`'s `TNamed` bits as ROOT writes them (`kIsCompiled`... not: bit 16).
const STREAMER_INFO_BITS: u32 = 0x0001_0000;

/// ROOT's type codes of basic members (`TVirtualStreamerInfo::EReadWrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)]
pub(crate) enum Basic {
    Char = 1,
    Short = 2,
    Int = 3,
    Long = 4,
    Float = 5,
    Counter = 6,
    Double = 8,
    Double32 = 9,
    UChar = 11,
    UShort = 12,
    UInt = 13,
    ULong = 14,
    Bits = 15,
    Long64 = 16,
    ULong64 = 17,
    Bool = 18,
}

impl Basic {
    /// The member's size in bytes in memory.
    fn size(self) -> i32 {
        match self {
            Basic::Char | Basic::UChar | Basic::Bool => 1,
            Basic::Short | Basic::UShort => 2,
            Basic::Int | Basic::UInt | Basic::Float | Basic::Counter | Basic::Bits => 4,
            Basic::Long | Basic::ULong | Basic::Long64 | Basic::ULong64 | Basic::Double => 8,
            Basic::Double32 => 8,
        }
    }
}

/// One member of a class, as a `TStreamerElement` subclass describes it.
#[derive(Debug, Clone)]
pub(crate) enum Member {
    /// A member of a basic type (`TStreamerBasicType`), `array` values of it when non-zero.
    Basic {
        name: &'static str,
        title: &'static str,
        kind: Basic,
        type_name: &'static str,
        array: i32,
    },
}

/// A class the file stores objects of.
#[derive(Debug, Clone)]
pub(crate) struct ClassInfo {
    pub(crate) name: &'static str,
    pub(crate) version: i32,
    /// The checksum ROOT computes of the class's members (`TClass::GetCheckSum`): ROOT warns
    /// when a file's info of a class version it knows has another.
    pub(crate) checksum: u32,
    pub(crate) members: Vec<Member>,
}

/// The streamer info of `ROOT::RNTuple` (an RNTuple's anchor), class version 2.
pub(crate) fn rntuple_anchor() -> ClassInfo {
    let short = |name| Member::Basic {
        name,
        title: "",
        kind: Basic::UShort,
        type_name: "unsigned short",
        array: 0,
    };
    let long = |name| Member::Basic {
        name,
        title: "",
        kind: Basic::ULong,
        type_name: "unsigned long",
        array: 0,
    };
    ClassInfo {
        name: "ROOT::RNTuple",
        version: 2,
        // As ROOT 6.34-6.40 compute it for the class's eleven members.
        checksum: 0x28e6_32ec,
        members: vec![
            short("fVersionEpoch"),
            short("fVersionMajor"),
            short("fVersionMinor"),
            short("fVersionPatch"),
            long("fSeekHeader"),
            long("fNBytesHeader"),
            long("fLenHeader"),
            long("fSeekFooter"),
            long("fNBytesFooter"),
            long("fLenFooter"),
            long("fMaxKeySize"),
        ],
    }
}

/// The `TList` of `classes`' streamer infos, as stored under a key of `key_len` bytes (class
/// tags count the key).
pub(crate) fn streamer_list(classes: &[ClassInfo], key_len: u32) -> Vec<u8> {
    let mut b = ObjectBuffer::new(key_len);
    let list = b.begin(5);
    b.tobject(0);
    b.string("");
    b.i32(classes.len() as i32);
    for class in classes {
        let object = b.begin_tagged("TStreamerInfo");
        streamer_info(&mut b, class);
        b.end(object);
        // TList: each object's option string.
        b.string("");
    }
    b.end(list);
    b.bytes
}

fn streamer_info(b: &mut ObjectBuffer, class: &ClassInfo) {
    let info = b.begin(STREAMER_INFO_VERSION);
    b.tnamed(class.name, "", STREAMER_INFO_BITS);
    b.u32(class.checksum);
    b.i32(class.version);
    let array = b.begin_tagged("TObjArray");
    let body = b.begin(3);
    b.tobject(0);
    b.string("");
    b.i32(class.members.len() as i32);
    b.i32(0); // lower bound
    for member in &class.members {
        match member {
            Member::Basic {
                name,
                title,
                kind,
                type_name,
                array,
            } => {
                let object = b.begin_tagged("TStreamerBasicType");
                let own = b.begin(2);
                let element = b.begin(4);
                b.tnamed(name, title, 0);
                b.i32(*kind as i32 + if *array > 0 { 20 } else { 0 });
                b.i32(kind.size() * (*array).max(1));
                b.i32(*array);
                b.i32(i32::from(*array > 0));
                for d in 0..5 {
                    b.i32(if d == 0 { *array } else { 0 });
                }
                b.string(type_name);
                b.end(element);
                b.end(own);
                b.end(object);
            }
        }
    }
    b.end(body);
    b.end(array);
    b.end(info);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ROOT 6.40's `StreamerInfo` record of a file holding one RNTuple (its key 72 bytes long):
    /// the list with `ROOT::RNTuple`'s info, as `tests/fixtures/make_fixtures.py --writer`
    /// extracts it, but for the `TStreamerInfo` version (ROOT 6.40 writes 10, this writer 9).
    #[test]
    fn the_rntuple_anchor_info_is_what_root_writes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/write/rntuple_streamers.bin"
        );
        let mut root = std::fs::read(path).expect("fixture");
        let ours = streamer_list(&[rntuple_anchor()], 72);
        // ROOT's version 10 of TStreamerInfo, six bytes after the class tag's name.
        let at = root
            .windows(14)
            .position(|w| w == b"TStreamerInfo\0")
            .expect("the info's class")
            + 14
            + 4;
        assert_eq!(&root[at..at + 2], &[0, 10]);
        root[at + 1] = 9;
        assert_eq!(ours.len(), root.len());
        if let Some(i) = ours.iter().zip(&root).position(|(a, b)| a != b) {
            panic!(
                "differs at byte {i}: ours {:02x?}, ROOT's {:02x?}",
                &ours[i.saturating_sub(8)..(i + 8).min(ours.len())],
                &root[i.saturating_sub(8)..(i + 8).min(root.len())]
            );
        }
    }
}
