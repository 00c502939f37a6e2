// tosa_mlp.mlir lowered by upstream MLIR 22:
//   mlir-opt --pass-pipeline='builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-tensor,tosa-to-arith))'
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
module {
  func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
    %0 = tosa.const_shape  {values = dense<[1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %1 = tosa.const_shape  {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %cst = arith.constant dense<0.000000e+00> : tensor<1xf32>
    %cst_0 = arith.constant dense<[[[5.000000e-01, -2.500000e-01, 1.000000e+00, 0.000000e+00, 7.500000e-01, -1.000000e+00, 1.250000e-01, 2.000000e+00], [1.500000e+00, 5.000000e-01, -5.000000e-01, 2.500000e-01, 0.000000e+00, 1.000000e+00, -7.500000e-01, 5.000000e-01], [-1.000000e+00, 2.500000e-01, 5.000000e-01, 1.000000e+00, 5.000000e-01, 0.000000e+00, 2.500000e-01, -5.000000e-01], [0.000000e+00, 1.000000e+00, 2.500000e-01, -5.000000e-01, 1.250000e+00, 5.000000e-01, 1.000000e+00, 0.000000e+00]]]> : tensor<1x4x8xf32>
    %cst_1 = arith.constant dense<[[[1.000000e-01, -2.000000e-01, 3.000000e-01, -4.000000e-01, 5.000000e-01, -6.000000e-01, 0.699999988, -8.000000e-01]]]> : tensor<1x1x8xf32>
    %cst_2 = arith.constant dense<[[[1.000000e+00, 0.000000e+00, -1.000000e+00], [5.000000e-01, 5.000000e-01, 5.000000e-01], [-2.500000e-01, 1.000000e+00, 0.000000e+00], [0.000000e+00, -5.000000e-01, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00], [-1.000000e+00, 2.500000e-01, 5.000000e-01], [5.000000e-01, -2.500000e-01, 7.500000e-01], [1.250000e-01, 0.000000e+00, -1.250000e-01]]]> : tensor<1x8x3xf32>
    %cst_3 = arith.constant dense<2.500000e-01> : tensor<1x1x3xf32>
    %expanded = tensor.expand_shape %arg0 [[0, 1], [2]] output_shape [1, 2, 4] : tensor<2x4xf32> into tensor<1x2x4xf32>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %2 = tensor.empty() : tensor<1x2x8xf32>
    %3 = linalg.fill ins(%cst_4 : f32) outs(%2 : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
    %4 = linalg.batch_matmul ins(%expanded, %cst_0 : tensor<1x2x4xf32>, tensor<1x4x8xf32>) outs(%3 : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
    %5 = tensor.empty() : tensor<1x2x8xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4, %cst_1 : tensor<1x2x8xf32>, tensor<1x1x8xf32>) outs(%5 : tensor<1x2x8xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %16 = arith.addf %in, %in_6 : f32
      linalg.yield %16 : f32
    } -> tensor<1x2x8xf32>
    %7 = tensor.empty() : tensor<1x2x8xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<1x2x8xf32>) outs(%7 : tensor<1x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_6 = arith.constant 0.000000e+00 : f32
      %cst_7 = arith.constant 3.40282347E+38 : f32
      %16 = arith.minimumf %in, %cst_7 : f32
      %17 = arith.maximumf %16, %cst_6 : f32
      linalg.yield %17 : f32
    } -> tensor<1x2x8xf32>
    %cst_5 = arith.constant 0.000000e+00 : f32
    %9 = tensor.empty() : tensor<1x2x3xf32>
    %10 = linalg.fill ins(%cst_5 : f32) outs(%9 : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
    %11 = linalg.batch_matmul ins(%8, %cst_2 : tensor<1x2x8xf32>, tensor<1x8x3xf32>) outs(%10 : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
    %12 = tensor.empty() : tensor<1x2x3xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11, %cst_3 : tensor<1x2x3xf32>, tensor<1x1x3xf32>) outs(%12 : tensor<1x2x3xf32>) {
    ^bb0(%in: f32, %in_6: f32, %out: f32):
      %16 = arith.addf %in, %in_6 : f32
      linalg.yield %16 : f32
    } -> tensor<1x2x3xf32>
    %14 = tensor.empty() : tensor<1x2x3xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<1x2x3xf32>) outs(%14 : tensor<1x2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_6 = arith.constant 1.000000e+00 : f32
      %16 = arith.negf %in : f32
      %17 = math.exp %16 : f32
      %18 = arith.addf %17, %cst_6 : f32
      %19 = arith.divf %cst_6, %18 : f32
      linalg.yield %19 : f32
    } -> tensor<1x2x3xf32>
    %collapsed = tensor.collapse_shape %15 [[0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
    return %collapsed : tensor<2x3xf32>
  }
}

