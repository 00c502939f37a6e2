// Malformed IR: each case is a clear diagnostic at its source location.
// RUN: ipu-opt --split-input-file --verify-diagnostics %s

func.func @undefined() {
  // expected-error@+1 {{use of undeclared SSA value name '%nope'}}
  test.print %nope : i32
  return
}

// -----

func.func @redefined(%a: i32) {
  // expected-note@+1 {{previously defined here}}
  %x = test.add %a, %a : i32
  // expected-error@+1 {{redefinition of SSA value '%x'}}
  %x = test.add %a, %a : i32
  return
}

// -----

// expected-error@+1 {{unknown type 'f17'}}
func.func private @bad_type(f17)

// -----

func.func @mismatch(%a: i32) {
  // expected-error@+1 {{use of value '%a' expects different type than prior uses: 'f32' vs 'i32'}}
  %x = test.add %a, %a : f32
  return
}

// -----

// expected-error@+1 {{custom op 'test.nonexistent' is unknown}}
test.nonexistent

// -----

// expected-error@+1 {{operation being parsed with an unregistered dialect 'foo'}}
"foo.bar"() : () -> ()

// -----

func.func @results() {
  // expected-error@+1 {{operation defines 1 results but was provided 2 to bind}}
  %a, %b = test.constant 1 : i32
  return
}

// -----

// expected-error@+1 {{expected 'x' in dimension list}}
func.func private @dims(tensor<4y8xf32>)

// -----

// expected-error@+1 {{integer constant out of range for attribute of type 'i8'}}
"test.print"() {v = 300 : i8} : () -> ()

// -----

// expected-error@+1 {{floating point value too large for type 'f16'}}
"test.print"() {v = 1.0e10 : f16} : () -> ()

// -----

// expected-error@+1 {{inferred shape of elements literal ([3]) does not match type ([2])}}
"test.print"() {v = dense<[1, 2, 3]> : tensor<2xi32>} : () -> ()

// -----

// expected-error@+1 {{expected attribute value, found '}'}}
"test.print"() {v = } : () -> ()

// -----

// A shape whose element count overflows (found by fuzz/parse).
// expected-error@+1 {{dense elements: the type has more elements than memory can address}}
"test.print"() {v = dense<1.0> : tensor<10000000000x10000000000xf32>} : () -> ()

// -----

// expected-error@+1 {{undefined symbol alias id 'missing'}}
"test.print"() {v = #missing} : () -> ()

// -----

func.func @blocks() {
  // expected-error@+1 {{reference to an undefined block '^bb9'}}
  "test.br"()[^bb9] : () -> ()
}

// -----

// expected-error@+1 {{duplicate key 'a' in dictionary attribute}}
"test.print"() {a = 1, a = 2} : () -> ()

// -----

// expected-error@+1 {{expected 1 operand type(s) but had 0}}
"test.print"(%0) : () -> ()

// -----

// expected-error@+1 {{unranked tensors are not supported}}
func.func private @unranked(tensor<*xf32>)

// -----

// expected-error@+1 {{expected operation name, found '{'}}
{ }
