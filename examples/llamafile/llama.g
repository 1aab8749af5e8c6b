# A llama-architecture decoder whose dims and constants come from the GGUF
# file it is compiled for (graphc run -weights FILE, graphc compile -weights
# FILE): any number of layers, grouped-query attention (fewer K/V heads than
# query heads, shared by head groups through mul_mat's broadcasting over
# dim 2, as llama.cpp does), rope base and linear rope scaling, Llama 3's
# rope frequency factors when the file has rope_freqs.weight, and a tied
# output head when the file has no output.weight (Llama 3.2). The defaults
# are what the generated package here is compiled for: a small GQA model
# (graphc gguf new -arch llama writes files of that shape by default).
# A file stating llama.expert_count (Mixtral's) has a mixture of experts
# for each layer's feed-forward instead of the dense one, as llama.cpp
# builds it for such llama files: build_moe_ffn with softmax gating over
# all experts, each token's expert_used_count best, their weights
# normalised to sum 1 (as examples/qwen3moe/qwen3moe.g), each expert n_ff
# wide (graphc gguf new -arch llama -experts N writes such files).
# The node order is llama.cpp's (src/models/llama.cpp): the llama
# example's, ggml's conformance trace's, but for the last layer, which
# computes only the rows of the tokens whose logits are wanted
# (inp_out_ids).

dim n_layer = meta("llama.block_count", 2)
dim n_embd = meta("llama.embedding_length", 64)
dim n_head = meta("llama.attention.head_count", 4)
dim n_head_kv = meta("llama.attention.head_count_kv", 2)
dim n_ff = meta("llama.feed_forward_length", 128)
dim n_vocab = meta("llama.vocab_size", meta("tokenizer.ggml.tokens", 320)) # as llama.cpp: the vocabulary's length when the size is not stated
dim head_dim = n_embd / n_head
dim n_rot = meta("llama.rope.dimension_count", 16)
dim n_embd_gqa = head_dim * n_head_kv  # one token's keys (and values) in the cache
# The experts (0: a dense feed-forward) and how many each token uses.
dim n_expert = meta("llama.expert_count", 0)
dim n_expert_used = meta("llama.expert_used_count", 0)

# The KV cache holds n_ctx tokens: 64, or -ctx N when compiling, at most
# the file's llama.context_length (the length it was trained for).
dim n_ctx = flag("ctx", 64, max=meta("llama.context_length", 1048576))
# An evaluation takes at most n_batch tokens: 32, or -batch N when
# compiling (llama.cpp's -ub).
dim n_batch = flag("batch", 32)
dim n_kv <= n_ctx          # cache slots in use after this batch; its first token goes to slot n_kv - n_tokens
dim n_tokens <= n_batch    # tokens in this batch
dim n_outputs <= n_tokens  # tokens whose logits are wanted (llama.cpp's n_outputs)

param eps = meta("llama.attention.layer_norm_rms_epsilon", 1e-5)
param rope_base = meta("llama.rope.freq_base", 10000)
param rope_scale = 1.0 / meta("llama.rope.scaling.factor", 1)
param kq_scale = 1.0 / sqrt(head_dim)

input inp_tokens: i32[n_tokens] fill (i * 7 + 3) % n_vocab
input inp_pos: i32[n_tokens] fill n_kv - n_tokens + i
input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= n_kv - n_tokens + i1, 0, -inf)
input inp_out_ids: i32[n_outputs] fill n_tokens - n_outputs + i  # their rows in the batch: by default the last

weight token_embd.weight: f32[n_embd, n_vocab]
for l in 0..n_layer {
  weight blk.{l}.attn_norm.weight: f32[n_embd]
  weight blk.{l}.attn_q.weight: f32[n_embd, n_embd]
  weight blk.{l}.attn_k.weight: f32[n_embd, n_embd_gqa]
  weight blk.{l}.attn_v.weight: f32[n_embd, n_embd_gqa]
  weight blk.{l}.attn_output.weight: f32[n_embd, n_embd]
  weight blk.{l}.ffn_norm.weight: f32[n_embd]
  if n_expert == 0 {
    weight blk.{l}.ffn_gate.weight: f32[n_embd, n_ff]
    weight blk.{l}.ffn_up.weight: f32[n_embd, n_ff]
    weight blk.{l}.ffn_down.weight: f32[n_ff, n_embd]
  }
  if n_expert > 0 {
    # The router, and the experts' matrices, one per expert in dim 2.
    weight blk.{l}.ffn_gate_inp.weight: f32[n_embd, n_expert]
    weight blk.{l}.ffn_gate_exps.weight: f32[n_embd, n_ff, n_expert]
    weight blk.{l}.ffn_up_exps.weight: f32[n_embd, n_ff, n_expert]
    weight blk.{l}.ffn_down_exps.weight: f32[n_ff, n_embd, n_expert]
  }
}
weight output_norm.weight: f32[n_embd]
weight output.weight: f32[n_embd, n_vocab] or token_embd.weight
# Llama 3.1/3.2's llama3 rope scaling: a factor per rotated pair dividing
# its frequency (ggml_rope_ext's third operand), the same tensor in every
# layer (llama.cpp's get_rope_factors). Absent in other files, and the
# ropes then have no third operand.
weight rope_freqs.weight: f32[n_rot / 2] or none

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

  # Write this batch's keys and values into the cache at slot n_kv - n_tokens.
  Kcur = mul_mat(blk.{l}.attn_k.weight, attn_norm)
  Kcur_3d = reshape(Kcur, head_dim, n_head_kv, n_tokens)
  Kcur_rope = rope(Kcur_3d, inp_pos, rope_freqs.weight, n_dims=n_rot, mode=0, freq_base=rope_base, freq_scale=rope_scale)
  k_cache_view = view_1d(cache_k_l{l}, n_tokens * n_embd_gqa, row_size(cache_k_l{l}, n_embd_gqa) * (n_kv - n_tokens))
  k_cache_cpy = cpy(Kcur_rope, k_cache_view)
  Vcur = mul_mat(blk.{l}.attn_v.weight, attn_norm)
  Vcur_2d = reshape(Vcur, n_embd_gqa, n_tokens)
  if flag("fa", 0) {
    # With flash attention (-fa on) the V cache is laid out as K's: a row per token.
    v_cache_view = view_1d(cache_v_l{l}, n_tokens * n_embd_gqa, row_size(cache_v_l{l}, n_embd_gqa) * (n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur_2d, v_cache_view)
  }
  if flag("fa", 0) == 0 {
    Vcur_T = transpose(Vcur_2d)
    v_cache_view = view_2d(cache_v_l{l}, n_tokens, n_embd_gqa, row_size(cache_v_l{l}, n_ctx), row_size(cache_v_l{l}, n_kv - n_tokens))
    v_cache_cpy = cpy(Vcur_T, v_cache_view)
  }

  # Attention over the whole cache, masked causally. Query head h reads
  # K/V head h / (n_head / n_head_kv): mul_mat broadcasts the cache's
  # n_head_kv heads over the queries' n_head.
  Qcur = mul_mat(blk.{l}.attn_q.weight, attn_norm)
  Qcur_3d = reshape(Qcur, head_dim, n_head, n_tokens)
  Qcur_rope = rope(Qcur_3d, inp_pos, rope_freqs.weight, n_dims=n_rot, mode=0, freq_base=rope_base, freq_scale=rope_scale)
  q = permute(Qcur_rope, 0, 2, 1, 3)
  k = view_3d(cache_k_l{l}, head_dim, n_kv, n_head_kv, row_size(cache_k_l{l}, n_embd_gqa), row_size(cache_k_l{l}, head_dim), 0)
  if flag("fa", 0) {
    # ggml's fused attention over the cache, V not transposed (llama.cpp -fa on).
    v = view_3d(cache_v_l{l}, head_dim, n_kv, n_head_kv, row_size(cache_v_l{l}, n_embd_gqa), row_size(cache_v_l{l}, head_dim), 0)
    __fattn__ = flash_attn_ext(q, k, v, KQ_mask, scale=kq_scale, prec=32)
    kqv_out = reshape(__fattn__, n_embd, n_tokens)
  }
  if flag("fa", 0) == 0 {
    kq = mul_mat(k, q, prec=32)      # f32 sums on devices, as llama.cpp asks (ggml_mul_mat_set_prec)
    kq_soft_max = soft_max(kq, KQ_mask, scale=kq_scale)
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

  norm_ffn = rms_norm(ffn_inp, eps=eps)
  ffn_norm = mul(norm_ffn, blk.{l}.ffn_norm.weight)
  if n_expert == 0 {
    # SwiGLU feed-forward.
    ffn_gate = mul_mat(blk.{l}.ffn_gate.weight, ffn_norm)
    ffn_silu = silu(ffn_gate)
    ffn_up = mul_mat(blk.{l}.ffn_up.weight, ffn_norm)
    ffn_gate_par = mul(ffn_silu, ffn_up)
    ffn_out = mul_mat(blk.{l}.ffn_down.weight, ffn_gate_par)
  }
  if n_expert > 0 {
    # The mixture of experts (build_moe_ffn): the router's softmax over
    # the experts, each token's n_expert_used most probable ones.
    ffn_moe_logits = mul_mat(blk.{l}.ffn_gate_inp.weight, ffn_norm)
    ffn_moe_probs = soft_max(ffn_moe_logits)
    ffn_moe_argsort = argsort(ffn_moe_probs, order=1)
    ffn_moe_topk = view_2d(ffn_moe_argsort, n_expert_used, ne(ffn_norm, 1), row_size(ffn_moe_argsort, n_expert), 0)
    # The chosen experts' probabilities, divided by their sum (llama.cpp's
    # clamp of the sum below at 6.1e-5 changes nothing: the largest
    # n_expert_used of n_expert probabilities sum to at least
    # n_expert_used / n_expert).
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
  }
  l_out = add(ffn_out, ffn_inp)
  inpL = l_out
}

norm_out = rms_norm(inpL, eps=eps)
result_norm = mul(norm_out, output_norm.weight)
output result_output = mul_mat(output.weight, result_norm)
