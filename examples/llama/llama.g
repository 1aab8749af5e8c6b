# A llama-style decoder: 4 layers, RMS norm, rotary attention over an f16 KV
# cache, SwiGLU feed-forward. It is the graph of ggml's conformance trace
# llama_cpu.json, tensor for tensor and in the same node order, so its plan
# and its numbers can be compared with ggml's.

dim n_layer = 4
dim n_embd = 64
dim n_head = 4
dim head_dim = 16
dim n_ff = 128
dim n_vocab = 128
dim n_ctx = 16         # KV cache length
dim n_kv <= 16         # cache slots in use after this batch; its first token goes to slot n_kv - n_tokens
dim n_tokens <= 8      # tokens in this batch

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill n_kv - n_tokens + i
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, 0, -inf)

weight token_embd.weight: f32[n_embd, n_vocab]
for l in 0..n_layer {
  weight blk.{l}.attn_norm.weight: f32[n_embd]
  weight blk.{l}.attn_q.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_k.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_v.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_output.weight: f32[n_embd, n_embd]
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  weight blk.{l}.ffn_gate.weight: f32[n_embd, n_ff]
  weight blk.{l}.ffn_up.weight: f32[n_embd, n_ff]
  weight blk.{l}.ffn_down.weight: f32[n_ff, n_embd]
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab]

for l in 0..n_layer {
  state cache_k_l{l}: f16[n_embd, n_ctx]
  state cache_v_l{l}: f16[n_ctx * n_embd]
}

inp_embd = get_rows(token_embd.weight, inp_tokens)
inpL = inp_embd
for l in 0..n_layer {
  norm = rms_norm(inpL, eps=1e-5)
  attn_norm = mul(norm, blk.{l}.attn_norm.weight)

  # Write this batch's keys and values into the cache at slot n_kv - n_tokens.
  Kcur = mul_mat(blk.{l}.attn_k.weight, attn_norm)
  Kcur_3d = reshape(Kcur, head_dim, n_head, n_tokens)
  Kcur_rope = rope(Kcur_3d, inp_pos, n_dims=head_dim, mode=0, freq_base=10000)
  k_cache_view = view_1d(cache_k_l{l}, n_tokens * n_embd, row_size(cache_k_l{l}, n_embd) * (n_kv - n_tokens))
  k_cache_cpy = cpy(Kcur_rope, k_cache_view)
  Vcur = mul_mat(blk.{l}.attn_v.weight, attn_norm)
  Vcur_2d = reshape(Vcur, n_embd, n_tokens)
  Vcur_T = transpose(Vcur_2d)
  v_cache_view = view_2d(cache_v_l{l}, n_tokens, n_embd, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_kv - n_tokens))
  v_cache_cpy = cpy(Vcur_T, v_cache_view)

  # Attention over the whole cache, masked causally.
  Qcur = mul_mat(blk.{l}.attn_q.weight, attn_norm)
  Qcur_3d = reshape(Qcur, head_dim, n_head, n_tokens)
  Qcur_rope = rope(Qcur_3d, inp_pos, n_dims=head_dim, mode=0, freq_base=10000)
  q = permute(Qcur_rope, 0, 2, 1, 3)
  k = view_3d(cache_k_l{l}, head_dim, n_kv, n_head, row_size(cache_k_l{l}, n_embd), row_size(cache_k_l{l}, head_dim), 0)
  kq = mul_mat(k, q, prec=32)      # f32 sums on devices, as llama.cpp asks (ggml_mul_mat_set_prec)
  kq_soft_max = soft_max(kq, KQ_mask, scale=0.25)
  v = view_3d(cache_v_l{l}, n_kv, head_dim, n_head, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_ctx * head_dim), 0)
  kqv = mul_mat(v, kq_soft_max)
  kqv_merged = permute(kqv, 0, 2, 1, 3)
  kqv_merged_cont = cont(kqv_merged, n_embd, n_tokens)
  attn_out = mul_mat(blk.{l}.attn_output.weight, kqv_merged_cont)
  ffn_inp = add(attn_out, inpL)

  # SwiGLU feed-forward.
  norm_ffn = rms_norm(ffn_inp, eps=1e-5)
  ffn_norm = mul(norm_ffn, blk.{l}.ffn_norm.weight)
  ffn_gate = mul_mat(blk.{l}.ffn_gate.weight, ffn_norm)
  ffn_silu = silu(ffn_gate)
  ffn_up = mul_mat(blk.{l}.ffn_up.weight, ffn_norm)
  ffn_gate_par = mul(ffn_silu, ffn_up)
  ffn_out = mul_mat(blk.{l}.ffn_down.weight, ffn_gate_par)
  l_out = add(ffn_out, ffn_inp)
  inpL = l_out
}

norm_out = rms_norm(inpL, eps=1e-5)
result_norm = mul(norm_out, output_norm.weight)
output result_output = mul_mat(output.weight, result_norm)
