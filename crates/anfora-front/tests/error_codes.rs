//! `docs/errors.md` documents exactly the codes the compiler can emit.

use std::collections::BTreeSet;

#[test]
fn docs_list_every_code_and_no_other() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md"))
            .unwrap();
    let documented: BTreeSet<String> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("| E"))
        .map(|rest| format!("E{}", &rest[..4]))
        .collect();
    let known: BTreeSet<String> = anfora_front::codes::CODES
        .iter()
        .map(|(c, _)| c.to_string())
        .collect();
    assert_eq!(documented, known);
    let unique: BTreeSet<&str> = anfora_front::codes::CODES.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        unique.len(),
        anfora_front::codes::CODES.len(),
        "codes are unique"
    );
}
