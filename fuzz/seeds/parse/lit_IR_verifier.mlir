// The verifier: structural rules and op-specific checks.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @dominance(%a: i32) {
  // expected-error@+1 {{'test.print' op operand #0 does not dominate this use}}
  test.print %later : i32
  // expected-note@+1 {{operand defined here}}
  %later = test.add %a, %a : i32
  return
}

// -----

func.func @cfg_dominance(%c: i1) {
  "test.cond_br"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  // expected-note@+1 {{operand defined here}}
  %x = test.constant 1 : i32
  "test.br"()[^bb2] : () -> ()
^bb2:
  // expected-error@+1 {{'test.print' op operand #0 does not dominate this use}}
  test.print %x : i32
  return
}

// -----

func.func @cfg_ok(%c: i1) {
  %x = test.constant 1 : i32
  "test.cond_br"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  "test.br"()[^bb2] : () -> ()
^bb2:
  test.print %x : i32
  return
}

// -----

// Values from above are not even visible inside an isolated region.
func.func @isolation(%a: i32) {
  test.isolated {
    // expected-error@+1 {{use of undeclared SSA value name '%a'}}
    test.print %a : i32
  }
  return
}

// -----

func.func @terminator_last() {
  // expected-error@+1 {{'func.return' op must be the last operation in the parent block}}
  return
  "test.print"() : () -> ()
}

// -----

// expected-note@+1 {{in a region of this operation}}
func.func @no_terminator() {
  // expected-error@+1 {{block with no terminator}}
  %x = test.constant 1 : i32
}

// -----

func.func @return_count(%a: i32) -> i32 {
  // expected-error@+1 {{'func.return' op has 0 operands, but enclosing function (@return_count) returns 1}}
  return
}

// -----

func.func @return_type(%a: i32) -> f32 {
  // expected-error@+1 {{type of return operand 0 ('i32') doesn't match function result type ('f32') in function @return_type}}
  return %a : i32
}

// -----

// expected-note@+1 {{see existing symbol definition here}}
func.func private @dup()
// expected-error@+1 {{redefinition of symbol named 'dup'}}
func.func private @dup()

// -----

func.func @bad_call(%a: i32) {
  // expected-error@+1 {{'func.call' op 'missing' does not reference a valid function}}
  func.call @missing(%a) : (i32) -> ()
  return
}

// -----

func.func private @callee(f32)
func.func @call_types(%a: i32) {
  // expected-error@+1 {{operand type mismatch: expected operand type 'f32', but provided 'i32' for operand number 0}}
  func.call @callee(%a) : (i32) -> ()
  return
}

// -----

func.func @same_type(%a: i32, %b: i64) {
  // expected-error@+1 {{'test.add' op requires the same type for all operands and results}}
  %0 = "test.add"(%a, %b) : (i32, i64) -> i32
  return
}

// -----

func.func @constraint(%a: tensor<2xi32>) {
  // expected-error@+1 {{'test.add' op operand #0 must be integer, index or floating-point, but got 'tensor<2xi32>'}}
  %0 = "test.add"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return
}

// -----

// expected-error@+1 {{'test.constant' op requires attribute 'value'}}
%0 = "test.constant"() : () -> i32

// -----

func.func @count(%a: i32) {
  // expected-error@+1 {{'test.add' op expected 2 operands, but found 1}}
  %0 = "test.add"(%a) : (i32) -> i32
  return
}

// -----

// expected-error@+1 {{'func.func' op attribute 'function_type' failed to satisfy constraint: type attribute of function type (got i32)}}
"func.func"() ({}) {function_type = i32, sym_name = "x"} : () -> ()

// -----

// expected-error@+1 {{'test.constant' op value type does not match the result type}}
%0 = "test.constant"() {value = 1 : i64} : () -> i32

// -----

// expected-error@+1 {{'func.func' op symbol declaration cannot have public visibility}}
func.func @decl_public(i32)

// -----

// An argument's default value (`ipu.default`) has the argument's type.
// expected-error@+1 {{'func.func' op argument #1: 'ipu.default' is tensor<3xf32>, but the argument is tensor<2xf32>}}
func.func @default_type(%a: tensor<2xf32>, %b: tensor<2xf32> {ipu.default = dense<1.0> : tensor<3xf32>}) {
  return
}

// -----

// expected-error@+1 {{'func.func' op argument #0: 'ipu.default' must be a dense elements or resource attribute}}
func.func @default_kind(%a: tensor<2xf32> {ipu.default = 1.0 : f32}) {
  return
}

// -----

func.func @default_ok(%a: tensor<2xf32> {ipu.default = dense<[1.0, 2.0]> : tensor<2xf32>}) {
  return
}
