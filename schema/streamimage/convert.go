package streamimage

// convertMap converts each value of m with conv at depth, its path naming
// the key. A nil map yields a nil map; the first error is returned alone.
func convertMap[A, B any](m map[string]A, p *path, depth int, conv func(A, *path, int) (B, error)) (map[string]B, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]B, len(m))
	for k, v := range m {
		cp := p.child(k)
		b, err := conv(v, &cp, depth)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// convertList converts each element of l with conv at depth, its path
// naming the index. A nil list yields a nil list; the first error is
// returned alone.
func convertList[A, B any](l []A, p *path, depth int, conv func(A, *path, int) (B, error)) ([]B, error) {
	if l == nil {
		return nil, nil
	}
	out := make([]B, len(l))
	for i, e := range l {
		ep := p.elem(i)
		b, err := conv(e, &ep, depth)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
