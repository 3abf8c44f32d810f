// A 1-device mesh: every move is local, but the program still goes through
// the whole target's code path (buffers, copies, streams, the runtime).
dist.mesh @m = <["x"=1]>

func.func @one(%a: tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
               %p: tensor<7xbf16, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
    -> (tensor<10x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
        tensor<7xbf16, #dist.sharding<@m, [{"x"}]>>) {
  %b = dist.reshard %a : tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
                      -> tensor<10x6xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %q = dist.reshard %p : tensor<7xbf16, #dist.sharding<@m, [{}], partial = sum {"x"}>>
                      -> tensor<7xbf16, #dist.sharding<@m, [{"x"}]>>
  return %b, %q : tensor<10x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
                  tensor<7xbf16, #dist.sharding<@m, [{"x"}]>>
}
