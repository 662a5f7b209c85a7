package batcher

// Queue is a FIFO of items kept in chunks of batch items, so that taking a batch hands over a chunk
// without copying it, and each chunk carries its items' estimated bytes. Every chunk but the last is
// full, except that a requeued batch (Requeue) may end with a short one. The zero value is not usable: make one with NewQueue. A Queue is not safe for concurrent use;
// the recorder's mutex guards it.
type Queue[T any] struct {
	batch  int
	chunks [][]T
	sizes  []int64 // estimated bytes of each chunk (a requeued batch counts all of its bytes in its first chunk)
	n      int     // items in chunks
}

// NewQueue returns an empty queue whose chunks hold batch items (at least 1).
func NewQueue[T any](batch int) Queue[T] {
	return Queue[T]{batch: max(batch, 1)}
}

// Len is the number of items queued.
func (q *Queue[T]) Len() int { return q.n }

// Chunks is the number of chunks queued.
func (q *Queue[T]) Chunks() int { return len(q.chunks) }

// FullBatch reports whether the queue holds a full batch: more than one chunk, or one full chunk. That
// is Len() >= batch, unless a requeued batch left a short chunk.
func (q *Queue[T]) FullBatch() bool {
	return len(q.chunks) > 1 || len(q.chunks) == 1 && len(q.chunks[0]) == q.batch
}

// Push appends one item of the given estimated size.
func (q *Queue[T]) Push(item T, size int64) {
	n := q.lastWithRoom()
	q.chunks[n] = append(q.chunks[n], item)
	q.sizes[n] += size
	q.n++
}

// Append appends items, sizes[i] being the estimated bytes of items[i], and returns their total bytes.
// It keeps neither slice.
func (q *Queue[T]) Append(items []T, sizes []int64) (bytes int64) {
	q.n += len(items)
	for len(items) > 0 {
		n := q.lastWithRoom()
		last := q.chunks[n]
		k := min(len(items), q.batch-len(last))
		q.chunks[n] = append(last, items[:k]...)
		var sum int64 // summed in a register: Append is on the evaluation's path (observability's Enqueue)
		for _, sz := range sizes[:k] {
			sum += sz
		}
		q.sizes[n] += sum
		bytes += sum
		items, sizes = items[k:], sizes[k:]
	}
	return bytes
}

// lastWithRoom returns the index of the last chunk, starting a new one when the last is full.
func (q *Queue[T]) lastWithRoom() int {
	n := len(q.chunks)
	if n == 0 || len(q.chunks[n-1]) == q.batch {
		q.chunks = append(q.chunks, make([]T, 0, q.batch))
		q.sizes = append(q.sizes, 0)
		n++
	}
	return n - 1
}

// Take removes the oldest chunks and returns them as one batch, with their estimated bytes and how
// many chunks it took; nil when it takes none. It takes at most maxChunks chunks and maxItems items
// in all, and beyond the first chunk no more than maxBytes in all (so one chunk at least, when the
// first fits maxItems); a chunk that is not full only when partial is set. A batch of one chunk is
// that chunk itself; the caller owns it.
func (q *Queue[T]) Take(partial bool, maxChunks, maxItems int, maxBytes int64) ([]T, int64, int) {
	k, size := 0, 0
	var bytes int64
	for k < len(q.chunks) && k < maxChunks && size+len(q.chunks[k]) <= maxItems &&
		(k == 0 || bytes+q.sizes[k] <= maxBytes) &&
		(partial || len(q.chunks[k]) == q.batch) {
		size += len(q.chunks[k])
		bytes += q.sizes[k]
		k++
	}
	if k == 0 {
		return nil, 0, 0
	}
	batch := q.chunks[0]
	if k > 1 {
		batch = make([]T, 0, size)
		for _, c := range q.chunks[:k] {
			batch = append(batch, c...)
		}
	}
	q.n -= size
	clear(q.chunks[:k])
	q.chunks, q.sizes = q.chunks[k:], q.sizes[k:]
	if len(q.chunks) == 0 {
		q.chunks, q.sizes = nil, nil // let the backing arrays go
	}
	return batch, bytes, k
}

// Requeue puts a batch that Take returned back at the head of the queue, in chunks of batch items, so
// that it is taken first again. Its bytes are counted in its first chunk (what matters is that the
// chunks add up to the batch).
func (q *Queue[T]) Requeue(batch []T, bytes int64) {
	q.n += len(batch)
	var chunks [][]T
	var sizes []int64
	for len(batch) > 0 {
		k := min(len(batch), q.batch)
		chunks = append(chunks, batch[:k:k])
		sizes = append(sizes, bytes)
		bytes = 0
		batch = batch[k:]
	}
	q.chunks = append(chunks, q.chunks...)
	q.sizes = append(sizes, q.sizes...)
}
