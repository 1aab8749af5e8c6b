# An MLP whose matrix products are big enough for ggml's BLAS backend (at
# least 32 rows, columns and reduced elements): with -backends blas,cpu the
# scheduler's third pass upgrades them from the CPU to BLAS (3.upg), which
# computes them in the CPU's own memory.

dim n_in = 64
dim n_hidden = 96
dim n_out = 48
dim n_batch <= 32

input x: f32[n_in, n_batch] fill cos(i * 0.013)

weight w0: f32[n_in, n_hidden]
weight b0: f32[n_hidden]
weight w1: f32[n_hidden, n_hidden]
weight w2: f32[n_hidden, n_out]

h0 = relu(add(mul_mat(w0, x), b0))
h1 = gelu(mul_mat(w1, h0))
output y = mul_mat(w2, h1)
