# A mixture of experts (llama.cpp's build_moe_ffn, as golden/moe.txtar's)
# whose experts stay in host memory while sim0 takes their products: the
# experts' choice (argsort) runs on the cpu, so the first expert copy
# reads the ids there, before its split copies them in.
backends sim0, cpu
place "_exps" on cpu
dim n_embd = 16
dim n_ff = 32
dim n_expert = 8
dim n_used = 2
dim n_tokens <= 32
input x: f32[n_embd, n_tokens] fill sin(i)
weight gate_inp: f32[n_embd, n_expert] on sim0
weight gate_exps: f32[n_embd, n_ff, n_expert]
weight up_exps: f32[n_embd, n_ff, n_expert]
weight down_exps: f32[n_ff, n_embd, n_expert]
probs = soft_max(mul_mat(gate_inp, x))
sorted = argsort(probs, order=1) on cpu
topk = view_2d(sorted, n_used, n_tokens, row_size(sorted, n_expert), 0)
w = get_rows(reshape(probs, 1, n_expert, n_tokens), topk)
w2 = reshape(w, n_used, n_tokens)
wn = reshape(div(w2, sum_rows(w2)), 1, n_used, n_tokens)
x3 = reshape(x, n_embd, 1, n_tokens)
act = mul(silu(mul_mat_id(gate_exps, x3, topk)), mul_mat_id(up_exps, x3, topk))
experts = mul(mul_mat_id(down_exps, act, topk), wn)
e0 = view_2d(experts, n_embd, n_tokens, row_size(experts, n_embd * n_used), 0)
e1 = view_2d(experts, n_embd, n_tokens, row_size(experts, n_embd * n_used), row_size(experts, n_embd))
output y = add(e0, e1)
