#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
module @jit_f {
  func.func public @main(%arg0: tensor<4x16xf32>) -> tensor<4x32xf32> {
    %cst = arith.constant 9.99999974E-6 : f32
    %cst_0 = arith.constant 3.200000e+01 : f32
    %cst_1 = arith.constant 5.000000e-01 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 0.797884583 : f32
    %cst_4 = arith.constant 4.471500e-02 : f32
    %cst_5 = arith.constant 0.000000e+00 : f32
    %cst_6 = arith.constant dense<"0x13FFCD3CCB70D8BC9728033E4CDEAB3C0269DBBDFE1B943D9487853E52F6413EFF1F10BE449481BE104BFFBDBF6A073C4A15EEBEF03B33BD9F297FBEE7F715BEB2EDDEBD7A8E81BD979AA83DBA81553E5897D2BC05ED8B3E5C3B08BE81FA8F3DDB07393E9E079A3CC74418BEF5C43CBE087CBBBD4462343D12C54EBE4C5B2BBDE86F02BDC587DD3D48D92F3D878F913D73E705BEE75BD4BCE58E203E67ED983EA6ED80BE9B069B3E51D1893E3803203E5DA4583D329580BD234D953EFFBAC83EC77CB83EA8AA863E0E62923DB27677BE5D8669BA3272063E9FED83BE8DD7A13D7A12B03DAF8C0E3EE28172BE468407BE8EC3B2BD50936FBE7C1CB23E0320CBBDF7BE863D98D253BDCB25A23E7934873EEBB5013EB0A3E1BE117D2A3CD9040C3E809C4D3E4018FDBDEF92BA3E4F3687BE1F7B07BE8D7F3F3EFFBD203C850BCD3E576F1A3D9BAD01BE67A69ABD7B775FBE9FD582BEB81B013EA70BEE3D1590843E138B1ABEF0F6AC3E926D6BBD2B38A13EE344B1BD82A016BECB9F4C3DDA3D533E28E6033D27D5EFBD455789BE03848FBE1FE6CD3D77B14A3E139706BDAA075CBE8ECC323EC31C83BE4E0912BE725EFE3D1A6AE6BECA419E3D773DEEBD3B0BB33C0B0F78BC7692253D9B2A0E3E6B501BBE3182913E3AB4143EE4CB2C3E6B906E3E4F4C213E08DE2C3E85B4773C061A92BE0542DDBCBB981DBE53B091BE7BB9533DBBE0E8BD6AE752BE4B9B55BE25E35B3D7BE9923D6E6B873EE26136BB685E553E88978F3ECF8D6B3E0735F2BE6AA27B3EBD1B8B3DA693AD3D040E983DFFC69C3D03D5823DCA0293BD3BBAC2BE2672B2BCB39A24BEAB375D3EBA8E6CBD1BC4883CD3FF2DBEA526D1BD892A17BB381A98BE3D52763DEEC9ADBCDFD572BE3D94F5BE6A25D23DE5C773BD6A17D9BD377541BDD401BA3E153023BCC1EA8D3CB94698BE02B0A83ECBE63B3E1D825A3EC9361C3C1CBB3B3E98F0973D8A29FB3D5B5AF9BC17ED96BE9AB5523ECF23C6BE5E8E44BD7A8B27BDE89355BE9F22FB3D2F1C24BDF7F0B2BD5BEDD43DEF34C3BD473B8E3EBCF48F3D6B49C2BDBE17C7BEF7E985BE3B955E3EC4D125BCA2EF67BDDB44A83EE25783BEABE2EFBD6992C1BDEB29F03D5BE407BE8741FBBD075EA4BEEA5E153EEB18253EB91FC3BDDFCE053DF25D84BE3241C1BD281A8D3E9861DE3CCB94EC3E933721BE3BAFED3D8B2820BD4DC2E73D9E0ABDBAE3DDE5BD1BB031BE28FB1C3FBD717DBC8D81CEBE5AD504BECFDC0A3EAFCDCCBD484F8B3E8A4A4D3E7597F9BC6F6BC1BD83C84DBE685A0FBE90D996BE0DA9763E44E3A23EE8A080BE380272BE7B18B5BEB96545BE610B1FBF50F069BEDCCD843E64968DBDD3042F3E1F48C8BDD74AB43E0B33233DD8779CBD22AF023F57E784BD471B7ABE9967253D6282FEBB1F625A3E29C03CBE58CE243E94A42E3E0BBE08BEC0BA053D54232ABEF335F03E323510BE4D94B9BD9B485ABE73C58DBD59099ABA433E1D3E2A0EFABD9F2F18BD6B0C91BEB57329BEEC180D3F223F553E200920BE11F388BEA3CC47BE3A278EBB9097E33BEF7118BEC7BE83BECDA6913EA702B93D4E6C99BD03C434BD4BE5D8BD565316BF1780BD3C5B3F5BBE8A594DBE312003BEB3F9153E87B96FBED4DE92BEAD0A033EA87E1A3EBF6344BEAB5BE63DC2E76EBD8DD1763D511F81BEA8932A3E6D6D763EFC78023E30B2E43DF72341BF0582553D28C2A6BB5BEBF0BC732401BE826B353CA4CDA83D631858BD0FC7BDBD85DA7B3E126162BECDF9523E43D8103DC8B824BE9D8D6DBD296A3CBED3400A3E25808E3D5010E4BDFBBB61BE732A773D9412443E6D82BABC715BAB3D4E059ABD28695D3C759E6EBD1BE1703DC8999ABE23EE033E575C3CBDC8E2923D1B648BBD4F38833D2FA95BBEF089733E6771AEBE0BD654BEC20E413D88CB953E50D7633D2C164BBDE3ED91BEA0B11CBD174482BB3F1DAD3E8FD2FE3D41949CBECD8ACF3ECACBA1BD051D34BE9705973E280A23BCF57C96BDBF3A333D82082D3E6D6F4B3E1BD28CBEFFA4CC3ED1EA413E1D529BBD5BA927BE297446BEAB24CA3CB7B604BE6DA51CBE1825263EA853953DCB9DA1BDB95F163E03058C3E222760BEBD1BF7BD880C413E313D133E33B6393D5A106E3EA3DD5EBEB67697BEF17531BEB8C6C83CE00923BE8790C7BD17AE47BEB720FEBDCAC74DBEA083963D2FCB223E69CAC4BDCACA29BDAFFDEDBDBA99D93DCFE8913CDE3DA33E485A60BE247B943DDFDBB53DE4A293BDFD03EF3D034E93BE27F7D83EE46C89BE64603C3E1F9B65BE6BB36B3E7B9A9DBDB1C7013DFCCB2E3C2B6E613EB2B483BD79EB17BFF8A81BBE447F163D706AB4BDC9A81D3E60F04F3EFD1BF2BC298A98BE0FBD8D3E32CF5D3EEF1875BD85E3D73E3FE68EBDD3E168BE0F62FFBC88BD5C3E8FFD3FBE32CEC73ECB9B37BE3777433E0503DF3D3768FCBC0D4B5D3E539499BEEF038B3E0AAE50BC752EDEBD4C6E193E3B11593E73A71D3ECBBFCC3E2B555D3E5B6E833ED720DDBD4F87AE3C0099E63D128D68BB7F19773D5388AE3DB3E62C3EDB79A6BC1B478FBD99A329BE75A036BE371E703EE27A8ABC8D2A213E9ED984BEEA77C6BE98DA56BE47D46A3E05BE5A3EC600883DD24824BE9B4ED6BCE7EC73BD144D8DBD8F4F00BF0DB42FBEB9BC1BBD3F489B3E43AE033D73738F3E2A43A1BDA3004FBD80A647BFB5C7BD3D2317E03DE39BB43E9D60C7BD1E439A3CFC7D10BEBFE570BE650B12BEB84F8DBDFFCB8A3E42E7E73951E721BEE073E83C063C323D097E0ABE5F226A3EEF5DC1BE8EEF2EBD9E34083E350E89BE33F8933D6B64843EE2D2B93D8712ADBE642215BE30607C3E7065743D1C3901BB3CB7B43DBBAB133EFB1711BE50E56DBD5526EA3C"> : tensor<16x32xf32>
    %cst_7 = arith.constant dense<[-0.0543957725, -0.0133451549, 0.129787177, -0.0967819914, 0.192666277, 0.187934443, -0.171343952, -0.0141022671, 0.0342691578, -0.0760871097, -0.0741080567, -0.0237415712, 0.0739178061, -0.0511333831, 0.182669386, 2.899740e-02, -0.0102575291, 0.144925967, 0.0626281201, 0.0369286798, -0.0331140384, 0.181398556, 0.0811821594, -0.0203411337, -0.15771991, 0.0372951552, -0.114374004, -0.171594605, -0.0279151499, 0.0281471107, 0.128248125, 0.0282451846]> : tensor<32xf32>
    %cst_8 = arith.constant dense<[0.806019545, -1.22588265, -0.0225321781, 0.124211319, 0.862246155, 0.116060674, 0.804078936, -0.504199266, 0.357954919, 0.414866388, -1.24977577, 0.175538629, -0.320362538, -1.9040879, 0.958406686, -0.361858666, -0.852390051, -0.377316743, 0.138200298, 1.50790954, -0.165933207, 0.47240749, 1.37357938, 0.53355056, 1.06856418, -0.476509869, 0.77104932, -5.797600e-02, 1.07441127, -1.00355959, -0.779557764, 1.26873159]> : tensor<32xf32>
    %0 = tensor.empty() : tensor<4x32xf32>
    %1 = linalg.fill ins(%cst_5 : f32) outs(%0 : tensor<4x32xf32>) -> tensor<4x32xf32>
    %2 = linalg.matmul ins(%arg0, %cst_6 : tensor<4x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<4x32xf32>) -> tensor<4x32xf32>
    %3 = tensor.empty() : tensor<4x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_7 : tensor<32xf32>) outs(%3 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x32xf32>
    %5 = tensor.empty() : tensor<4x32xf32>
    %6 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%2, %4 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%5 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.addf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %7 = tensor.empty() : tensor<4x32xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<4x32xf32>) outs(%7 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.mulf %in, %in : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %9 = tensor.empty() : tensor<4x32xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %6 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%9 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.mulf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %11 = tensor.empty() : tensor<4x32xf32>
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<4x32xf32>) outs(%11 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.mulf %in, %cst_4 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %13 = tensor.empty() : tensor<4x32xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6, %12 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%13 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.addf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %15 = tensor.empty() : tensor<4x32xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%14 : tensor<4x32xf32>) outs(%15 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.mulf %in, %cst_3 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %17 = tensor.empty() : tensor<4x32xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<4x32xf32>) outs(%17 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = math.tanh %in : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %19 = tensor.empty() : tensor<4x32xf32>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<4x32xf32>) outs(%19 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.addf %in, %cst_2 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %21 = tensor.empty() : tensor<4x32xf32>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<4x32xf32>) outs(%21 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.mulf %in, %cst_1 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %23 = tensor.empty() : tensor<4x32xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6, %22 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%23 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.mulf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %25 = tensor.empty() : tensor<4xf32>
    %26 = linalg.fill ins(%cst_5 : f32) outs(%25 : tensor<4xf32>) -> tensor<4xf32>
    %27 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%24 : tensor<4x32xf32>) outs(%26 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.addf %out, %in : f32
      linalg.yield %57 : f32
    } -> tensor<4xf32>
    %expanded = tensor.expand_shape %27 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %28 = tensor.empty() : tensor<4x1xf32>
    %29 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<4x1xf32>) outs(%28 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.divf %in, %cst_0 : f32
      linalg.yield %57 : f32
    } -> tensor<4x1xf32>
    %30 = tensor.empty() : tensor<4x32xf32>
    %31 = linalg.generic {indexing_maps = [#map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%29 : tensor<4x1xf32>) outs(%30 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x32xf32>
    %32 = tensor.empty() : tensor<4x32xf32>
    %33 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%24, %31 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%32 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.subf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %34 = tensor.empty() : tensor<4x32xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%33 : tensor<4x32xf32>) outs(%34 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.mulf %in, %in : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %36 = tensor.empty() : tensor<4xf32>
    %37 = linalg.fill ins(%cst_5 : f32) outs(%36 : tensor<4xf32>) -> tensor<4xf32>
    %38 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "reduction"]} ins(%35 : tensor<4x32xf32>) outs(%37 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.addf %out, %in : f32
      linalg.yield %57 : f32
    } -> tensor<4xf32>
    %expanded_9 = tensor.expand_shape %38 [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %39 = tensor.empty() : tensor<4x1xf32>
    %40 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_9 : tensor<4x1xf32>) outs(%39 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.divf %in, %cst_0 : f32
      linalg.yield %57 : f32
    } -> tensor<4x1xf32>
    %41 = tensor.empty() : tensor<4x32xf32>
    %42 = linalg.generic {indexing_maps = [#map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%29 : tensor<4x1xf32>) outs(%41 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x32xf32>
    %43 = tensor.empty() : tensor<4x32xf32>
    %44 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%24, %42 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%43 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.subf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %45 = tensor.empty() : tensor<4x1xf32>
    %46 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%40 : tensor<4x1xf32>) outs(%45 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = arith.addf %in, %cst : f32
      linalg.yield %57 : f32
    } -> tensor<4x1xf32>
    %47 = tensor.empty() : tensor<4x1xf32>
    %48 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<4x1xf32>) outs(%47 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %57 = math.rsqrt %in : f32
      linalg.yield %57 : f32
    } -> tensor<4x1xf32>
    %49 = tensor.empty() : tensor<4x32xf32>
    %50 = linalg.generic {indexing_maps = [#map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<4x1xf32>) outs(%49 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x32xf32>
    %51 = tensor.empty() : tensor<4x32xf32>
    %52 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%44, %50 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%51 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.mulf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    %53 = tensor.empty() : tensor<4x32xf32>
    %54 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_8 : tensor<32xf32>) outs(%53 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x32xf32>
    %55 = tensor.empty() : tensor<4x32xf32>
    %56 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%52, %54 : tensor<4x32xf32>, tensor<4x32xf32>) outs(%55 : tensor<4x32xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %57 = arith.mulf %in, %in_10 : f32
      linalg.yield %57 : f32
    } -> tensor<4x32xf32>
    return %56 : tensor<4x32xf32>
  }
}

