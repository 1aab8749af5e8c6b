# A 3-layer perceptron: the graph of ggml's conformance trace mlp.json.
# Its first layer's weights are placed on the first backend of the target
# when there is one besides the cpu (try -backends cuda0,cpu with graphc plan).

dim n_in = 32
dim n_hidden = 64
dim n_out = 16
dim n_batch <= 4

input mlp_in: f32[n_in, n_batch] fill cos(i * 0.013)

weight fc0.weight: f32[n_in, n_hidden]
weight fc0.bias: f32[n_hidden]
weight fc1.weight: f32[n_hidden, n_hidden]
weight fc1.bias: f32[n_hidden]
weight fc2.weight: f32[n_hidden, n_out]
weight fc2.bias: f32[n_out]

fc0_mm = mul_mat(fc0.weight, mlp_in)
fc0_add = add(fc0_mm, fc0.bias)
fc0_relu = relu(fc0_add)
fc1_mm = mul_mat(fc1.weight, fc0_relu)
fc1_add = add(fc1_mm, fc1.bias)
fc1_gelu = gelu(fc1_add)
fc2_mm = mul_mat(fc2.weight, fc1_gelu)
output mlp_out = add(fc2_mm, fc2.bias)
