// Integer shape arithmetic on constants (a gather of a shape, mul, an
// unsqueeze, a slice, a concat of ints, a comparison and a select on ints, a
// cast) folds under canonicalize into one constant: nn ops fold by
// evaluating the reference, so none of it reaches the device.
// RUN: ipu-opt --canonicalize %s | FileCheck %s
// CHECK: func.func @main
// CHECK-NEXT: %[[S:.*]] = nn.constant dense<[10, 8]> : tensor<2xi32>
// CHECK-NEXT: %[[Y:.*]] = nn.reshape %arg0 : tensor<2x5x8xf32> -> tensor<10x8xf32>
// CHECK-NEXT: return %[[Y]], %[[S]]
func.func @main(%x: tensor<2x5x8xf32> {ipu.name = "x"}) -> (tensor<10x8xf32> {ipu.name = "y"}, tensor<2xi32> {ipu.name = "s"}) {
  %shape = nn.constant dense<[2, 5, 8]> : tensor<3xi64>
  %i0 = nn.constant dense<0> : tensor<i64>
  %i1 = nn.constant dense<1> : tensor<i64>
  %b = nn.gather %shape[%i0] {axis = 0} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %s = nn.gather %shape[%i1] {axis = 0} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %bs = nn.mul %b, %s : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %u = nn.reshape %bs : tensor<i64> -> tensor<1xi64>
  %last = nn.slice %shape {starts = array<i64: 2>, ends = array<i64: 3>, steps = array<i64: 1>} : tensor<3xi64> -> tensor<1xi64>
  %new = nn.concat %u, %last {axis = 0} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %neg = nn.constant dense<-1> : tensor<2xi64>
  %isneg = nn.equal %new, %neg : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %one = nn.constant dense<1> : tensor<2xi64>
  %fixed = nn.select %isneg, %one, %new : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %cast = nn.cast %fixed : tensor<2xi64> -> tensor<2xi32>
  %y = nn.reshape %x : tensor<2x5x8xf32> -> tensor<10x8xf32>
  return %y, %cast : tensor<10x8xf32>, tensor<2xi32>
}
