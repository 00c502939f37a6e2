// A small program of the core dialects: the cleanup pipeline folds the
// constants, removes the double negation and the duplicate add, and drops
// the unused private function.
func.func @main(%x: i32) -> i32 {
  %c3 = test.constant 3 : i32
  %c4 = test.constant 4 : i32
  %c7 = test.add %c3, %c4 : i32
  %a = test.add %x, %c7 : i32
  %b = test.add %x, %c7 : i32
  %n = test.neg %a : i32
  %nn = test.neg %n : i32
  test.print %nn, %b : i32, i32
  %r = func.call @helper(%a) : (i32) -> i32
  return %r : i32
}
func.func private @helper(%v: i32) -> i32 {
  return %v : i32
}
func.func private @unused(%v: i32) -> i32 {
  return %v : i32
}
