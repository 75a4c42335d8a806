package poll

// schedHeap is a binary min-heap of entries by next check time (then item
// id, so that ties are dispatched in a stable order). Each entry knows
// its index, so a rescheduled or removed entry is fixed in O(log n). No
// container/heap: its interface boxes every push and pop.
type schedHeap []*entry

func (h schedHeap) less(i, j int) bool {
	a, b := h[i], h[j]
	if a.next != b.next {
		return a.next < b.next
	}
	return a.t.id < b.t.id
}

func (h schedHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}

func (h *schedHeap) push(e *entry) {
	e.idx = len(*h)
	*h = append(*h, e)
	h.up(e.idx)
}

// pop removes and returns the first entry.
func (h *schedHeap) pop() *entry {
	old := *h
	e := old[0]
	n := len(old) - 1
	old.swap(0, n)
	old[n] = nil
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	e.idx = -1
	return e
}

// remove takes e out of the heap.
func (h *schedHeap) remove(e *entry) {
	i := e.idx
	old := *h
	n := len(old) - 1
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	e.idx = -1
}

// fix restores the order after entry i's time changed.
func (h schedHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h schedHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h schedHeap) down(i int) bool {
	start := i
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

// overdue calls fn for every entry whose next is before t, visiting only
// the part of the heap that holds them (children are never earlier than
// their parent).
func (h schedHeap) overdue(t int64, fn func(*entry)) {
	var walk func(i int)
	walk = func(i int) {
		if i >= len(h) || h[i].next >= t {
			return
		}
		fn(h[i])
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
}
