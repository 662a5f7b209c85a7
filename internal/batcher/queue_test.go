package batcher

import (
	"slices"
	"testing"
)

func seq(from, n int) ([]int, []int64) {
	items := make([]int, n)
	sizes := make([]int64, n)
	for i := range items {
		items[i], sizes[i] = from+i, 10
	}
	return items, sizes
}

func TestQueueKeepsOrderInBatchSizedChunks(t *testing.T) {
	q := NewQueue[int](4)
	if q.Len() != 0 || q.Chunks() != 0 || q.FullBatch() {
		t.Fatalf("empty queue: len %d, chunks %d, full %v", q.Len(), q.Chunks(), q.FullBatch())
	}
	q.Push(0, 10)
	q.Push(1, 10)
	items, sizes := seq(2, 7)
	if bytes := q.Append(items, sizes); bytes != 70 {
		t.Fatalf("Append of 7 items of 10 bytes = %d bytes, want 70", bytes)
	}
	if q.Len() != 9 || q.Chunks() != 3 || !q.FullBatch() {
		t.Fatalf("9 items: len %d, chunks %d, full %v; want 9, 3, true", q.Len(), q.Chunks(), q.FullBatch())
	}
	var got []int
	for {
		batch, bytes, k := q.Take(true, 1, 100, 0)
		if batch == nil {
			break
		}
		if k != 1 || bytes != int64(10*len(batch)) {
			t.Fatalf("batch %v: %d bytes, %d chunks; want %d, 1", batch, bytes, k, 10*len(batch))
		}
		got = append(got, batch...)
	}
	if !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("taken %v, want 0..8 in order", got)
	}
	if q.Len() != 0 || q.chunks != nil || q.sizes != nil {
		t.Fatalf("drained queue keeps %d items, chunks %v", q.Len(), q.chunks)
	}
}

func TestQueueFullBatchAtBatchItems(t *testing.T) {
	q := NewQueue[int](3)
	items, sizes := seq(0, 2)
	q.Append(items, sizes)
	if q.FullBatch() {
		t.Fatal("2 of 3: full batch")
	}
	q.Push(2, 1)
	if !q.FullBatch() {
		t.Fatal("3 of 3: not a full batch")
	}
}

func TestQueueTakeBounds(t *testing.T) {
	fill := func() *Queue[int] {
		q := NewQueue[int](2)
		items, sizes := seq(0, 7) // chunks [0 1] [2 3] [4 5] [6], 20 bytes per full chunk
		q.Append(items, sizes)
		return &q
	}
	for _, tc := range []struct {
		name      string
		partial   bool
		maxChunks int
		maxItems  int
		maxBytes  int64
		want      []int
	}{
		{"full chunks only", false, 100, 100, 1000, []int{0, 1, 2, 3, 4, 5}},
		{"partial too", true, 100, 100, 1000, []int{0, 1, 2, 3, 4, 5, 6}},
		{"at most maxChunks", true, 2, 100, 1000, []int{0, 1, 2, 3}},
		{"at most maxItems", true, 100, 5, 1000, []int{0, 1, 2, 3}},
		{"maxBytes beyond the first chunk", true, 100, 100, 40, []int{0, 1, 2, 3}},
		{"the first chunk whatever maxBytes", true, 100, 100, 0, []int{0, 1}},
		{"nothing when the first chunk exceeds maxItems", true, 100, 1, 1000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := fill()
			batch, bytes, k := q.Take(tc.partial, tc.maxChunks, tc.maxItems, tc.maxBytes)
			if !slices.Equal(batch, tc.want) || bytes != int64(10*len(tc.want)) || k != (len(tc.want)+1)/2 {
				t.Fatalf("Take = %v, %d bytes, %d chunks; want %v, %d, %d", batch, bytes, k, tc.want, 10*len(tc.want), (len(tc.want)+1)/2)
			}
			if q.Len() != 7-len(tc.want) {
				t.Fatalf("%d left, want %d", q.Len(), 7-len(tc.want))
			}
		})
	}
	q := NewQueue[int](2)
	q.Push(0, 1)
	if batch, _, _ := q.Take(false, 10, 10, 10); batch != nil {
		t.Fatalf("a partial chunk taken without partial: %v", batch)
	}
}

func TestQueueRequeuePutsABatchBackFirst(t *testing.T) {
	q := NewQueue[int](2)
	items, sizes := seq(0, 5)
	q.Append(items, sizes)
	batch, bytes, _ := q.Take(false, 100, 100, 1000) // 0..3
	q.Push(5, 10)
	q.Requeue(batch, bytes)
	if q.Len() != 6 || q.Chunks() != 3 {
		t.Fatalf("after requeue: len %d, chunks %d; want 6, 3", q.Len(), q.Chunks())
	}
	all, total, _ := q.Take(true, 100, 100, 1000)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5}) || total != 60 {
		t.Fatalf("after requeue: %v, %d bytes; want 0..5, 60", all, total)
	}
	// A requeued batch may end with a short chunk, which is full to its capacity: appending after it
	// must not write into the batch's array.
	q.Requeue(all[:3], 30)
	q.Push(9, 10)
	if all[3] != 3 {
		t.Fatalf("Push wrote into the requeued batch: %v", all)
	}
	if q.Len() != 4 || q.Chunks() != 2 || !q.FullBatch() {
		t.Fatalf("requeued 3 then pushed 1: len %d, chunks %d, full %v; want 4, 2, true", q.Len(), q.Chunks(), q.FullBatch())
	}
	rest, _, _ := q.Take(true, 100, 100, 1000)
	if !slices.Equal(rest, []int{0, 1, 2, 9}) || q.Len() != 0 {
		t.Fatalf("after the short chunk: %v, %d left; want [0 1 2 9], 0", rest, q.Len())
	}
}

func TestQueuePushDoesNotAllocateWithinAChunk(t *testing.T) {
	q := NewQueue[int](1000)
	q.Push(0, 1)
	if n := testing.AllocsPerRun(100, func() { q.Push(1, 1) }); n != 0 {
		t.Fatalf("Push allocates %v times", n)
	}
	items, sizes := seq(0, 3)
	if n := testing.AllocsPerRun(100, func() { q.Append(items, sizes) }); n != 0 {
		t.Fatalf("Append allocates %v times", n)
	}
}
