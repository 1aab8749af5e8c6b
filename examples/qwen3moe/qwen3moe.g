# A qwen3moe-architecture decoder as llama.cpp's llm_build_qwen3moe builds
# it, dims and constants from the GGUF file it is compiled for (see
# ../qwen3/qwen3.g): qwen3's attention (per-head query and key RMS norms,
# a head size of its own) with a mixture of experts for the feed-forward,
# as llama.cpp's build_moe_ffn builds it with softmax gating and the
# chosen experts' weights normalised: the router ffn_gate_inp scores
# every expert, each token takes the n_expert_used best (argsort,
# descending, viewed to its first columns: ggml_argsort_top_k), runs
# their SwiGLU feed-forwards (mul_mat_id over ffn_gate_exps,
# ffn_up_exps and ffn_down_exps, [.., .., n_expert]) and sums their
# outputs, each scaled by its softmax probability over the chosen ones'
# sum. graphc gguf new -arch qwen3moe writes files of the default shape.

dim n_layer = meta("qwen3moe.block_count", 2)
dim n_embd = meta("qwen3moe.embedding_length", 64)
dim n_head = meta("qwen3moe.attention.head_count", 4)
dim n_head_kv = meta("qwen3moe.attention.head_count_kv", 2)
dim n_ff = meta("qwen3moe.feed_forward_length", 128)
dim n_expert = meta("qwen3moe.expert_count", 8)
dim n_expert_used = meta("qwen3moe.expert_used_count", 2)
# An expert's feed-forward width: as llama.cpp, n_ff / n_expert_used when
# the file does not say.
dim n_ff_exp = meta("qwen3moe.expert_feed_forward_length", n_ff / n_expert_used)
dim n_vocab = meta("qwen3moe.vocab_size", meta("tokenizer.ggml.tokens", 320)) # as llama.cpp: the vocabulary's length when the size is not stated
# A key's and a value's head size: n_embd / n_head unless the file says.
dim head_dim_k = meta("qwen3moe.attention.key_length", n_embd / n_head)
dim head_dim_v = meta("qwen3moe.attention.value_length", n_embd / n_head)
dim n_rot = meta("qwen3moe.rope.dimension_count", head_dim_k)
dim n_embd_q = head_dim_k * n_head       # one token's queries
dim n_embd_k_gqa = head_dim_k * n_head_kv  # one token's keys in the cache
dim n_embd_v_gqa = head_dim_v * n_head_kv  # and values
dim n_embd_out = head_dim_v * n_head     # the attention's output, attn_output's input

# The KV cache holds n_ctx tokens: 64, or -ctx N when compiling, at most
# the file's qwen3.context_length (the length it was trained for).
dim n_ctx = flag("ctx", 64, max=meta("qwen3moe.context_length", 1048576))
# An evaluation takes at most n_batch tokens: 32, or -batch N when
# compiling (llama.cpp's -ub).
dim n_batch = flag("batch", 32)
dim n_kv <= n_ctx          # cache slots in use after this batch; its first token goes to slot n_kv - n_tokens
dim n_tokens <= n_batch    # tokens in this batch
dim n_outputs <= n_tokens  # tokens whose logits are wanted (llama.cpp's n_outputs)

param eps = meta("qwen3moe.attention.layer_norm_rms_epsilon", 1e-6)
param rope_base = meta("qwen3moe.rope.freq_base", 1000000)
param rope_scale = 1.0 / meta("qwen3moe.rope.scaling.factor", 1)
param kq_scale = 1.0 / sqrt(head_dim_k)

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill n_kv - n_tokens + i
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, 0, -inf)
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
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  weight blk.{l}.ffn_gate_inp.weight: f32[n_embd, n_expert]
  weight blk.{l}.ffn_gate_exps.weight: f32[n_embd, n_ff_exp, n_expert]
  weight blk.{l}.ffn_up_exps.weight: f32[n_embd, n_ff_exp, n_expert]
  weight blk.{l}.ffn_down_exps.weight: f32[n_ff_exp, n_embd, n_expert]
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab] or token_embd.weight

# The caches' types: f16, or -ctk TYPE and -ctv TYPE when compiling
# (llama.cpp's; a quantized V cache needs -fa on, its rows laid out as K's).
for l in 0..n_layer {
  state cache_k_l{l}: flag("ctk", f16)[n_embd_k_gqa, n_ctx]
  state cache_v_l{l}: flag("ctv", f16)[n_ctx * n_embd_v_gqa]
}

inp_embd = get_rows(token_embd.weight, inp_tokens)
inpL = inp_embd
for l in 0..n_layer {
  norm = rms_norm(inpL, eps=eps)
  attn_norm = mul(norm, blk.{l}.attn_norm.weight)

  # Write this batch's keys and values into the cache at slot n_kv - n_tokens.
  Kcur = mul_mat(blk.{l}.attn_k.weight, attn_norm)
  Kcur_3d = reshape(Kcur, head_dim_k, n_head_kv, n_tokens)
  Kcur_norm = rms_norm(Kcur_3d, eps=eps)  # each head on its own
  Kcur_normed = mul(Kcur_norm, blk.{l}.attn_k_norm.weight)
  Kcur_rope = rope(Kcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale)
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

  # Attention over the whole cache, masked causally; query head h reads
  # K/V head h / (n_head / n_head_kv).
  Qcur = mul_mat(blk.{l}.attn_q.weight, attn_norm)
  Qcur_3d = reshape(Qcur, head_dim_k, n_head, n_tokens)
  Qcur_norm = rms_norm(Qcur_3d, eps=eps)
  Qcur_normed = mul(Qcur_norm, blk.{l}.attn_q_norm.weight)
  Qcur_rope = rope(Qcur_normed, inp_pos, n_dims=n_rot, mode=2, freq_base=rope_base, freq_scale=rope_scale)
  q = permute(Qcur_rope, 0, 2, 1, 3)
  k = view_3d(cache_k_l{l}, head_dim_k, n_kv, n_head_kv, row_size(cache_k_l{l}, n_embd_k_gqa), row_size(cache_k_l{l}, head_dim_k), 0)
  if flag("fa", 0) {
    # ggml's fused attention over the cache, V not transposed (llama.cpp -fa on).
    v = view_3d(cache_v_l{l}, head_dim_v, n_kv, n_head_kv, row_size(cache_v_l{l}, n_embd_v_gqa), row_size(cache_v_l{l}, head_dim_v), 0)
    __fattn__ = flash_attn_ext(q, k, v, KQ_mask, scale=kq_scale, prec=32)
    kqv_out = reshape(__fattn__, n_embd_out, n_tokens)
  }
  if flag("fa", 0) == 0 {
    kq = mul_mat(k, q, prec=32)      # f32 sums on devices, as llama.cpp asks (ggml_mul_mat_set_prec)
    kq_soft_max = soft_max(kq, KQ_mask, scale=kq_scale)
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
  ffn_inp = add(attn_out, inpL)

  # The mixture of experts (build_moe_ffn): the router's softmax over the
  # experts, each token's n_expert_used most probable ones.
  norm_ffn = rms_norm(ffn_inp, eps=eps)
  ffn_norm = mul(norm_ffn, blk.{l}.ffn_norm.weight)
  ffn_moe_logits = mul_mat(blk.{l}.ffn_gate_inp.weight, ffn_norm)
  ffn_moe_probs = soft_max(ffn_moe_logits)
  ffn_moe_argsort = argsort(ffn_moe_probs, order=1)
  ffn_moe_topk = view_2d(ffn_moe_argsort, n_expert_used, ne(ffn_norm, 1), row_size(ffn_moe_argsort, n_expert), 0)
  # The chosen experts' probabilities, divided by their sum. (llama.cpp
  # clamps the sum below at 6.1e-5, f16's least normal number; the sum of
  # the largest n_expert_used of n_expert probabilities is at least
  # n_expert_used / n_expert, so the clamp changes nothing here.)
  probs_3d = reshape(ffn_moe_probs, 1, n_expert, ne(ffn_norm, 1))
  ffn_moe_weights = get_rows(probs_3d, ffn_moe_topk)
  weights_2d = reshape(ffn_moe_weights, n_expert_used, ne(ffn_norm, 1))
  ffn_moe_weights_sum = sum_rows(weights_2d)
  ffn_moe_weights_norm = div(weights_2d, ffn_moe_weights_sum)
  weights_norm_3d = reshape(ffn_moe_weights_norm, 1, n_expert_used, ne(ffn_norm, 1))

  # Each chosen expert's SwiGLU feed-forward on the token's column.
  cur_3d = reshape(ffn_norm, n_embd, 1, ne(ffn_norm, 1))
  ffn_moe_up = mul_mat_id(blk.{l}.ffn_up_exps.weight, cur_3d, ffn_moe_topk)
  ffn_moe_gate = mul_mat_id(blk.{l}.ffn_gate_exps.weight, cur_3d, ffn_moe_topk)
  ffn_moe_silu = silu(ffn_moe_gate)
  ffn_moe_swiglu = mul(ffn_moe_silu, ffn_moe_up)
  ffn_moe_down = mul_mat_id(blk.{l}.ffn_down_exps.weight, ffn_moe_swiglu, ffn_moe_topk)
  ffn_moe_weighted = mul(ffn_moe_down, weights_norm_3d)

  # The experts' outputs summed, in slot order, as llama.cpp's adds.
  ffn_out = view_2d(ffn_moe_weighted, n_embd, ne(ffn_norm, 1), row_size(ffn_moe_weighted, n_embd * n_expert_used), 0)
  for e in 1..n_expert_used {
    expert_out = view_2d(ffn_moe_weighted, n_embd, ne(ffn_norm, 1), row_size(ffn_moe_weighted, n_embd * n_expert_used), row_size(ffn_moe_weighted, n_embd) * e)
    ffn_out = add(ffn_out, expert_out)
  }
  l_out = add(ffn_out, ffn_inp)
  inpL = l_out
}

norm_out = rms_norm(inpL, eps=eps)
result_norm = mul(norm_out, output_norm.weight)
output result_output = mul_mat(output.weight, result_norm)
