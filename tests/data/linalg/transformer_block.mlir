#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0, d1) -> (0, d1)>
#map5 = affine_map<(d0, d1) -> (d0, 0)>
#map6 = affine_map<(d0, d1) -> ()>
#map7 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map10 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map11 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map12 = affine_map<(d0, d1, d2) -> (d2)>
module {
  func.func @main(%arg0: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f64
    %cst_1 = arith.constant 0xFF800000 : f32
    %true = arith.constant true
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<1x2x8x8xf32>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<f32>
    %cst_4 = arith.constant dense<0xFF800000> : tensor<f32>
    %cst_5 = arith.constant dense<true> : tensor<8x8xi1>
    %cst_6 = arith.constant dense_resource<torch_tensor_16_torch.float32_2> : tensor<16xf32>
    %cst_7 = arith.constant dense_resource<torch_tensor_16_torch.float32_1> : tensor<16xf32>
    %cst_8 = arith.constant 1.000000e-05 : f64
    %cst_9 = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %cst_10 = arith.constant dense_resource<torch_tensor_16_16_torch.float32> : tensor<16x16xf32>
    %cst_11 = arith.constant 0xFFF0000000000000 : f64
    %cst_12 = arith.constant 0.59460355750136051 : f64
    %cst_13 = arith.constant dense_resource<torch_tensor_48_torch.float32> : tensor<48xf32>
    %cst_14 = arith.constant dense_resource<torch_tensor_48_16_torch.float32> : tensor<48x16xf32>
    %cst_15 = arith.constant 1.600000e+01 : f64
    %cst_16 = arith.constant 1.600000e+01 : f32
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x8x16xf32> into tensor<8x16xf32>
    %0 = tensor.empty() : tensor<16x48xf32>
    %transposed = linalg.transpose ins(%cst_14 : tensor<48x16xf32>) outs(%0 : tensor<16x48xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<8x48xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x48xf32>) -> tensor<8x48xf32>
    %3 = linalg.matmul ins(%collapsed, %transposed : tensor<8x16xf32>, tensor<16x48xf32>) outs(%2 : tensor<8x48xf32>) -> tensor<8x48xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %cst_13 : tensor<8x48xf32>, tensor<48xf32>) outs(%1 : tensor<8x48xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.addf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<8x48xf32>
    %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [1, 8, 48] : tensor<8x48xf32> into tensor<1x8x48xf32>
    %extracted_slice = tensor.extract_slice %expanded[0, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<1x8x48xf32> to tensor<1x8x16xf32>
    %extracted_slice_17 = tensor.extract_slice %expanded[0, 0, 16] [1, 8, 16] [1, 1, 1] : tensor<1x8x48xf32> to tensor<1x8x16xf32>
    %extracted_slice_18 = tensor.extract_slice %expanded[0, 0, 32] [1, 8, 16] [1, 1, 1] : tensor<1x8x48xf32> to tensor<1x8x16xf32>
    %expanded_19 = tensor.expand_shape %extracted_slice [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %5 = tensor.empty() : tensor<1x2x8x8xf32>
    %transposed_20 = linalg.transpose ins(%expanded_19 : tensor<1x8x2x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) permutation = [0, 2, 1, 3] 
    %expanded_21 = tensor.expand_shape %extracted_slice_17 [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %expanded_22 = tensor.expand_shape %extracted_slice_18 [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
    %transposed_23 = linalg.transpose ins(%expanded_22 : tensor<1x8x2x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) permutation = [0, 2, 1, 3] 
    %6 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_20 : tensor<1x2x8x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.truncf %cst_12 : f64 to f32
      %69 = arith.mulf %in, %68 : f32
      linalg.yield %69 : f32
    } -> tensor<1x2x8x8xf32>
    %7 = tensor.empty() : tensor<8xi64>
    %8 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%7 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %68 = linalg.index 0 : index
      %69 = arith.index_cast %68 : index to i64
      linalg.yield %69 : i64
    } -> tensor<8xi64>
    %expanded_24 = tensor.expand_shape %8 [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
    %expanded_25 = tensor.expand_shape %8 [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
    %9 = tensor.empty() : tensor<8x8xi64>
    %10 = linalg.generic {indexing_maps = [#map4, #map5, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_24, %expanded_25 : tensor<1x8xi64>, tensor<8x1xi64>) outs(%9 : tensor<8x8xi64>) {
    ^bb0(%in: i64, %in_38: i64, %out: i64):
      %68 = arith.subi %in, %in_38 : i64
      linalg.yield %68 : i64
    } -> tensor<8x8xi64>
    %11 = tensor.empty() : tensor<8x8xi1>
    %12 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<8x8xi64>) outs(%11 : tensor<8x8xi1>) {
    ^bb0(%in: i64, %out: i1):
      %68 = arith.cmpi sle, %in, %c0_i64 : i64
      linalg.yield %68 : i1
    } -> tensor<8x8xi1>
    %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %cst_5 : tensor<8x8xi1>, tensor<8x8xi1>) outs(%11 : tensor<8x8xi1>) {
    ^bb0(%in: i1, %in_38: i1, %out: i1):
      %68 = arith.andi %in, %in_38 : i1
      linalg.yield %68 : i1
    } -> tensor<8x8xi1>
    %14 = tensor.empty() : tensor<8x8xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map6, #map6, #map], iterator_types = ["parallel", "parallel"]} ins(%13, %cst_3, %cst_4 : tensor<8x8xi1>, tensor<f32>, tensor<f32>) outs(%14 : tensor<8x8xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %68 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %68 : f32
    } -> tensor<8x8xf32>
    %transposed_26 = linalg.transpose ins(%expanded_21 : tensor<1x8x2x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) permutation = [0, 2, 3, 1] 
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed_26 : tensor<1x2x8x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.truncf %cst_12 : f64 to f32
      %69 = arith.mulf %in, %68 : f32
      linalg.yield %69 : f32
    } -> tensor<1x2x8x8xf32>
    %collapsed_27 = tensor.collapse_shape %6 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %collapsed_28 = tensor.collapse_shape %16 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %17 = tensor.empty() : tensor<2x8x8xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %19 = linalg.batch_matmul ins(%collapsed_27, %collapsed_28 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%18 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_29 = tensor.expand_shape %19 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %20 = linalg.generic {indexing_maps = [#map2, #map7, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_29, %15 : tensor<1x2x8x8xf32>, tensor<8x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.addf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x8xf32>
    %21 = tensor.empty() : tensor<1x2x8xi64>
    %22 = linalg.fill ins(%c0_i64 : i64) outs(%21 : tensor<1x2x8xi64>) -> tensor<1x2x8xi64>
    %23 = tensor.empty() : tensor<1x2x8xf32>
    %24 = linalg.fill ins(%cst_1 : f32) outs(%23 : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
    %25:2 = linalg.generic {indexing_maps = [#map2, #map8, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%20 : tensor<1x2x8x8xf32>) outs(%24, %22 : tensor<1x2x8xf32>, tensor<1x2x8xi64>) {
    ^bb0(%in: f32, %out: f32, %out_38: i64):
      %68 = linalg.index 3 : index
      %69 = arith.index_cast %68 : index to i64
      %70 = arith.maximumf %in, %out : f32
      %71 = arith.cmpf ogt, %in, %out : f32
      %72 = arith.select %71, %69, %out_38 : i64
      linalg.yield %70, %72 : f32, i64
    } -> (tensor<1x2x8xf32>, tensor<1x2x8xi64>)
    %expanded_30 = tensor.expand_shape %25#0 [[0], [1], [2, 3]] output_shape [1, 2, 8, 1] : tensor<1x2x8xf32> into tensor<1x2x8x1xf32>
    %26 = linalg.generic {indexing_maps = [#map2, #map9, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %expanded_30 : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.subf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x8xf32>
    %27 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%26 : tensor<1x2x8x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = math.exp %in : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x8xf32>
    %28 = tensor.empty() : tensor<1x2x8x1xf32>
    %29 = linalg.fill ins(%cst : f32) outs(%28 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
    %30 = linalg.generic {indexing_maps = [#map2, #map9], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<1x2x8x8xf32>) outs(%29 : tensor<1x2x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.addf %in, %out : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x1xf32>
    %31 = linalg.generic {indexing_maps = [#map2, #map9, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %30 : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.divf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x8xf32>
    %32 = tensor.empty() : tensor<1x2x8x8xi1>
    %33 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20 : tensor<1x2x8x8xf32>) outs(%32 : tensor<1x2x8x8xi1>) {
    ^bb0(%in: f32, %out: i1):
      %68 = arith.extf %in : f32 to f64
      %69 = arith.cmpf oeq, %68, %cst_11 : f64
      linalg.yield %69 : i1
    } -> tensor<1x2x8x8xi1>
    %34 = tensor.empty() : tensor<1x2x8x1xi1>
    %35 = linalg.fill ins(%true : i1) outs(%34 : tensor<1x2x8x1xi1>) -> tensor<1x2x8x1xi1>
    %36 = linalg.generic {indexing_maps = [#map2, #map9], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%33 : tensor<1x2x8x8xi1>) outs(%35 : tensor<1x2x8x1xi1>) {
    ^bb0(%in: i1, %out: i1):
      %68 = arith.andi %in, %out : i1
      linalg.yield %68 : i1
    } -> tensor<1x2x8x1xi1>
    %37 = linalg.generic {indexing_maps = [#map9, #map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %cst_2, %31 : tensor<1x2x8x1xi1>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%5 : tensor<1x2x8x8xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %68 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %68 : f32
    } -> tensor<1x2x8x8xf32>
    %collapsed_31 = tensor.collapse_shape %37 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %collapsed_32 = tensor.collapse_shape %transposed_23 [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
    %38 = linalg.batch_matmul ins(%collapsed_31, %collapsed_32 : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%18 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %expanded_33 = tensor.expand_shape %38 [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
    %39 = tensor.empty() : tensor<1x8x2x8xf32>
    %transposed_34 = linalg.transpose ins(%expanded_33 : tensor<1x2x8x8xf32>) outs(%39 : tensor<1x8x2x8xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_35 = tensor.collapse_shape %transposed_34 [[0, 1], [2, 3]] : tensor<1x8x2x8xf32> into tensor<8x16xf32>
    %40 = tensor.empty() : tensor<16x16xf32>
    %transposed_36 = linalg.transpose ins(%cst_10 : tensor<16x16xf32>) outs(%40 : tensor<16x16xf32>) permutation = [1, 0] 
    %41 = tensor.empty() : tensor<8x16xf32>
    %42 = linalg.fill ins(%cst : f32) outs(%41 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %43 = linalg.matmul ins(%collapsed_35, %transposed_36 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%42 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %44 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%43, %cst_9 : tensor<8x16xf32>, tensor<16xf32>) outs(%41 : tensor<8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.addf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<8x16xf32>
    %expanded_37 = tensor.expand_shape %44 [[0, 1], [2]] output_shape [1, 8, 16] : tensor<8x16xf32> into tensor<1x8x16xf32>
    %45 = tensor.empty() : tensor<1x8x16xf32>
    %46 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded_37 : tensor<1x8x16xf32>, tensor<1x8x16xf32>) outs(%45 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.addf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x16xf32>
    %47 = tensor.empty() : tensor<1x8x16xf64>
    %48 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%46 : tensor<1x8x16xf32>) outs(%47 : tensor<1x8x16xf64>) {
    ^bb0(%in: f32, %out: f64):
      %68 = arith.extf %in : f32 to f64
      linalg.yield %68 : f64
    } -> tensor<1x8x16xf64>
    %49 = tensor.empty() : tensor<1x8x1xf64>
    %50 = linalg.fill ins(%cst_0 : f64) outs(%49 : tensor<1x8x1xf64>) -> tensor<1x8x1xf64>
    %51 = linalg.generic {indexing_maps = [#map10, #map11], iterator_types = ["parallel", "parallel", "reduction"]} ins(%48 : tensor<1x8x16xf64>) outs(%50 : tensor<1x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %68 = arith.addf %in, %out : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x1xf64>
    %52 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%51 : tensor<1x8x1xf64>) outs(%49 : tensor<1x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %68 = arith.divf %in, %cst_15 : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x1xf64>
    %53 = linalg.generic {indexing_maps = [#map10, #map11, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%48, %52 : tensor<1x8x16xf64>, tensor<1x8x1xf64>) outs(%47 : tensor<1x8x16xf64>) {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %68 = arith.subf %in, %in_38 : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x16xf64>
    %54 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%53, %53 : tensor<1x8x16xf64>, tensor<1x8x16xf64>) outs(%47 : tensor<1x8x16xf64>) {
    ^bb0(%in: f64, %in_38: f64, %out: f64):
      %68 = arith.mulf %in, %in_38 : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x16xf64>
    %55 = linalg.generic {indexing_maps = [#map10, #map11], iterator_types = ["parallel", "parallel", "reduction"]} ins(%54 : tensor<1x8x16xf64>) outs(%50 : tensor<1x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %68 = arith.addf %in, %out : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x1xf64>
    %56 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%55 : tensor<1x8x1xf64>) outs(%49 : tensor<1x8x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %68 = arith.divf %in, %cst_15 : f64
      linalg.yield %68 : f64
    } -> tensor<1x8x1xf64>
    %57 = tensor.empty() : tensor<1x8x1xf32>
    %58 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%56 : tensor<1x8x1xf64>) outs(%57 : tensor<1x8x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %68 = arith.truncf %in : f64 to f32
      linalg.yield %68 : f32
    } -> tensor<1x8x1xf32>
    %59 = linalg.fill ins(%cst : f32) outs(%57 : tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
    %60 = linalg.generic {indexing_maps = [#map10, #map11], iterator_types = ["parallel", "parallel", "reduction"]} ins(%46 : tensor<1x8x16xf32>) outs(%59 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.addf %in, %out : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x1xf32>
    %61 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%60 : tensor<1x8x1xf32>) outs(%57 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.divf %in, %cst_16 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x1xf32>
    %62 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58 : tensor<1x8x1xf32>) outs(%57 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = arith.truncf %cst_8 : f64 to f32
      %69 = arith.addf %in, %68 : f32
      linalg.yield %69 : f32
    } -> tensor<1x8x1xf32>
    %63 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%62 : tensor<1x8x1xf32>) outs(%57 : tensor<1x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %68 = math.rsqrt %in : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x1xf32>
    %64 = linalg.generic {indexing_maps = [#map10, #map11, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%46, %61 : tensor<1x8x16xf32>, tensor<1x8x1xf32>) outs(%45 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.subf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x16xf32>
    %65 = linalg.generic {indexing_maps = [#map10, #map11, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%64, %63 : tensor<1x8x16xf32>, tensor<1x8x1xf32>) outs(%45 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.mulf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x16xf32>
    %66 = linalg.generic {indexing_maps = [#map10, #map12, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %cst_7 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%45 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.mulf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x16xf32>
    %67 = linalg.generic {indexing_maps = [#map10, #map12, #map10], iterator_types = ["parallel", "parallel", "parallel"]} ins(%66, %cst_6 : tensor<1x8x16xf32>, tensor<16xf32>) outs(%45 : tensor<1x8x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %68 = arith.addf %in, %in_38 : f32
      linalg.yield %68 : f32
    } -> tensor<1x8x16xf32>
    return %67 : tensor<1x8x16xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32_2: "0x0400000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      torch_tensor_16_torch.float32_1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F",
      torch_tensor_16_torch.float32: "0x040000009014D7BCFA751C3EFC7642BECE4201BEFACC773EC0C34B3D00CC25BDBE9A043E70011A3E901C2BBDE844D5BD706127BD58E9B93D10BA02BDFEFD143EA4C350BE",
      torch_tensor_16_16_torch.float32: "0x040000005A8A4A3E38BF09BE4045B53DE0E07D3E409D3D3CE44D933DAC6ECB3D867B413EE0179DBD5A0E10BE2045A0BC8034483E4017B03C28DF313E00A0F3BA88179D3D606D0E3C4061DE3B569D73BED0CD5FBE2040AA3CF467FD3DFAF72B3EE0B8313CB0D1D73D2C23D63D1AFE5CBEC80161BE147D46BEC0D78C3B7EDF21BEC0D8A3BD703419BD48C3C73D706C6D3D2A7C6D3EDEE8663E225123BE00764EBA0819293DD47C5F3EF8AD9EBD9437C9BD302A22BEEEA23C3EB40D91BDC4C1BFBD8E262D3ED88F6B3E609C2CBCBA7434BEC295503E401BAFBD3CF1EBBD60F933BE203DF6BD827D48BE50C413BE8C3469BED8634EBDCCDCCD3D0C5642BE000CB7B958CEBCBD4CA7F73D22BA5D3E98BE07BD40D800BE84B344BED46716BE84D3933D30F36A3D12DD093ED82718BD988A033E861364BEA8A2893DEE85783EE05C7DBE8AE504BE22E2233EE01920BD887508BE322D1C3EE048893CA06D203C0C839BBD6AE1403EA2000E3EE870373D30461C3D3860043E947D1F3EEC05D2BDC061E0BC90C7E03DB01AF8BD6E5F6F3E1C5C2FBEC842EC3D54E337BED462A43D14CE323EB0E2F63C5044CDBC3CCB223E8AD137BEE4B62CBE1A305ABEA0941DBE009ED43B0C2AE8BDC021643D20380A3CD00E553EE401DEBDEC108CBD1E51293E247681BDD217753E305BCBBD007033BB489D72BD38DFEE3D882EC43DC65308BE66B0283E702282BC2C7981BD003FA5BB8029323EF61E7B3E6822F93DA02E333D0A13273E181AD6BD50C905BEBCDB93BD78B025BEE024DC3D008AC23C3C2CAFBDF0EACFBC006EA2BB92805B3EC885643EC21445BE78A5BB3D24B5C53DB0C5C33D809A0BBD8C0B803D80D6803D1C2A793E865B75BEA44AC2BDC03C2CBE205BF8BDE00C493D56211C3E3E9741BE6481263E5CD6553E505EFCBD40BA323DB66C03BEC0535B3DF85FEDBDBC73C7BDE25E2BBE7A7A55BEAA4A4C3E805001BD8043E3BB8CCEFEBDCA6E323E108712BEA815CFBD5CD647BEF24357BE6E46633E9EAE45BE305F0DBD203494BD108ABB3DB4F1883D4E3F44BE34E8653E88027FBE308FCA3C1019ABBC684D6DBD9C742E3E2425583EC863053D80D6B4BDB6523E3E48D6203E30EB373DB0098CBDE0AF2C3CD82B643E3018DE3C70CB49BD66BE58BE9A2F09BE62E4383E203C10BCF06188BC485AC73DE86D28BE10598ABC940090BDCEF1053EC456503E8EBE203EBCDC3E3EA6C964BEC0C4B5BD1084F23C506F59BE40E48A3DA6CD27BEFC65DB3DB6314F3EB6FE5ABE6483563E60E6EE3DA0F028BE9809753EF8B75DBE20582CBE34B1FEBD406A4FBC40E1373DC84196BD1EA672BE6067ECBC363B423E9C1A453ECC26003E68AC143D20707E3D545A45BE3C54CF3DC6C77EBEC870D3BD588D86BD32FD3B3E40CDEEBB8438E9BDD8E6323DD46B54BE488E87BDACCC8D3DC0A287BC",
      torch_tensor_48_torch.float32: "0x04000000782AEFBDCAA407BED092813C886F9F3DA26A003E5C3BD03D36FB593ECC4680BD40F9A7BD5C9FAB3D78AD8E3DF65415BE9017C63C325E42BE7C3496BD3CF2C8BDC467603EC87166BE182617BE7E877ABE1021813D560A45BE20A7A53D08D231BE1CFD23BEBEC802BEB0AB193DC63B6B3E60CC6F3ED0B99ABC4EC07ABEEC26A9BDFC20C3BDE8CC59BD1CA1C33D02D4003E0402E33D1C43923D9C45CFBD00CE2DBB6852023D28C302BEE034B7BC50A6FFBC40DF71BE568C2D3ED00ECFBC3C4D5DBE",
      torch_tensor_48_16_torch.float32: "0x040000000058AE3B20EC6ABE009823BB006ECEBC20FCB7BCB0B34CBD18D3493EBAEC3C3E80812DBE74D6ED3D4CCD48BE32F059BE58829C3D80C9703BECD9EEBDB8E976BEB436C6BDFC01AB3D38F46CBEF6B178BEE0EA013D686C38BECC4660BE3C44C5BD68DD24BDE8A068BE34F02ABE7048863C986671BE80ED0FBDC64C25BE007831BE5C3BC93D620A45BE6C0142BEF8FD113E18743F3D7A24693EF4DA88BDC04DF7BD0089BDBC00C9A53AA83C433E18FF7EBEB0D191BCFC7BE23D90F90CBE841502BEE06EF73DA04B75BE88A4723D163146BEE47EFE3DEEE35ABED8631D3E845672BE622F57BE0073713B9CB9493EBE3C5BBEF061E4BD20D7603EE0B82BBD1C1DD43D844576BEA403A1BD4A0102BEDCD2573E1C80D43D06CC3ABEB018253D004F3CBB885DD2BD143212BEC0E6A9BD36C9493EA28337BE225C36BE38F69DBDC0828E3B5C5F8B3D80D3F53BC88076BDC4391BBE30BD37BD781BCEBD6CD44E3E5E3179BEBA4A23BE724750BE98243BBD767E473EE064603EB6DC5EBE807731BC6A43163E34B0E13DCAB0513E403BE3BB2A012CBE105A293E8092AFBDA28D043ED8597CBDF0A5D93DC840663E020B6E3E06FA68BEC65629BEECB1D3BD604023BECCA1753E80E0B4BCB0D029BEA8D5E3BDC4670DBEFCE3D03DDA4B5FBEF8B16EBED85A7CBEA86DDC3D2829FD3D0AFF1EBE18EE7D3DACF93C3EE0C9143DD8A858BDA04F973C309ADBBC52E5003EB0D32DBE78D1013EA249103E9A1A1BBE500A513E76707B3E58D8C9BD88688FBD7428FF3D3E8E48BE7879CA3D70E76E3D4A5D213E045D5EBE50AE54BE40F4E53D8C6DB83DB2466EBEC6C20EBE083C6ABE7E6737BEA403E7BD90D9533E00D44BBDAE08133E4A1E733EBC55E93D822C65BE34D3003E644BC33DB26A463EF4867CBEB0711D3EEE8B513E622C6EBE5046D63C528A5A3EDE303ABE40FFA73DC03DE23DAC30863DDC887E3E8A9B513EECA25B3ED046FFBCDEB5563ED4916EBE26250ABEA8035BBDD41798BD42776C3E1C7EF13DEED0243E34222E3EA03B3FBE9033EDBC7887153DD82A853DC0A4033E70BACBBDB8629ABDAE34563EAC6989BD04D431BE04942D3E105A2D3ED88BA0BDD8B74CBDB4E53CBEB4C855BE9089C03DFCB8DABDEACC4B3E8AFB4CBEE08A0DBD40E1B03B0A92033E4C304F3E465D2D3E6061E13D3C01EBBD62D236BE580565BE402E4B3C124A783E488042BD806F2CBC9E083ABE60309D3DBC4C223EFC647CBE5A4134BE069F3D3E6872723DA05E7FBC680C373DE0B01BBD5EEF32BECC366FBE8C5F283E1095F3BC7826BEBDAC2784BDD8A00BBE58A597BD0CC15BBE72933F3E4412D13D361B01BE9CC0AEBDD0B3E53DAC98BDBDDC02873D90F98C3D782621BEBC41803D409C7A3C16965F3E7840B9BD7C9E83BDDC915C3EDA0C51BE00F7933C16A8763E7C90E5BD326C753EC228633EBE2A6E3E306DC3BC0C96673E9C16DFBDA042AFBDB4A7C13D3051583D66200D3E2048733ED24020BEB4DD073E0C4CAB3DB40E073EB8C6F23D1886BFBDC6544ABE04E64C3EF6FA11BEF2AA233E72E073BE882731BD00A72D3B182D313D408BA53C9C55A13DA008E4BC38C87A3D66557D3E34A525BEE0A05FBC3471C3BD3A9F603E6E255B3EC063DFBBD479B1BD7A2C1EBE9A2D373E60088DBC6E1A713EB0FC113EF613603EF8794A3E105C26BE10DD953D2C4ED4BDE672003EA022B8BC904BB13C460D31BE34CB64BE2CCEC03D70F66D3D20E5B13CB2DF2D3E50CCD5BD0CC0B53DB6FE0CBE382C543D18C769BD9C48333E16DE5F3E92575E3E6041383C20F6163E88C77FBE0A2B16BE3803373D00BFB63A8AFA48BEFC9DE2BDB821EFBD96A27DBEC051C33C80832E3E54CDCF3DA044F3BD6E136BBEF0884EBE80F4973B161B303E9058CFBD164D0BBE9A9008BEF04AB1BC921C73BEE2E761BE06017C3E582EF4BD40B138BDACFC88BDC8E560BE308634BD54BB9C3DC8E6CFBD20922EBC00BF9CBA68D97EBE160A3A3E32CA4E3ECE8A2E3ED423A8BDB4C6053E26DA6FBEF0527DBDF84350BD08D0B4BD400AD73DFC4BE9BD005FEDBC7CD793BDBE6770BEA01A29BD34F458BE5046153E90D2083E9AD16F3E58EEABBD604A503C9097483D408B7F3E2EA76A3E787D04BEC2D459BED4BA66BE008FF6BDCA3D573E7CF4AB3D9E00773EA6C03D3E80876D3B9AA91EBEF2FB793E185B4D3EB4AADD3DECD70BBEE8AB493E9066BA3CA046293E18B1D53D2AF0073E44A260BE7AF20DBEA08A193E005655BDFEB65EBE64CE683E0028B1BBD6824E3E0A1848BE4847B03DB8DAC0BD1C75D7BD509355BDC483BDBD1E470C3E208F42BD8E1A423ED8A8693D40391EBD8EDD13BE8C696ABEA05C95BD68106DBE98B73DBD80E4853B20FB83BCC880FBBD28AE313E8E2C103E484A7CBD504BCABDD6F1203EEAB95E3E4A676ABEA03E5DBD100FBEBC0C60B9BDAE8C5A3EA84117BD9A0C593E00FEA13A3026DEBC425315BE483EAABD48FBA43D107AE23D80BC11BC82ED733E9E2F31BEC44EC43DAE92663E380E32BDA03D4B3E400A873B4CB43FBE20720CBE0893BE3D4491DDBD8848763D28F87B3E98EAAD3D00ACBFBC30F47F3D287E13BED41A57BE626F40BE6CCF56BE1025523D4075473D6895D9BD14687ABE2AAD0A3EBC4111BE58F42ABDC0A656BEAC6C10BEFC95D53DA8856EBE3AFB11BE52EE3F3E0E4A03BE6412D5BD94C18FBDECDBDA3DA0ED27BEF057CD3C281AD13DC0AB94BC8828393DFA4943BE9479E73D7859BF3D487100BDC6AD53BE98C9CC3DF60C273E101B33BD2C53F13D08C7BD3D8CC8CCBD402C8EBC0ED57E3E00B39A3A18CE4BBE705B95BC5CB7FE3D0021A7BD201006BE22E3523E506D073E68F82DBDA042513C209AD8BCD0BC6D3DE091113C20EA1ABE88B83D3D8042D63B1069843CF41DC3BD9C2F833D6E034FBE740C993D86B90A3E9063E1BC60DC46BE003C6EBA0010BA39863C5DBE4C1135BEC8C86C3E0C713F3E40E00D3EA258313EDC19C53DEC12103EEA8D293ED8366FBD482C02BD368A363E00D0BCB8649326BE8A8046BEAC2C0F3EBE0C543E10D0463EC0692A3D3AB6303EC80A6BBE427038BEBC5476BE74414E3E804014BB08C2EBBD443FAD3D90A8BFBD222F24BE407AC53D407E3B3D8A5337BE129E28BEB00FF03D0EA8423EC0B8A63CC09500BE503BF73D5897323D6A1F60BE46E625BE4021603D00681E3EB07CA4BDB491F73D488B1EBE9AF9743E4A69363E78CD3F3DF4C8E33D9C41B23D9C1017BE00DE0EBBB887883DA02167BD727D753E2472C5BD36A064BE40C0F3BDF8966DBED2F4523E70D7E5BD601D34BEE062DDBCB67E2CBE44BA05BEEA82023E243440BE8C74F13D60AF3A3E000013BAC458E33D8E660FBE12A2473E64B0783E0857733D6049693E1E407EBE40DFE0BC30764B3D08835EBECC27F93D7021C3BD742EB9BD341D4BBE9050D13DC4453ABE704C59BD4C72E33D4CDB403E608D673D74FFBEBDC8B3DEBD3AB00F3E98FD3D3D7880573EE0CFC03DA23A4E3E7A494EBE3ACE4D3E943DEBBDF40D89BD0021C43A580840BD988D4A3DEC1E643ECAF418BE90339E3D90BF4DBEA8C8203D4EE5523ED49D2C3E943A5B3E3A940A3EF070A9BC74AE853D0CF1D5BD744C593E302E003E1C5F3BBE205A5D3E002073BB801336BC78208CBD141687BDA0014D3CFCF3F9BD0A226EBEFCDD03BEF0C54BBD2651413EE8533C3E0C6219BE80461DBC88C593BDB2F308BE581134BDCCA6B1BD62170F3E98EBFDBD988B1D3DE87610BE3CCC9FBD8087493EFC5BFBBD804B76BC147E743EA83DAF3DC04D02BE04B419BE908BB3BD1855A0BD08EBDE3D20A963BD82E8573E66760CBEB41AA0BDBC68BA3DA2744C3E48E3743E38E6233DA0A62C3CE864E5BD12A5103EE26314BEB89386BDC6F655BE961A76BE78170F3EA0228B3CA4134C3E04B54B3E3A56063E44E6CC3D74DF84BDF0F6073E4C34F63D403EB13D407AECBB60F4183D0063913A26C939BEC0B56D3D7C323CBE506CF83DFA8618BEBC3EA7BD50D1F2BD4C104A3EAC4734BE94B7023E4A64003ED402353EA048803DDE8E0B3E365E4A3E20B4493DCC16AE3DD42C48BE6C5589BD30B2B93CE021F83CE4E3B4BD50C87DBEA02685BDBC03C43D1E6F5C3EEC2C67BE4C72F43D66E972BE32D074BE905120BED84007BD9CFF8E3DDCB042BE8E3B453E7880673E00037C3C4061503E50CAE7BD648BCABD602404BD80C6DF3C049532BE22FD4CBED041CA3D909F933DD46F7A3EC0BFD0BDD0CEB43D989CCEBDA0BFFC3D00E662BC5CC63D3EC0390E3EBC14553EA88E033EE0E2193C1E9D5C3EA85E16BEA674713EEE287A3E6E8C743E"
    }
  }
#-}
