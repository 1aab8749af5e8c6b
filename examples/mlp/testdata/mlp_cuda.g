backends cuda0, cpu
dim n_batch <= 4
input mlp_in: f32[32, n_batch] fill cos(i * 0.013)
weight fc0.weight: f32[32, 64] on cuda0
weight fc0.bias: f32[64] on cuda0
weight fc1.weight: f32[64, 64]
weight fc1.bias: f32[64]
weight fc2.weight: f32[64, 16]
weight fc2.bias: f32[16]
fc0_relu = relu(add(mul_mat(fc0.weight, mlp_in), fc0.bias))
fc1_gelu = gelu(add(mul_mat(fc1.weight, fc0_relu), fc1.bias))
output mlp_out = add(mul_mat(fc2.weight, fc1_gelu), fc2.bias)
