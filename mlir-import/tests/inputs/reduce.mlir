// Reductions as tosa-to-linalg writes them (linalg.reduce into a fill) and as
// a linalg.generic with a reduction iterator accumulating into an argument.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @r(%a: tensor<2x3xf32>, %acc: tensor<2xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%z : tensor<2xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %lowest = arith.constant -3.40282347E+38 : f32
  %e3 = tensor.empty() : tensor<3xf32>
  %l = linalg.fill ins(%lowest : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %max = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%l : tensor<3xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %m = arith.maximumf %in, %init : f32
      linalg.yield %m : f32
    }
  %g = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<2x3xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %o, %x : f32
    linalg.yield %t : f32
  } -> tensor<2xf32>
  return %sum, %max, %g : tensor<2xf32>, tensor<3xf32>, tensor<2xf32>
}
