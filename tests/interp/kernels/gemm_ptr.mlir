// gemm_ptr.mlir: a pointer-tile GEMM: C (32x32, f32) = A (32x32 in memory, f16) B (32x32, f16) over the
// first K columns of A and rows of B; pointer tiles built with iota, broadcast and offset, loads masked
// by k < K with padding zero, one mmaf per 16x16 block (grid 2x2).
module attributes {gpu.container_module} {
  cuda_tile.module @kernels attributes {producer = "exactref tests"} {
    entry @gemm_ptr(%A: tile<ptr<f16>>, %B: tile<ptr<f16>>, %C: tile<ptr<f32>>, %K: tile<i32>) {
      %bx, %by, %bz = get_tile_block_id : tile<i32>
      %c16 = constant <i32: 16> : tile<i32>
      %r0 = muli %bx, %c16 : tile<i32>
      %q0 = muli %by, %c16 : tile<i32>
      %i16 = iota : tile<16xi32>
      %i32 = iota : tile<32xi32>
      %w32 = constant <i32: 32> : tile<16x1xi32>
      // rows of A: (r0 + i) * 32, columns k
      %ri = reshape %i16 : tile<16xi32> -> tile<16x1xi32>
      %r0s = reshape %r0 : tile<i32> -> tile<1x1xi32>
      %r0b = broadcast %r0s : tile<1x1xi32> -> tile<16x1xi32>
      %rows = addi %ri, %r0b : tile<16x1xi32>
      %rowoff = muli %rows, %w32 : tile<16x1xi32>
      %rowoffb = broadcast %rowoff : tile<16x1xi32> -> tile<16x32xi32>
      %ks = reshape %i32 : tile<32xi32> -> tile<1x32xi32>
      %ksb = broadcast %ks : tile<1x32xi32> -> tile<16x32xi32>
      %offa = addi %rowoffb, %ksb : tile<16x32xi32>
      %Ks = reshape %K : tile<i32> -> tile<1x1xi32>
      %Kb = broadcast %Ks : tile<1x1xi32> -> tile<16x32xi32>
      %ma = cmpi less_than %ksb, %Kb, signed : tile<16x32xi32> -> tile<16x32xi1>
      %pa0 = reshape %A : tile<ptr<f16>> -> tile<1x1xptr<f16>>
      %pa1 = broadcast %pa0 : tile<1x1xptr<f16>> -> tile<16x32xptr<f16>>
      %pa = offset %pa1, %offa : tile<16x32xptr<f16>>, tile<16x32xi32> -> tile<16x32xptr<f16>>
      %za = constant <f16: 0.0> : tile<16x32xf16>
      %a, %t0 = load_ptr_tko weak %pa, %ma, %za : tile<16x32xptr<f16>>, tile<16x32xi1>, tile<16x32xf16> -> tile<16x32xf16>, token
      // B: rows k (k * 32), columns q0 + j
      %kc = reshape %i32 : tile<32xi32> -> tile<32x1xi32>
      %w32b = constant <i32: 32> : tile<32x1xi32>
      %koff = muli %kc, %w32b : tile<32x1xi32>
      %koffb = broadcast %koff : tile<32x1xi32> -> tile<32x16xi32>
      %jc = reshape %i16 : tile<16xi32> -> tile<1x16xi32>
      %q0s = reshape %q0 : tile<i32> -> tile<1x1xi32>
      %q0b = broadcast %q0s : tile<1x1xi32> -> tile<1x16xi32>
      %cols = addi %jc, %q0b : tile<1x16xi32>
      %colsb = broadcast %cols : tile<1x16xi32> -> tile<32x16xi32>
      %offb = addi %koffb, %colsb : tile<32x16xi32>
      %kcb = broadcast %kc : tile<32x1xi32> -> tile<32x16xi32>
      %Kb2 = broadcast %Ks : tile<1x1xi32> -> tile<32x16xi32>
      %mb = cmpi less_than %kcb, %Kb2, signed : tile<32x16xi32> -> tile<32x16xi1>
      %pb0 = reshape %B : tile<ptr<f16>> -> tile<1x1xptr<f16>>
      %pb1 = broadcast %pb0 : tile<1x1xptr<f16>> -> tile<32x16xptr<f16>>
      %pb = offset %pb1, %offb : tile<32x16xptr<f16>>, tile<32x16xi32> -> tile<32x16xptr<f16>>
      %zb = constant <f16: 0.0> : tile<32x16xf16>
      %b, %t1 = load_ptr_tko weak %pb, %mb, %zb token = %t0 : tile<32x16xptr<f16>>, tile<32x16xi1>, tile<32x16xf16> -> tile<32x16xf16>, token
      %acc = constant <f32: 0.0> : tile<16x16xf32>
      %d = mmaf %a, %b, %acc : tile<16x32xf16>, tile<32x16xf16>, tile<16x16xf32>
      // C: (r0 + i) * 32 + q0 + j
      %w32c = constant <i32: 32> : tile<16x1xi32>
      %crow = muli %rows, %w32c : tile<16x1xi32>
      %crowb = broadcast %crow : tile<16x1xi32> -> tile<16x16xi32>
      %colsc = broadcast %cols : tile<1x16xi32> -> tile<16x16xi32>
      %offc = addi %crowb, %colsc : tile<16x16xi32>
      %pc0 = reshape %C : tile<ptr<f32>> -> tile<1x1xptr<f32>>
      %pc1 = broadcast %pc0 : tile<1x1xptr<f32>> -> tile<16x16xptr<f32>>
      %pc = offset %pc1, %offc : tile<16x16xptr<f32>>, tile<16x16xi32> -> tile<16x16xptr<f32>>
      %t2 = store_ptr_tko weak %pc, %d token = %t1 : tile<16x16xptr<f32>>, tile<16x16xf32> -> token
    }
  }
}
