package ops

// BatchSize is ggml-cuda's get_op_batch_size for op with result shape ne:
// the rows the op processes per weight row, which decides whether
// uploading a weight that lives in host memory pays (a backend's
// OffloadOp).
func (op Op) BatchSize(ne [4]int64) int64 {
	switch op {
	case GetRows:
		return 0
	case MulMat:
		return ne[1]
	case Rope:
		return ne[2]
	}
	return ne[1] * ne[2] * ne[3]
}
