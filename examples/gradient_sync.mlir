// Gradients come out of the backward pass as partial sums over both mesh
// axes ("node" x "gpu"); the optimizer wants them sharded by columns over
// "node" (ZeRO-style). How to get there depends on the network:
//   utils/demo.sh plans it with uniform NVLink costs, then with
//   examples/cluster.json, where "node" crosses a 25 GB/s network.
dist.mesh @mesh = <["node"=4, "gpu"=2]>

func.func @gradient_sync(%g: tensor<8192x8192xbf16, #dist.sharding<@mesh, [{}, {}], partial = sum {"node", "gpu"}>>)
    -> tensor<8192x8192xbf16, #dist.sharding<@mesh, [{}, {"node"}]>> {
  %s = dist.reshard %g
      : tensor<8192x8192xbf16, #dist.sharding<@mesh, [{}, {}], partial = sum {"node", "gpu"}>>
     -> tensor<8192x8192xbf16, #dist.sharding<@mesh, [{}, {"node"}]>>
  return %s : tensor<8192x8192xbf16, #dist.sharding<@mesh, [{}, {"node"}]>>
}
