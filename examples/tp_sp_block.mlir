// The layouts an activation goes through in one tensor- plus sequence-parallel
// transformer block (Megatron-LM style) on a dp=2 x tp=4 mesh, as a chain of
// reshards. Shapes are [sequence, hidden] with the batch folded away.
//
//   sequence-sharded (SP region: layernorm, dropout)
//     -> replicated over tp            (all-gather before the column-parallel GEMM)
//     -> partial sums over tp          (output of the row-parallel GEMM)
//     -> sequence-sharded again        (reduce-scatter back into the SP region)
dist.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @tp_sp_block(
    %x: tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>,
    %row_parallel_out: tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>>)
    -> (tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}]>>,
        tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>) {
  // Enter the tensor-parallel region: every tp rank needs the whole sequence.
  %gathered = dist.reshard %x
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
     -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}]>>
  // Leave it: the row-parallel GEMM left partial sums; scatter them by sequence.
  %scattered = dist.reshard %row_parallel_out
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>>
     -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
  return %gathered, %scattered
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}]>>,
        tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
}
