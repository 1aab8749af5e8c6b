// A tour of the syntax; see ../README.md. Not a meaningful model.

backends cuda0, cpu

dim n = 8
dim m = 2 * n + 1  # dims can be constant expressions of other dims
dim n_steps = 3
dim batch <= 4
dim picked <= batch  # a bound may be a bounded dim: at most its value

# Fill expressions see i (flat index), i0..i3 (coordinates), dims and loop
# variables.
input tokens: i32[batch] fill i % n
input angles: f32[n, batch] fill sin(i0 * 0.5) + cos(-(i1 - 1.5e-3))
input mask: f32[n, n] fill where(i0 > i1, 0, -inf)
input picks: i32[picked] fill batch - picked + i

weight emb: f32[n, m] on cpu
weight blk.0.w: f32[n, n]  // a digit segment after a dot
weight head.w: f32[n, m] or emb  # read emb when the file lacks head.w
weight freqs.w: f32[n / 2] or none  # optional: absent when the file lacks it
for s in 0..n_steps {
  weight h{s}.w: f16[n, n]
  state cache.{s}: f32[n * 2, batch]
  for j in 1..3 {
    weight blk.{s}.part{j}.b: f32[n]
  }
}

x = get_rows(emb, tokens)
x = mul_mat(blk.0.w, x) on cuda0
r = rope(view_3d(angles, 2, 4, batch, 8, 32, 0), tokens, freqs.w, n_dims=2)  # an absent optional operand is left out
for s in 0..n_steps {
  y = add(mul_mat(h{s}.w, x), x)
  cpy(y, view_2d(cache.{s}, n, batch, n * 4, 0)) on cuda0
  x = scale(y, 1 / (s + 1), name="step")
  output step{s} = y on cpu
  if s == n_steps - 1 {  # decided when compiling: constant dims, loop variables
    x = get_rows(x, picks)
  }
}

output x
