dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
dist.mesh @c = <["x"=2], devices = [4, 5]>
func.func @three(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>,
                 %b: tensor<4xf32, #dist.sharding<@b, [{"x"}]>>,
                 %c: tensor<4xf32, #dist.sharding<@c, [{"x"}]>>)
    -> (tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{"x"}]>>,
        tensor<4xf32, #dist.sharding<@c, [{"x"}]>>) {
  return %a, %b, %c : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{"x"}]>>, tensor<4xf32, #dist.sharding<@c, [{"x"}]>>
}
