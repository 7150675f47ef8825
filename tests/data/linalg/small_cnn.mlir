#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<2x3x16x16xf32>) -> tensor<2x5xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 0xFF800000 : f32
    %cst_2 = arith.constant dense_resource<torch_tensor_5_torch.float32> : tensor<5xf32>
    %cst_3 = arith.constant dense_resource<torch_tensor_5_4_torch.float32> : tensor<5x4xf32>
    %cst_4 = arith.constant dense_resource<torch_tensor_4_torch.float32_4> : tensor<4xf32>
    %cst_5 = arith.constant dense_resource<torch_tensor_4_torch.float32_3> : tensor<4xf32>
    %cst_6 = arith.constant 1.000000e-05 : f64
    %cst_7 = arith.constant dense_resource<torch_tensor_4_torch.float32_2> : tensor<4xf32>
    %cst_8 = arith.constant dense_resource<torch_tensor_4_torch.float32_1> : tensor<4xf32>
    %cst_9 = arith.constant dense_resource<torch_tensor_4_3_3_3_torch.float32> : tensor<4x3x3x3xf32>
    %cst_10 = arith.constant dense_resource<torch_tensor_4_torch.float32> : tensor<4xf32>
    %cst_11 = arith.constant 1.600000e+01 : f32
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<2x3x16x16xf32> to tensor<2x3x18x18xf32>
    %0 = tensor.empty() : tensor<2x4x8x8xf32>
    %broadcasted = linalg.broadcast ins(%cst_10 : tensor<4xf32>) outs(%0 : tensor<2x4x8x8xf32>) dimensions = [0, 2, 3] 
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %cst_9 : tensor<2x3x18x18xf32>, tensor<4x3x3x3xf32>) outs(%broadcasted : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %2 = tensor.empty() : tensor<4xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%cst_7 : tensor<4xf32>) outs(%2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.truncf %cst_6 : f64 to f32
      %26 = arith.addf %in, %25 : f32
      linalg.yield %26 : f32
    } -> tensor<4xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%3 : tensor<4xf32>) outs(%2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = math.sqrt %in : f32
      linalg.yield %25 : f32
    } -> tensor<4xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%4 : tensor<4xf32>) outs(%2 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.cmpf one, %in, %cst : f32
      cf.assert %25, "unimplemented: tensor with zero element"
      %26 = arith.divf %cst_0, %in : f32
      linalg.yield %26 : f32
    } -> tensor<4xf32>
    %expanded = tensor.expand_shape %cst_8 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %expanded_12 = tensor.expand_shape %5 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %expanded : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %25 = arith.subf %in, %in_15 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x8x8xf32>
    %7 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %expanded_12 : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %25 = arith.mulf %in, %in_15 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x8x8xf32>
    %expanded_13 = tensor.expand_shape %cst_5 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %expanded_13 : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %25 = arith.mulf %in, %in_15 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x8x8xf32>
    %expanded_14 = tensor.expand_shape %cst_4 [[0, 1, 2]] output_shape [4, 1, 1] : tensor<4xf32> into tensor<4x1x1xf32>
    %9 = linalg.generic {indexing_maps = [#map1, #map2, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %expanded_14 : tensor<2x4x8x8xf32>, tensor<4x1x1xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %25 = arith.addf %in, %in_15 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x8x8xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9 : tensor<2x4x8x8xf32>) outs(%0 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.cmpf ugt, %in, %cst : f32
      %26 = arith.select %25, %in, %cst : f32
      linalg.yield %26 : f32
    } -> tensor<2x4x8x8xf32>
    %11 = tensor.empty() : tensor<2x4x4x4xf32>
    %12 = linalg.fill ins(%cst_1 : f32) outs(%11 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %13 = tensor.empty() : tensor<2x2xf32>
    %14 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%10, %13 : tensor<2x4x8x8xf32>, tensor<2x2xf32>) outs(%12 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %15 = tensor.empty() : tensor<2x4x1x1xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<2x4x1x1xf32>) -> tensor<2x4x1x1xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%14 : tensor<2x4x4x4xf32>) outs(%16 : tensor<2x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.addf %in, %out : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x1x1xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17 : tensor<2x4x1x1xf32>) outs(%15 : tensor<2x4x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.divf %in, %cst_11 : f32
      linalg.yield %25 : f32
    } -> tensor<2x4x1x1xf32>
    %collapsed = tensor.collapse_shape %18 [[0], [1, 2, 3]] : tensor<2x4x1x1xf32> into tensor<2x4xf32>
    %19 = tensor.empty() : tensor<4x5xf32>
    %transposed = linalg.transpose ins(%cst_3 : tensor<5x4xf32>) outs(%19 : tensor<4x5xf32>) permutation = [1, 0] 
    %20 = tensor.empty() : tensor<2x5xf32>
    %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<2x5xf32>) -> tensor<2x5xf32>
    %22 = linalg.matmul ins(%collapsed, %transposed : tensor<2x4xf32>, tensor<4x5xf32>) outs(%21 : tensor<2x5xf32>) -> tensor<2x5xf32>
    %23 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%22, %cst_2 : tensor<2x5xf32>, tensor<5xf32>) outs(%20 : tensor<2x5xf32>) {
    ^bb0(%in: f32, %in_15: f32, %out: f32):
      %25 = arith.addf %in, %in_15 : f32
      linalg.yield %25 : f32
    } -> tensor<2x5xf32>
    %24 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<2x5xf32>) outs(%20 : tensor<2x5xf32>) {
    ^bb0(%in: f32, %out: f32):
      %25 = arith.negf %in : f32
      %26 = math.exp %25 : f32
      %27 = arith.addf %26, %cst_0 : f32
      %28 = arith.divf %cst_0, %27 : f32
      linalg.yield %28 : f32
    } -> tensor<2x5xf32>
    return %24 : tensor<2x5xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_5_torch.float32: "0x04000000C826F93DB4B10EBE08834DBE30CE5DBDDC6371BE",
      torch_tensor_5_4_torch.float32: "0x040000000827973DECBC3B3E9CA5AE3E2690F2BEC44755BEF8B7E5BEA8214CBE680D9C3E7C8FF2BE7261E5BEDA3A943E702D97BE0A1ABB3E9C881F3E3C85003E9E5ECB3EAE21EDBEB277BB3E580A263E4E8CABBE",
      torch_tensor_4_torch.float32_4: "0x0400000000000000000000000000000000000000",
      torch_tensor_4_torch.float32_3: "0x04000000B58128BF4AEEAB3E0D683C3F68142BBF",
      torch_tensor_4_torch.float32_2: "0x04000000BFF0BB3FE178B93F140F533FABE7483F",
      torch_tensor_4_torch.float32_1: "0x040000006609A7BF7457973CD70A4C3D0F75BFBF",
      torch_tensor_4_3_3_3_torch.float32: "0x040000006260C1BDC33B163E7FD3CE3C83BC1E3D4DA1813DA0433ABD669E9DBDD024623DDEEA50BD46D1A2BD4B4AD03C4FAB3E3D6F598EBCDA4605BEC560EEBC655EDFBDFB70CF3DEA9302BE53211D3EFFFA9C3DE2C028BEB93E123E79E342BE445337BC2E15F6BD938829BE63349C3CE519BFBDCD720E3EF4EA1ABE5992233E3AC8ED3DD09A2C3E19D566BDB696F1BDFAEC02BE6EE0233ED908C4BDE31DC2BC0F01F3BCF69C073DEDB521BE86E71E3EA1D111BE37D4413E4B389ABDADF3AFBD6CB3D8BC854B693D310E12BD2EAF44BE749D0A3EC631433E96DAC63D4BD6403E43D8563D831377BCE6F61CBE3C3D2CBE6CAE07BEF00048BD5A82E53D6C9DA2BD96EDF4BBF3FF31BBDDD100BEC2B5AABBD5473E3E1A821D3E6A17163E527D9BBC5FAE5F3B4978D73DC81983BD91BB9FBD259C283ECF03343CEE0F05BE210D263EF7D5023DEBE2D23D05282BBE1848123D1613F13DF570E3BC9B07E0BDC0AA1D3E6052B73D5E81603DBC6C3A3D22308B3B6206E23DBC522CBDD401E8BD3280963DF94E523D4311963DFA1BAFBC1A37D1BCF89A7ABCCADA4F3DF73817BE0FAE37BE197C933DBACAD7BDB59F84BC54885A3D4820DD3C",
      torch_tensor_4_torch.float32: "0x04000000EE15FE3DEAA8CE3C5528433D591E8DBC"
    }
  }
#-}
