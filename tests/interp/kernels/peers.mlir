// peers.mlir: the regressions of the public peers (Triton's interpreter, bytecode2tileir) as kernels:
// bf16 products of values (not of bit patterns), round-to-nearest-even ties, the fp8 exponent carry,
// fma rounded once, and rounding attributes honoured. Every buffer holds 16 elements.
cuda_tile.module @peers {
  entry @mul_bf16(%a: tile<ptr<bf16>>, %b: tile<ptr<bf16>>, %c: tile<ptr<bf16>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xbf16, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>
    %tv_b = make_tensor_view %b, shape = [16], strides = [1] : tensor_view<16xbf16, strides=[1]>
    %pv_b = make_partition_view %tv_b : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>
    %tv_c = make_tensor_view %c, shape = [16], strides = [1] : tensor_view<16xbf16, strides=[1]>
    %pv_c = make_partition_view %tv_c : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>, tile<i32> -> tile<16xbf16>, token
    %y, %tk_y = load_view_tko weak %pv_b[%c0] : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>, tile<i32> -> tile<16xbf16>, token
    %z = mulf %x, %y : tile<16xbf16>
    %ts_c = store_view_tko weak %z, %pv_c[%c0] : tile<16xbf16>, partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>, tile<i32> -> token
  }
  entry @cvt_bf16(%a: tile<ptr<f32>>, %c: tile<ptr<bf16>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_c = make_tensor_view %c, shape = [16], strides = [1] : tensor_view<16xbf16, strides=[1]>
    %pv_c = make_partition_view %tv_c : partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z = ftof %x : tile<16xf32> -> tile<16xbf16>
    %ts_c = store_view_tko weak %z, %pv_c[%c0] : tile<16xbf16>, partition_view<tile=(16), tensor_view<16xbf16, strides=[1]>>, tile<i32> -> token
  }
  entry @cvt_e4m3(%a: tile<ptr<f32>>, %c: tile<ptr<f8E4M3FN>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_c = make_tensor_view %c, shape = [16], strides = [1] : tensor_view<16xf8E4M3FN, strides=[1]>
    %pv_c = make_partition_view %tv_c : partition_view<tile=(16), tensor_view<16xf8E4M3FN, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z = ftof %x rounding<nearest_even> : tile<16xf32> -> tile<16xf8E4M3FN>
    %ts_c = store_view_tko weak %z, %pv_c[%c0] : tile<16xf8E4M3FN>, partition_view<tile=(16), tensor_view<16xf8E4M3FN, strides=[1]>>, tile<i32> -> token
  }
  entry @fma_f32(%a: tile<ptr<f32>>, %b: tile<ptr<f32>>, %c: tile<ptr<f32>>, %d: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_b = make_tensor_view %b, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_b = make_partition_view %tv_b : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_c = make_tensor_view %c, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_c = make_partition_view %tv_c : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_d = make_tensor_view %d, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_d = make_partition_view %tv_d : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %y, %tk_y = load_view_tko weak %pv_b[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %w, %tk_w = load_view_tko weak %pv_c[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z = fma %x, %y, %w : tile<16xf32>
    %ts_d = store_view_tko weak %z, %pv_d[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
  }
  entry @add_dirs(%a: tile<ptr<f32>>, %b: tile<ptr<f32>>, %rz: tile<ptr<f32>>, %rd: tile<ptr<f32>>, %ru: tile<ptr<f32>>, %rf: tile<ptr<f32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_b = make_tensor_view %b, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_b = make_partition_view %tv_b : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_rz = make_tensor_view %rz, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_rz = make_partition_view %tv_rz : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_rd = make_tensor_view %rd, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_rd = make_partition_view %tv_rd : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_ru = make_tensor_view %ru, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_ru = make_partition_view %tv_ru : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %tv_rf = make_tensor_view %rf, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pv_rf = make_partition_view %tv_rf : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %y, %tk_y = load_view_tko weak %pv_b[%c0] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %z1 = addf %x, %y rounding<zero> : tile<16xf32>
    %z2 = subf %x, %y rounding<negative_inf> : tile<16xf32>
    %z3 = mulf %x, %y rounding<positive_inf> : tile<16xf32>
    %z4 = addf %x, %y rounding<nearest_even> flush_to_zero : tile<16xf32>
    %ts_rz = store_view_tko weak %z1, %pv_rz[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    %ts_rd = store_view_tko weak %z2, %pv_rd[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    %ts_ru = store_view_tko weak %z3, %pv_ru[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
    %ts_rf = store_view_tko weak %z4, %pv_rf[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> token
  }
  entry @div_sqrt_f16(%a: tile<ptr<f16>>, %b: tile<ptr<f16>>, %q: tile<ptr<f16>>, %s: tile<ptr<f16>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %tv_a = make_tensor_view %a, shape = [16], strides = [1] : tensor_view<16xf16, strides=[1]>
    %pv_a = make_partition_view %tv_a : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>
    %tv_b = make_tensor_view %b, shape = [16], strides = [1] : tensor_view<16xf16, strides=[1]>
    %pv_b = make_partition_view %tv_b : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>
    %tv_q = make_tensor_view %q, shape = [16], strides = [1] : tensor_view<16xf16, strides=[1]>
    %pv_q = make_partition_view %tv_q : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>
    %tv_s = make_tensor_view %s, shape = [16], strides = [1] : tensor_view<16xf16, strides=[1]>
    %pv_s = make_partition_view %tv_s : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>
    %x, %tk_x = load_view_tko weak %pv_a[%c0] : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>, tile<i32> -> tile<16xf16>, token
    %y, %tk_y = load_view_tko weak %pv_b[%c0] : partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>, tile<i32> -> tile<16xf16>, token
    %z1 = divf %x, %y rounding<positive_inf> : tile<16xf16>
    %ax = absf %x : tile<16xf16>
    %z2 = sqrt %ax rounding<zero> : tile<16xf16>
    %ts_q = store_view_tko weak %z1, %pv_q[%c0] : tile<16xf16>, partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>, tile<i32> -> token
    %ts_s = store_view_tko weak %z2, %pv_s[%c0] : tile<16xf16>, partition_view<tile=(16), tensor_view<16xf16, strides=[1]>>, tile<i32> -> token
  }
}
