mod common;
use common::*;

#[test]
fn integer_loop_and_store() {
    let src = r#"
        .text
        .globl main
main:   setzi $m1, 0
        setzi $m2, 10
loop:   add $m1, $m1, $m2
        add $m2, $m2, -1
        brnz $m2, loop
        setzi $m3, 0x80000
        st32 $m1, [$m3]
        halt
"#;
    let t = run_with(src, 0, |_| {}).unwrap();
    assert_eq!(rd32(&t, 0x80000), 55);
}
