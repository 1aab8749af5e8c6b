# A two-layer perceptron over a batch of feature vectors.
dim n_in = 32
dim n_hidden = 64
dim n_out = 10
dim n_batch <= 16

input x: f32[n_in, n_batch] fill cos(i * 0.1)
weight fc1.weight: f32[n_in, n_hidden]
weight fc1.bias: f32[n_hidden]
weight fc2.weight: f32[n_hidden, n_out]
weight fc2.bias: f32[n_out]

h = relu(add(mul_mat(fc1.weight, x), fc1.bias))
output logits = soft_max(add(mul_mat(fc2.weight, h), fc2.bias))
