#map = affine_map<()[s0] -> (s0 * 4)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d2)>
module {
  func.func @main(%arg0: tensor<?x4x8xf32>) -> tensor<?x6xf32> {
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense_resource<torch_tensor_6_torch.float32> : tensor<6xf32>
    %cst_1 = arith.constant dense_resource<torch_tensor_6_8_torch.float32> : tensor<6x8xf32>
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
    %0 = tensor.empty() : tensor<8x6xf32>
    %transposed = linalg.transpose ins(%cst_1 : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) permutation = [1, 0] 
    %dim = tensor.dim %arg0, %c0 : tensor<?x4x8xf32>
    %1 = affine.apply #map()[%dim]
    %2 = tensor.empty(%1) : tensor<?x6xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<?x6xf32>) -> tensor<?x6xf32>
    %4 = linalg.matmul ins(%collapsed, %transposed : tensor<?x8xf32>, tensor<8x6xf32>) outs(%3 : tensor<?x6xf32>) -> tensor<?x6xf32>
    %5 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%4, %cst_0 : tensor<?x6xf32>, tensor<6xf32>) outs(%2 : tensor<?x6xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %10 = arith.addf %in, %in_2 : f32
      linalg.yield %10 : f32
    } -> tensor<?x6xf32>
    %6 = arith.divsi %1, %c4 : index
    %expanded = tensor.expand_shape %5 [[0, 1], [2]] output_shape [%6, 4, 6] : tensor<?x6xf32> into tensor<?x4x6xf32>
    %7 = tensor.empty(%6) : tensor<?x6xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<?x6xf32>) -> tensor<?x6xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction", "parallel"]} ins(%expanded : tensor<?x4x6xf32>) outs(%8 : tensor<?x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %10 = arith.addf %in, %out : f32
      linalg.yield %10 : f32
    } -> tensor<?x6xf32>
    return %9 : tensor<?x6xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_6_torch.float32: "0x040000002DF62E3E3673ADBE0593AB3D89248CBEA3F4333E63C79ABE",
      torch_tensor_6_8_torch.float32: "0x040000002E8FF63B7D1DA6BE435B67BBC4F711BDD11802BD01BF90BD27B68E3E0797853ED45F75BE392D283E09FD8DBE0A1B9ABE5E56DD3D1F43AA3BB2E428BE0598AEBE82280CBE6BD7F13D408DA7BEA2DAAFBE27BB373D366882BE64969EBE0F7D0BBE752769BD437EA4BE46BE71BEA0E7BD3C34B2AABE688B4BBDF4C469BE8DFA7ABEDC4A0E3E26548BBEC22E89BEC6764E3EC960873D4CDBA43EE88AC1BDC1DE2EBE870506BDA374EA3AA90D8A3E4A4FB4BE2638CEBC0A26203E595E47BE74F737BE"
    }
  }
#-}
