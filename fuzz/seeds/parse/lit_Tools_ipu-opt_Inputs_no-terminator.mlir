func.func @f() {
  %x = test.constant 1 : i32
}
