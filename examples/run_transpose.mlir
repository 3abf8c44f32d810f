// A small program for dist-run: a 2-D layout transpose on a 2x2 mesh with an
// uneven dimension (10 rows), compiled and run on 4 MPI ranks by
// utils/demo.sh. The input is the global iota tensor (element = its row-major
// index), so each rank's result is easy to read.
dist.mesh @mesh = <["x"=2, "y"=2]>

func.func @transpose(%a: tensor<10x4xi32, #dist.sharding<@mesh, [{"x"}, {"y"}]>>)
    -> tensor<10x4xi32, #dist.sharding<@mesh, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a
      : tensor<10x4xi32, #dist.sharding<@mesh, [{"x"}, {"y"}]>>
     -> tensor<10x4xi32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
  return %b : tensor<10x4xi32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
}
