// Every builtin attribute kind parses, prints canonically and round-trips.
// RUN: ipu-opt --allow-unregistered-dialect %s > %t && ipu-opt --allow-unregistered-dialect %t | diff %t -
// RUN: ipu-opt --allow-unregistered-dialect %s | FileCheck %s

#alias = {nested = [1, 2]}
!tensor_alias = tensor<2x2xi32>

// CHECK-LABEL: "test.attrs"() {
"test.attrs"() {
  // CHECK-SAME: alias = {nested = [1 : i64, 2 : i64]}
  alias = #alias,
  // CHECK-SAME: array = [1 : i64, -2 : i8, 2.5 : f64, true, false, unit, "s"]
  array = [1, -2 : i8, 2.5, true, false, unit, "s"],
  // CHECK-SAME: dense_bool = dense<[true, false, true]> : tensor<3xi1>
  dense_bool = dense<[true, false, true]> : tensor<3xi1>,
  // Empty tensors print as MLIR prints them, whatever their row count (the
  // `onnx` fuzz target found a 2^42-row empty constant printing forever).
  // CHECK-SAME: dense_empty = dense<> : tensor<2x0xf32>
  dense_empty = dense<[[], []]> : tensor<2x0xf32>,
  // CHECK-SAME: dense_empty_rows = dense<> : tensor<5497558138880x0xf32>
  dense_empty_rows = dense<> : tensor<5497558138880x0xf32>,
  // CHECK-SAME: dense_f16_splat = dense<1.5> : tensor<4x4xf16>
  dense_f16_splat = dense<1.5> : tensor<4x4xf16>,
  // FP8 literals round to nearest even; 0.1 becomes 0.1015625 in E4M3FN.
  // CHECK-SAME: dense_f8 = dense<[0.1015625, 448.0, -2.0]> : tensor<3xf8E4M3FN>
  dense_f8 = dense<[0.1, 448.0, -2.0]> : tensor<3xf8E4M3FN>,
  // CHECK-SAME: dense_f8e5 = dense<[57344.0, 0.00015258789]> : tensor<2xf8E5M2>
  dense_f8e5 = dense<[57344.0, 0.00015258789]> : tensor<2xf8E5M2>,
  // The hex-blob form is little-endian element bytes.
  // CHECK-SAME: dense_hex = dense<[1.0, 2.0]> : tensor<2xf32>
  dense_hex = dense<"0x0000803F00000040"> : tensor<2xf32>,
  // CHECK-SAME: dense_int = dense<{{\[}}[1, 2], [3, -4]]> : tensor<2x2xi32>
  dense_int = dense<[[1, 2], [3, -4]]> : !tensor_alias,
  // CHECK-SAME: dialect_attr = #ipu.mapping<tiles = [0, 1], "s>">
  dialect_attr = #ipu.mapping<tiles = [0, 1], "s>">,
  // CHECK-SAME: dialect_type = !ipu.dist<4 x f32>
  dialect_type = !ipu.dist<4 x f32>,
  // CHECK-SAME: dict = {a, b = "x"}
  dict = {b = "x", a},
  // CHECK-SAME: float = 0.1 : f32
  float = 0.1 : f32,
  // CHECK-SAME: float_bf16 = 3.140625 : bf16
  float_bf16 = 3.14159 : bf16,
  // CHECK-SAME: float_exp = 1.0e-10 : f64
  float_exp = 1.0e-10 : f64,
  // CHECK-SAME: fn_type = (i32, f32) -> (f16, f16)
  fn_type = (i32, f32) -> (f16, f16),
  // CHECK-SAME: hex_float = 0x7FC00000 : f32
  hex_float = 0x7FC00000 : f32,
  // CHECK-SAME: int = 42 : i64
  int = 42,
  // CHECK-SAME: int_index = 3 : index
  int_index = 3 : index,
  // CHECK-SAME: int_si8 = -128 : si8
  int_si8 = -128 : si8,
  // CHECK-SAME: int_ui8 = 255 : ui8
  int_ui8 = 255 : ui8,
  // CHECK-SAME: "quoted name" = "x"
  "quoted name" = "x",
  // CHECK-SAME: string = "tab\09quote\22nl\0A"
  string = "tab\tquote\"nl\n",
  // CHECK-SAME: sym = @outer::@inner
  sym = @outer::@inner,
  // CHECK-SAME: sym_quoted = @"with space"
  sym_quoted = @"with space",
  // CHECK-SAME: type = tensor<?x4xf32>
  type = tensor<?x4xf32>,
  // CHECK-SAME: unit_attr
  unit_attr
} : () -> ()
