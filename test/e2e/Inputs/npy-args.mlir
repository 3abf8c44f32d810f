// Four arguments of different element types and layouts for --input npy:DIR
// (run-npy.test): an uneven f32, a partial bf16, an i8 and an i1, each
// resharded to another layout on a 2x2 mesh.
dist.mesh @sq = <["x"=2, "y"=2]>

func.func @npy_args(%a: tensor<5x3xf32, #dist.sharding<@sq, [{"x"}, {}]>>,
                    %b: tensor<2x4xbf16, #dist.sharding<@sq, [{}, {}], partial = sum {"y"}>>,
                    %c: tensor<6xi8, #dist.sharding<@sq, [{"x", "y"}]>>,
                    %d: tensor<4xi1, #dist.sharding<@sq, [{"y"}]>>)
    -> (tensor<5x3xf32, #dist.sharding<@sq, [{}, {"y"}]>>,
        tensor<2x4xbf16, #dist.sharding<@sq, [{}, {}]>>,
        tensor<6xi8, #dist.sharding<@sq, [{}]>>,
        tensor<4xi1, #dist.sharding<@sq, [{}]>>) {
  %ra = dist.reshard %a : tensor<5x3xf32, #dist.sharding<@sq, [{"x"}, {}]>>
      -> tensor<5x3xf32, #dist.sharding<@sq, [{}, {"y"}]>>
  %rb = dist.reshard %b : tensor<2x4xbf16, #dist.sharding<@sq, [{}, {}], partial = sum {"y"}>>
      -> tensor<2x4xbf16, #dist.sharding<@sq, [{}, {}]>>
  %rc = dist.reshard %c : tensor<6xi8, #dist.sharding<@sq, [{"x", "y"}]>>
      -> tensor<6xi8, #dist.sharding<@sq, [{}]>>
  %rd = dist.reshard %d : tensor<4xi1, #dist.sharding<@sq, [{"y"}]>>
      -> tensor<4xi1, #dist.sharding<@sq, [{}]>>
  return %ra, %rb, %rc, %rd
      : tensor<5x3xf32, #dist.sharding<@sq, [{}, {"y"}]>>,
        tensor<2x4xbf16, #dist.sharding<@sq, [{}, {}]>>,
        tensor<6xi8, #dist.sharding<@sq, [{}]>>,
        tensor<4xi1, #dist.sharding<@sq, [{}]>>
}
