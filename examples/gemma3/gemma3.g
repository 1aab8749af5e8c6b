# A gemma3-architecture decoder as llama.cpp's llm_build_gemma3_iswa builds
# it, dims and constants from the GGUF file it is compiled for (see
# ../qwen3/qwen3.g): the embeddings scaled by sqrt(n_embd); each query and
# key head RMS-normed before rope, the queries scaled before the
# attention; RMS norms after the attention and after the feed-forward too
# (every norm a plain one: llama.cpp's converter stores Gemma's 1 + w);
# a GELU-gated feed-forward; and sliding-window attention on five of every
# six layers (those whose index modulo 6 is below 5): they see the last
# n_swa positions only, through the mask KQ_mask_swa, and rotate with
# rope base 10000, the others with the file's base and scaling. The output
# head is the embeddings' unless the file has its own. graphc gguf new
# -arch gemma3 writes files of the default shape.

dim n_layer = meta("gemma3.block_count", 2)
dim n_embd = meta("gemma3.embedding_length", 64)
dim n_head = meta("gemma3.attention.head_count", 4)
dim n_head_kv = meta("gemma3.attention.head_count_kv", 2)
dim n_ff = meta("gemma3.feed_forward_length", 128)
dim n_vocab = meta("gemma3.vocab_size", meta("tokenizer.ggml.tokens", 320)) # as llama.cpp: the vocabulary's length when the size is not stated
# A key's and a value's head size: n_embd / n_head unless the file says.
dim head_dim_k = meta("gemma3.attention.key_length", n_embd / n_head)
dim head_dim_v = meta("gemma3.attention.value_length", n_embd / n_head)
dim n_rot = meta("gemma3.rope.dimension_count", head_dim_k)
dim n_embd_q = head_dim_k * n_head         # one token's queries
dim n_embd_k_gqa = head_dim_k * n_head_kv  # one token's keys in the cache
dim n_embd_v_gqa = head_dim_v * n_head_kv  # and values
dim n_embd_out = head_dim_v * n_head       # the attention's output, attn_output's input
# The sliding-window layers' window, in positions (Gemma 3 1B's 512
# without a file; the converter writes it to every gemma3 file).
dim n_swa = meta("gemma3.attention.sliding_window", 512)

# The KV cache holds n_ctx tokens: 64, or -ctx N when compiling, at most
# the file's gemma3.context_length (the length it was trained for).
dim n_ctx = flag("ctx", 64, max=meta("gemma3.context_length", 1048576))
# An evaluation takes at most n_batch tokens: 32, or -batch N when
# compiling (llama.cpp's -ub).
dim n_batch = flag("batch", 32)
dim n_kv <= n_ctx          # cache slots in use after this batch; its first token goes to slot n_kv - n_tokens
dim n_tokens <= n_batch    # tokens in this batch
dim n_outputs <= n_tokens  # tokens whose logits are wanted (llama.cpp's n_outputs)

param eps = meta("gemma3.attention.layer_norm_rms_epsilon", 1e-6)
param rope_base = meta("gemma3.rope.freq_base", 1000000)
param rope_scale = 1.0 / meta("gemma3.rope.scaling.factor", 1)
param rope_base_swa = 10000  # llama.cpp's for gemma3's sliding-window layers, not read from the file
param embd_scale = sqrt(n_embd)
# The queries' scale: 1/sqrt(head size), but 1/sqrt(n_embd / n_head) for
# 27B (62 layers), as llama.cpp (and gemma_pytorch's query_pre_attn_scalar).
param q_scale = 1.0 / sqrt(head_dim_k)
param q_scale_27b = 1.0 / sqrt(n_embd / n_head)

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill n_kv - n_tokens + i
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, 0, -inf)
# The sliding-window layers' mask: the causal one, less the slots n_swa or
# more positions behind the token.
input KQ_mask_swa: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, where(n_kv - n_tokens + i1 - i0 < n_swa, 0, -inf), -inf)
input inp_out_ids: i32[n_outputs] fill n_tokens - n_outputs + i  # their rows in the batch: by default the last

weight token_embd.weight: f32[n_embd, n_vocab]
for l in 0..n_layer {
  weight blk.{l}.attn_norm.weight: f32[n_embd]
  weight blk.{l}.attn_q.weight: f32[n_embd, n_embd_q]
  weight blk.{l}.attn_k.weight: f32[n_embd, n_embd_k_gqa]
  weight blk.{l}.attn_v.weight: f32[n_embd, n_embd_v_gqa]
  weight blk.{l}.attn_q_norm.weight: f32[head_dim_k]
  weight blk.{l}.attn_k_norm.weight: f32[head_dim_k]
  weight blk.{l}.attn_output.weight: f32[n_embd_out, n_embd]
  weight blk.{l}.post_attention_norm.weight: f32[n_embd]
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  weight blk.{l}.ffn_gate.weight: f32[n_embd, n_ff]
  weight blk.{l}.ffn_up.weight: f32[n_embd, n_ff]
  weight blk.{l}.ffn_down.weight: f32[n_ff, n_embd]
  weight blk.{l}.post_ffw_norm.weight: f32[n_embd]
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab] or token_embd.weight

# The caches' types: f16, or -ctk TYPE and -ctv TYPE when compiling
# (llama.cpp's; a quantized V cache needs -fa on, its rows laid out as K's).
# Every layer caches n_ctx slots; the sliding-window layers' masks leave
# out the slots behind their window.
for l in 0..n_layer {
  state cache_k_l{l}: flag("ctk", f16)[n_embd_k_gqa, n_ctx]
  state cache_v_l{l}: flag("ctv", f16)[n_ctx * n_embd_v_gqa]
}

inp_embd = get_rows(token_embd.weight, inp_tokens)
inp_scaled = scale(inp_embd, embd_scale)
inpL = inp_scaled
for l in 0..n_layer {
  norm = rms_norm(inpL, eps=eps)
  attn_norm = mul(norm, blk.{l}.attn_norm.weight)

  # Write this batch's keys and values into the cache at slot n_kv - n_tokens.
  Kcur = mul_mat(blk.{l}.attn_k.weight, attn_norm)
  Kcur_3d = reshape(Kcur, head_dim_k, n_head_kv, n_tokens)
  Kcur_norm = rms_norm(Kcur_3d, eps=eps)  # each head on its own
  Kcur_normed = mul(Kcur_norm, blk.{l}.attn_k_norm.weight)
  if l % 6 < 5 {
    Kcur_rope = rope(Kcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base_swa, freq_scale=1)
  }
  if l % 6 == 5 {
    Kcur_rope = rope(Kcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale)
  }
  k_cache_view = view_1d(cache_k_l{l}, n_tokens * n_embd_k_gqa, row_size(cache_k_l{l}, n_embd_k_gqa) * (n_kv - n_tokens))
  k_cache_cpy = cpy(Kcur_rope, k_cache_view)
  Vcur = mul_mat(blk.{l}.attn_v.weight, attn_norm)
  if flag("fa", 0) {
    # With flash attention (-fa on) the V cache is laid out as K's: a row per token.
    v_cache_view = view_1d(cache_v_l{l}, n_tokens * n_embd_v_gqa, row_size(cache_v_l{l}, n_embd_v_gqa) * (n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur, v_cache_view)
  }
  if flag("fa", 0) == 0 {
    Vcur_T = transpose(Vcur)
    v_cache_view = view_2d(cache_v_l{l}, n_tokens, n_embd_v_gqa, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur_T, v_cache_view)
  }

  # Attention over the whole cache, masked causally (and by the window on
  # the sliding-window layers); query head h reads K/V head
  # h / (n_head / n_head_kv). The queries come scaled, the scores not.
  Qcur = mul_mat(blk.{l}.attn_q.weight, attn_norm)
  Qcur_3d = reshape(Qcur, head_dim_k, n_head, n_tokens)
  Qcur_norm = rms_norm(Qcur_3d, eps=eps)
  Qcur_normed = mul(Qcur_norm, blk.{l}.attn_q_norm.weight)
  if l % 6 < 5 {
    Qcur_rope = rope(Qcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base_swa, freq_scale=1)
  }
  if l % 6 == 5 {
    Qcur_rope = rope(Qcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale)
  }
  if n_layer == 62 {
    Qcur_scaled = scale(Qcur_rope, q_scale_27b)
  }
  if n_layer != 62 {
    Qcur_scaled = scale(Qcur_rope, q_scale)
  }
  q = permute(Qcur_scaled, 0, 2, 1, 3)
  k = view_3d(cache_k_l{l}, head_dim_k, n_kv, n_head_kv, row_size(cache_k_l{l}, n_embd_k_gqa), row_size(cache_k_l{l}, head_dim_k), 0)
  if flag("fa", 0) {
    # ggml's fused attention over the cache, V not transposed (llama.cpp -fa on).
    v = view_3d(cache_v_l{l}, head_dim_v, n_kv, n_head_kv, row_size(cache_v_l{l}, n_embd_v_gqa), row_size(cache_v_l{l}, head_dim_v), 0)
    if l % 6 < 5 {
      __fattn__ = flash_attn_ext(q, k, v, KQ_mask_swa, scale=1, prec=32)
    }
    if l % 6 == 5 {
      __fattn__ = flash_attn_ext(q, k, v, KQ_mask, scale=1, prec=32)
    }
    kqv_out = reshape(__fattn__, n_embd_out, n_tokens)
  }
  if flag("fa", 0) == 0 {
    kq = mul_mat(k, q, prec=32)      # f32 sums on devices, as llama.cpp asks (ggml_mul_mat_set_prec)
    if l % 6 < 5 {
      kq_soft_max = soft_max(kq, KQ_mask_swa, scale=1)
    }
    if l % 6 == 5 {
      kq_soft_max = soft_max(kq, KQ_mask, scale=1)
    }
    v = view_3d(cache_v_l{l}, n_kv, head_dim_v, n_head_kv, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_ctx * head_dim_v), 0)
    kqv = mul_mat(v, kq_soft_max)
    kqv_merged = permute(kqv, 0, 2, 1, 3)
    kqv_merged_cont = cont(kqv_merged, n_embd_out, n_tokens)
    kqv_out = kqv_merged_cont
  }
  attn_out = mul_mat(blk.{l}.attn_output.weight, kqv_out)
  if l == n_layer - 1 {
    # The last layer goes on with the rows whose logits are wanted alone
    # (llama.cpp's inp_out_ids).
    attn_out = get_rows(attn_out, inp_out_ids)
    inpL = get_rows(inpL, inp_out_ids)
  }
  attn_post = rms_norm(attn_out, eps=eps)
  attn_post_norm = mul(attn_post, blk.{l}.post_attention_norm.weight)
  sa_out = add(attn_post_norm, inpL)

  # GELU-gated feed-forward (ggml_gelu: the tanh approximation).
  norm_ffn = rms_norm(sa_out, eps=eps)
  ffn_norm = mul(norm_ffn, blk.{l}.ffn_norm.weight)
  ffn_gate = mul_mat(blk.{l}.ffn_gate.weight, ffn_norm)
  ffn_gelu = gelu(ffn_gate)
  ffn_up = mul_mat(blk.{l}.ffn_up.weight, ffn_norm)
  ffn_gate_par = mul(ffn_gelu, ffn_up)
  ffn_out = mul_mat(blk.{l}.ffn_down.weight, ffn_gate_par)
  ffn_post = rms_norm(ffn_out, eps=eps)
  ffn_post_norm = mul(ffn_post, blk.{l}.post_ffw_norm.weight)
  l_out = add(ffn_post_norm, sa_out)
  inpL = l_out
}

norm_out = rms_norm(inpL, eps=eps)
result_norm = mul(norm_out, output_norm.weight)
output result_output = mul_mat(output.weight, result_norm)
