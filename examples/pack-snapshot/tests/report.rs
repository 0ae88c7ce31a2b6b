//! The pack's snapshot test: any change to what the skills disclose, route, schedule or
//! select shows up as a snapshot diff in review. Accept an intended change with
//! `INSTA_UPDATE=always cargo test` (or `cargo insta review`) and commit the .snap file.

#[test]
fn report() {
    let pack = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");
    insta::assert_snapshot!(skill_pack::report(&[pack]).expect("the pack folder is readable"));
}
