#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
module {
  func.func @main(%arg0: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant dense_resource<torch_tensor_32_torch.float32_1> : tensor<32xf32>
    %cst_2 = arith.constant dense_resource<torch_tensor_32_torch.float32> : tensor<32xf32>
    %cst_3 = arith.constant 1.000000e-05 : f64
    %cst_4 = arith.constant 3.200000e+01 : f64
    %cst_5 = arith.constant 3.200000e+01 : f32
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x32xf32>
    %dim_6 = tensor.dim %arg0, %c1 : tensor<?x?x32xf32>
    %0 = tensor.empty(%dim, %dim_6) : tensor<?x?x32xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<?x?x32xf32>) outs(%0 : tensor<?x?x32xf64>) {
    ^bb0(%in: f32, %out: f64):
      %22 = arith.extf %in : f32 to f64
      linalg.yield %22 : f64
    } -> tensor<?x?x32xf64>
    %2 = tensor.empty(%dim, %dim_6) : tensor<?x?x1xf64>
    %3 = linalg.fill ins(%cst : f64) outs(%2 : tensor<?x?x1xf64>) -> tensor<?x?x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<?x?x32xf64>) outs(%3 : tensor<?x?x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<?x?x1xf64>) outs(%2 : tensor<?x?x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_4 : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %5 : tensor<?x?x32xf64>, tensor<?x?x1xf64>) outs(%0 : tensor<?x?x32xf64>) {
    ^bb0(%in: f64, %in_7: f64, %out: f64):
      %22 = arith.subf %in, %in_7 : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x32xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<?x?x32xf64>, tensor<?x?x32xf64>) outs(%0 : tensor<?x?x32xf64>) {
    ^bb0(%in: f64, %in_7: f64, %out: f64):
      %22 = arith.mulf %in, %in_7 : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x32xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<?x?x32xf64>) outs(%3 : tensor<?x?x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<?x?x1xf64>) outs(%2 : tensor<?x?x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_4 : f64
      linalg.yield %22 : f64
    } -> tensor<?x?x1xf64>
    %10 = tensor.empty(%dim, %dim_6) : tensor<?x?x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9 : tensor<?x?x1xf64>) outs(%10 : tensor<?x?x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %22 = arith.truncf %in : f64 to f32
      linalg.yield %22 : f32
    } -> tensor<?x?x1xf32>
    %12 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x?x32xf32>) outs(%12 : tensor<?x?x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.addf %in, %out : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13 : tensor<?x?x1xf32>) outs(%10 : tensor<?x?x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.divf %in, %cst_5 : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%11 : tensor<?x?x1xf32>) outs(%10 : tensor<?x?x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.truncf %cst_3 : f64 to f32
      %23 = arith.addf %in, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<?x?x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<?x?x1xf32>) outs(%10 : tensor<?x?x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.rsqrt %in : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x1xf32>
    %17 = tensor.empty(%dim, %dim_6) : tensor<?x?x32xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %14 : tensor<?x?x32xf32>, tensor<?x?x1xf32>) outs(%17 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.subf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x32xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %16 : tensor<?x?x32xf32>, tensor<?x?x1xf32>) outs(%17 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x32xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %cst_2 : tensor<?x?x32xf32>, tensor<32xf32>) outs(%17 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.mulf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x32xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20, %cst_1 : tensor<?x?x32xf32>, tensor<32xf32>) outs(%17 : tensor<?x?x32xf32>) {
    ^bb0(%in: f32, %in_7: f32, %out: f32):
      %22 = arith.addf %in, %in_7 : f32
      linalg.yield %22 : f32
    } -> tensor<?x?x32xf32>
    return %21 : tensor<?x?x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_32_torch.float32_1: "0x04000000470882BFA1C8C3BFFBE59BBF7E485E3FD81BC5BE9F62C53DC2EEA2BE9DEFEC3FB17217BE9D3C8ABF82FD0EBEA8F3A0BF9E91C53FD0F4773FAC10C7BFFC814C3F6D45983F8DD437BEEC5FE9BF6C5552BD776BD1BF28AD20C0B77F9EBF87FB6DBF72C36FBD6EDB453F5E19F03ED50F853EACF3413F0FAD02C0A4680DBF9181203F",
      torch_tensor_32_torch.float32: "0x040000003E11DFBE58298D3F5CDB44BF8E1D04BE17C0B53F38BEA8BE5CFF373EDD117DBF9257A13FD63226BF0B29253EDE8761BF812B31BDFC2BF13EDF9BA7BFFCFD9E3F806D80BF139ACFBEA3E4823FBE6A82BE133EA3BF787BBEBE81BA65BFB8E12FBF346AA7BE8C0B743F47A8123F812D53BF88CD0ABF8C52933FBB05CE3F1C193DBF"
    }
  }
#-}
