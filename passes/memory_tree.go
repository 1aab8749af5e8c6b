package passes

// orderedSet is a set of keys kept in the order less defines (a treap), so
// that the memory planner and its verifier find neighbours and best fits in
// O(log n) rather than scanning lists: planning stays linear-ish on graphs
// with 100k nodes. Keys that compare equal are the same key.
type orderedSet[K any] struct {
	root  *treapNode[K]
	less  func(a, b K) bool
	seed  uint64
	n     int
	spare *treapNode[K] // deleted nodes, reused by Insert (linked by right)
}

type treapNode[K any] struct {
	key         K
	prio        uint64
	left, right *treapNode[K]
}

func newOrderedSet[K any](less func(a, b K) bool) *orderedSet[K] {
	return &orderedSet[K]{less: less, seed: 0x9E3779B97F4A7C15}
}

// Len is the number of keys.
func (s *orderedSet[K]) Len() int { return s.n }

// nextPrio is a xorshift generator: deterministic, so plans never depend on
// run-to-run randomness (the tree's shape never affects results anyway).
func (s *orderedSet[K]) nextPrio() uint64 {
	s.seed ^= s.seed << 13
	s.seed ^= s.seed >> 7
	s.seed ^= s.seed << 17
	return s.seed
}

// split cuts t into keys < k and keys >= k (orEqual: keys <= k and > k).
func (s *orderedSet[K]) split(t *treapNode[K], k K, orEqual bool) (l, r *treapNode[K]) {
	if t == nil {
		return nil, nil
	}
	goLeft := s.less(t.key, k) || (orEqual && !s.less(k, t.key))
	if goLeft {
		t.right, r = s.split(t.right, k, orEqual)
		return t, r
	}
	l, t.left = s.split(t.left, k, orEqual)
	return l, t
}

// merge joins l and r, every key of l being less than every key of r.
func (s *orderedSet[K]) merge(l, r *treapNode[K]) *treapNode[K] {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = s.merge(l.right, r)
		return l
	default:
		r.left = s.merge(l, r.left)
		return r
	}
}

// Insert adds k, replacing an equal key.
func (s *orderedSet[K]) Insert(k K) {
	l, r := s.split(s.root, k, false)
	mid, r := s.split(r, k, true)
	node := mid
	if node == nil {
		s.n++
		if node = s.spare; node != nil {
			s.spare = node.right
		} else {
			node = &treapNode[K]{}
		}
	}
	*node = treapNode[K]{key: k, prio: s.nextPrio()}
	s.root = s.merge(s.merge(l, node), r)
}

// Delete removes the key equal to k and reports whether there was one.
func (s *orderedSet[K]) Delete(k K) bool {
	l, r := s.split(s.root, k, false)
	mid, r := s.split(r, k, true)
	s.root = s.merge(l, r)
	if mid != nil {
		s.n--
		*mid = treapNode[K]{right: s.spare}
		s.spare = mid
		return true
	}
	return false
}

// Ceil is the smallest key >= k.
func (s *orderedSet[K]) Ceil(k K) (K, bool) {
	var best *treapNode[K]
	for t := s.root; t != nil; {
		if s.less(t.key, k) {
			t = t.right
		} else {
			best, t = t, t.left
		}
	}
	return s.found(best)
}

// Higher is the smallest key > k.
func (s *orderedSet[K]) Higher(k K) (K, bool) {
	var best *treapNode[K]
	for t := s.root; t != nil; {
		if s.less(k, t.key) {
			best, t = t, t.left
		} else {
			t = t.right
		}
	}
	return s.found(best)
}

// Floor is the largest key <= k.
func (s *orderedSet[K]) Floor(k K) (K, bool) {
	var best *treapNode[K]
	for t := s.root; t != nil; {
		if s.less(k, t.key) {
			t = t.left
		} else {
			best, t = t, t.right
		}
	}
	return s.found(best)
}

// Max is the largest key.
func (s *orderedSet[K]) Max() (K, bool) {
	t := s.root
	for t != nil && t.right != nil {
		t = t.right
	}
	return s.found(t)
}

// Ascend calls f on every key in order until f returns false.
func (s *orderedSet[K]) Ascend(f func(K) bool) {
	var walk func(t *treapNode[K]) bool
	walk = func(t *treapNode[K]) bool {
		return t == nil || (walk(t.left) && f(t.key) && walk(t.right))
	}
	walk(s.root)
}

func (s *orderedSet[K]) found(t *treapNode[K]) (K, bool) {
	if t == nil {
		var zero K
		return zero, false
	}
	return t.key, true
}
