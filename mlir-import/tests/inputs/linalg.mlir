// linalg named ops and an elementwise linalg.generic on tensors.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @layer(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>, %acc: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32> loc("layer.py":7:3)
  // y = max(m + bias, 0) * 0.5
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    %half = arith.constant 0.5 : f32
    %h = arith.mulf %r, %half : f32
    linalg.yield %h : f32
  } -> tensor<2x3xf32>
  // Accumulating matmul: acc + x * w.
  %acc2 = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%acc : tensor<2x3xf32>) -> tensor<2x3xf32>
  %ex = linalg.exp ins(%acc2 : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = linalg.add ins(%ex, %y : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %sum : tensor<2x3xf32>, tensor<2x3xf32>
}

func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<2x3x5xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%zero : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %e = tensor.empty() : tensor<2x5x3xf32>
  %t = linalg.transpose ins(%m : tensor<2x3x5xf32>) outs(%e : tensor<2x5x3xf32>) permutation = [0, 2, 1]
  return %t : tensor<2x5x3xf32>
}
