# A phi3-architecture decoder (Phi-3 and Phi-3.5 mini) as llama.cpp's
# phi3 graph builds it, dims and constants from the GGUF file it is
# compiled for (see ../llamafile/llama.g). Unlike llama: the query, key
# and value projections are one matrix (attn_qkv) whose product is cut
# into the three by views, the feed-forward's gate and up projections are
# one matrix (ffn_up, the gate's rows first), rope is neox mode with
# Phi-3's long or short frequency factors, and the queries are scaled by
# 1/sqrt(head_dim) before attention rather than inside its softmax.
# graphc gguf new -arch phi3 writes files of the default shape.
#
# The files' phi3.attention.sliding_window is not read: llama.cpp loads it
# and turns sliding-window attention off for phi3 (every layer attends to
# the whole cache), and so does this graph.

dim n_layer = meta("phi3.block_count", 2)
dim n_embd = meta("phi3.embedding_length", 64)
dim n_head = meta("phi3.attention.head_count", 4)
dim n_head_kv = meta("phi3.attention.head_count_kv", 2)
dim n_ff = meta("phi3.feed_forward_length", 128)
dim n_vocab = meta("phi3.vocab_size", meta("tokenizer.ggml.tokens", 320)) # as llama.cpp: the vocabulary's length when the size is not stated
dim head_dim = n_embd / n_head
dim n_rot = meta("phi3.rope.dimension_count", 16)
dim n_embd_gqa = head_dim * n_head_kv  # one token's keys (and values) in the cache

# The KV cache holds n_ctx tokens: 64, or -ctx N when compiling, at most
# the file's phi3.context_length (the length it was trained for).
dim n_ctx = flag("ctx", 64, max=meta("phi3.context_length", 1048576))
# The context Phi-3's short rope factors are for; llama.cpp's
# n_ctx_orig_yarn, the trained context when the file does not say.
dim n_ctx_orig = meta("phi3.rope.scaling.original_context_length", meta("phi3.context_length", 2048))
# An evaluation takes at most n_batch tokens: 32, or -batch N when
# compiling (llama.cpp's -ub).
dim n_batch = flag("batch", 32)
dim n_kv <= n_ctx          # cache slots in use after this batch; its first token goes to slot n_kv - n_tokens
dim n_tokens <= n_batch    # tokens in this batch
dim n_outputs <= n_tokens  # tokens whose logits are wanted (llama.cpp's n_outputs)

param eps = meta("phi3.attention.layer_norm_rms_epsilon", 1e-5)
param rope_base = meta("phi3.rope.freq_base", 10000)
param rope_scale = 1.0 / meta("phi3.rope.scaling.factor", 1)
# Phi-3's 128k files scale the rotated values' magnitude (the converter's
# sqrt(1 + log(scale) / log(original context)), llama.cpp's
# rope_attn_factor).
param rope_attn_factor = meta("phi3.rope.scaling.attn_factor", 1)
param kq_scale = 1.0 / sqrt(head_dim)

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill n_kv - n_tokens + i
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, 0, -inf)
input inp_out_ids: i32[n_outputs] fill n_tokens - n_outputs + i  # their rows in the batch: by default the last

weight token_embd.weight: f32[n_embd, n_vocab]
for l in 0..n_layer {
  weight blk.{l}.attn_norm.weight: f32[n_embd]
  # The queries', keys' and values' rows, in that order.
  weight blk.{l}.attn_qkv.weight: f32[n_embd, n_embd + 2 * n_embd_gqa]
  weight blk.{l}.attn_output.weight: f32[n_embd, n_embd]
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  # The gate's rows, then up's.
  weight blk.{l}.ffn_up.weight: f32[n_embd, 2 * n_ff]
  weight blk.{l}.ffn_down.weight: f32[n_ff, n_embd]
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab] or token_embd.weight
# Phi-3's rope scaling (longrope): a factor per rotated pair dividing its
# frequency, one set for contexts up to n_ctx_orig and one for longer
# ones, the same tensors in every layer. Files without them (Phi-3 mini
# 4k) rope unscaled.
weight rope_factors_long.weight: f32[n_rot / 2] or none
weight rope_factors_short.weight: f32[n_rot / 2] or none

# The caches' types: f16, or -ctk TYPE and -ctv TYPE when compiling
# (llama.cpp's; a quantized V cache needs -fa on, its rows laid out as K's).
for l in 0..n_layer {
  state cache_k_l{l}: flag("ctk", f16)[n_embd_gqa, n_ctx]
  state cache_v_l{l}: flag("ctv", f16)[n_ctx * n_embd_gqa]
}

inp_embd = get_rows(token_embd.weight, inp_tokens)
inpL = inp_embd
for l in 0..n_layer {
  norm = rms_norm(inpL, eps=eps)
  attn_norm = mul(norm, blk.{l}.attn_norm.weight)

  # One product for the queries, keys and values; each a view of its rows
  # at ggml_row_size offsets, as llama.cpp's build_qkv cuts it.
  wqkv = mul_mat(blk.{l}.attn_qkv.weight, attn_norm)
  Qcur = view_3d(wqkv, head_dim, n_head, n_tokens, row_size(wqkv, head_dim), nb(wqkv, 1), 0)
  Kcur = view_3d(wqkv, head_dim, n_head_kv, n_tokens, row_size(wqkv, head_dim), nb(wqkv, 1), row_size(wqkv, n_embd))
  Vcur = view_3d(wqkv, head_dim, n_head_kv, n_tokens, row_size(wqkv, head_dim), nb(wqkv, 1), row_size(wqkv, n_embd + n_embd_gqa))

  # llama.cpp picks the factors by its context (get_rope_factors): the
  # long ones when it holds more than n_ctx_orig tokens. Here the context
  # is -ctx, so the choice is made when compiling.
  if n_ctx > n_ctx_orig {
    Kcur_rope = rope(Kcur, inp_pos, rope_factors_long.weight, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale, attn_factor=rope_attn_factor)
    Qcur_rope = rope(Qcur, inp_pos, rope_factors_long.weight, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale, attn_factor=rope_attn_factor)
  }
  if n_ctx <= n_ctx_orig {
    Kcur_rope = rope(Kcur, inp_pos, rope_factors_short.weight, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale, attn_factor=rope_attn_factor)
    Qcur_rope = rope(Qcur, inp_pos, rope_factors_short.weight, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale, attn_factor=rope_attn_factor)
  }

  # Write this batch's keys and values into the cache at slot n_kv - n_tokens.
  k_cache_view = view_1d(cache_k_l{l}, n_tokens * n_embd_gqa, row_size(cache_k_l{l}, n_embd_gqa) * (n_kv - n_tokens))
  k_cache_cpy = cpy(Kcur_rope, k_cache_view)
  if flag("fa", 0) {
    # With flash attention (-fa on) the V cache is laid out as K's: a row per token.
    Vcur_2d = view_2d(Vcur, n_embd_gqa, n_tokens, nb(Vcur, 2), 0)
    v_cache_view = view_2d(cache_v_l{l}, n_embd_gqa, n_tokens, row_size(cache_v_l{l}, n_embd_gqa), row_size(cache_v_l{l}, n_embd_gqa) * (n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur_2d, v_cache_view)
  }
  if flag("fa", 0) == 0 {
    # The values' rows are not adjacent in wqkv: llama.cpp copies them
    # out (ggml_cont_2d) before transposing them into the cache.
    Vcur_cont = cont(Vcur, n_embd_gqa, n_tokens)
    Vcur_T = transpose(Vcur_cont)
    v_cache_view = view_2d(cache_v_l{l}, n_tokens, n_embd_gqa, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur_T, v_cache_view)
  }

  # Attention over the whole cache, masked causally, the queries already
  # scaled. Query head h reads K/V head h / (n_head / n_head_kv): mul_mat
  # broadcasts the cache's n_head_kv heads over the queries' n_head.
  Qcur_scaled = scale(Qcur_rope, kq_scale)
  q = permute(Qcur_scaled, 0, 2, 1, 3)
  k = view_3d(cache_k_l{l}, head_dim, n_kv, n_head_kv, row_size(cache_k_l{l}, n_embd_gqa), row_size(cache_k_l{l}, head_dim), 0)
  if flag("fa", 0) {
    # ggml's fused attention over the cache, V not transposed (llama.cpp -fa on).
    v = view_3d(cache_v_l{l}, head_dim, n_kv, n_head_kv, row_size(cache_v_l{l}, n_embd_gqa), row_size(cache_v_l{l}, head_dim), 0)
    __fattn__ = flash_attn_ext(q, k, v, KQ_mask, scale=1, prec=32)
    kqv_out = reshape(__fattn__, n_embd, n_tokens)
  }
  if flag("fa", 0) == 0 {
    kq = mul_mat(k, q, prec=32)      # f32 sums on devices, as llama.cpp asks (ggml_mul_mat_set_prec)
    kq_soft_max = soft_max(kq, KQ_mask, scale=1)
    v = view_3d(cache_v_l{l}, n_kv, head_dim, n_head_kv, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_ctx * head_dim), 0)
    kqv = mul_mat(v, kq_soft_max)
    kqv_merged = permute(kqv, 0, 2, 1, 3)
    kqv_merged_cont = cont(kqv_merged, n_embd, n_tokens)
    kqv_out = kqv_merged_cont
  }
  attn_out = mul_mat(blk.{l}.attn_output.weight, kqv_out)
  if l == n_layer - 1 {
    # The last layer goes on with the rows whose logits are wanted alone
    # (llama.cpp's inp_out_ids): its feed-forward and the output head
    # skip the others.
    attn_out = get_rows(attn_out, inp_out_ids)
    inpL = get_rows(inpL, inp_out_ids)
  }
  ffn_inp = add(attn_out, inpL)

  # SwiGLU feed-forward over the fused projection: silu of its first n_ff
  # rows times the next n_ff (ggml_swiglu of one tensor; here its halves
  # as views, silu and mul, which compute the same f32 values).
  norm_ffn = rms_norm(ffn_inp, eps=eps)
  ffn_norm = mul(norm_ffn, blk.{l}.ffn_norm.weight)
  ffn_up = mul_mat(blk.{l}.ffn_up.weight, ffn_norm)
  ffn_gate = view_2d(ffn_up, n_ff, ne(ffn_up, 1), nb(ffn_up, 1), 0)
  ffn_up_half = view_2d(ffn_up, n_ff, ne(ffn_up, 1), nb(ffn_up, 1), row_size(ffn_up, n_ff))
  ffn_silu = silu(ffn_gate)
  ffn_swiglu = mul(ffn_silu, ffn_up_half)
  ffn_out = mul_mat(blk.{l}.ffn_down.weight, ffn_swiglu)
  l_out = add(ffn_out, ffn_inp)
  inpL = l_out
}

norm_out = rms_norm(inpL, eps=eps)
result_norm = mul(norm_out, output_norm.weight)
output result_output = mul_mat(output.weight, result_norm)
