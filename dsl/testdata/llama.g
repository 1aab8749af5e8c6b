# llama-style decoder: token embeddings, n_layer pre-norm attention and
# SwiGLU feed-forward blocks with a KV cache, a final norm and the output
# projection. Mirrors llm_build_llama in llama.cpp. Shapes list ne0 first
# (ggml order).

backends cuda0, cpu

dim n_layer = 4
dim n_embd = 64
dim n_head = 4
dim head_dim = n_embd / n_head
dim n_ff = 128
dim n_vocab = 128
dim n_kv = 16
dim n_tokens <= 8  # tokens in this batch
dim kv_head <= 8  # first cache cell written by this batch

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill kv_head + i
# causal mask: token i1 sees cache cells up to its own position
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= kv_head + i1, 0, -inf)

weight token_embd.weight: f32[n_embd, n_vocab]
for l in 0..n_layer {
  weight blk.{l}.attn_norm.weight: f32[n_embd]
  weight blk.{l}.attn_q.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_k.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_v.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_output.weight: f32[n_embd, n_embd]
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  weight blk.{l}.ffn_gate.weight: f16[n_embd, n_ff]
  weight blk.{l}.ffn_up.weight: f16[n_embd, n_ff] on cpu
  weight blk.{l}.ffn_down.weight: f16[n_ff, n_embd]
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab]

for l in 0..n_layer {
  state cache_k.{l}: f16[n_embd, n_kv]
  state cache_v.{l}: f16[n_kv * n_embd]
}

inpL = get_rows(token_embd.weight, inp_tokens)
for l in 0..n_layer {
  # self-attention
  cur = mul(rms_norm(inpL, eps=1e-5), blk.{l}.attn_norm.weight)
  q = rope(reshape(mul_mat(blk.{l}.attn_q.weight, cur), head_dim, n_head, n_tokens), inp_pos, n_dims=head_dim, mode=0, freq_base=10000)
  k = rope(reshape(mul_mat(blk.{l}.attn_k.weight, cur), head_dim, n_head, n_tokens), inp_pos, n_dims=head_dim, mode=0, freq_base=10000)
  v = mul_mat(blk.{l}.attn_v.weight, cur)

  # store this batch's k and v in the cache, starting at cell kv_head
  cpy(k, view_1d(cache_k.{l}, n_tokens * n_embd, kv_head * n_embd * 2))
  cpy(transpose(v), view_2d(cache_v.{l}, n_tokens, n_embd, n_kv * 2, kv_head * 2))

  kq = mul_mat(view_3d(cache_k.{l}, head_dim, n_kv, n_head, n_embd * 2, head_dim * 2, 0), permute(q, 0, 2, 1, 3))
  kq = soft_max_ext(kq, KQ_mask, scale=0.25, max_bias=0.0)
  kqv = mul_mat(view_3d(cache_v.{l}, n_kv, head_dim, n_head, n_kv * 2, n_kv * head_dim * 2, 0), kq)
  cur = mul_mat(blk.{l}.attn_output.weight, cont_2d(permute(kqv, 0, 2, 1, 3), n_embd, n_tokens))
  ffn_inp = add(cur, inpL)

  # feed-forward (SwiGLU)
  cur = mul(rms_norm(ffn_inp, eps=1e-5), blk.{l}.ffn_norm.weight)
  cur = mul(silu(mul_mat(blk.{l}.ffn_gate.weight, cur)), mul_mat(blk.{l}.ffn_up.weight, cur)) on cpu
  ffn_out = mul_mat(blk.{l}.ffn_down.weight, cur)
  inpL = add(ffn_out, ffn_inp)
}

output result_output = mul_mat(output.weight, mul(rms_norm(inpL, eps=1e-5), output_norm.weight))
