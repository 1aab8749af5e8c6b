package engine

import "github.com/graphc/graphc/tensor"

// Product is one matrix product of a group (Description.GroupProducts):
// Dst = mul_mat(W, x) for the group's shared x.
type Product struct {
	Dst, W *tensor.Tensor
}
