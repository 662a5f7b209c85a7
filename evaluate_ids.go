package guard

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"sync/atomic"
)

// control_execution_ids: what the contract needs, and how they are made.
//
// An id names one control's execution in one evaluation. Events are joined on it and ingest is
// idempotent on it (an event whose id is already stored is not stored again, across agents), so an id
// must be unique across every evaluation of every process, restarts included, and it should not be
// predictable: a client that could guess the ids of evaluations still to come could post events under
// them first and have the real ones dropped. The wire form is a UUID string (docs/api.md, "Evaluation"), which
// SDKs may parse as a version 4 UUID. Nothing needs the 122 bits of a version 4 UUID to be independent
// random bits: being random is how version 4 ids are unique and unguessable, and these ids are both by
// construction, at a fraction of the cost of drawing 16 random bytes per id:
//
//   - 60 bits are a process-wide counter that starts at a value drawn from crypto/rand when the process
//     starts and steps once per batch, so no two batches of one process share it (a process would need
//     2^60 batches to wrap it) and the batches of two processes share it only by chance;
//   - 50 bits are drawn per batch from the evaluation's ChaCha8 stream (seeded from crypto/rand): two
//     processes whose counters meet still differ here with probability 1 - 2^-50, and they are what a
//     guesser would have to guess: 2^50 candidates for one future batch;
//   - 12 bits number the ids of a batch (a batch is at most 4096 ids, one evaluation makes one batch
//     per 4096 controls it lists);
//   - 6 bits are the version (4) and variant (10) of RFC 9562, so the string is a well-formed version 4
//     UUID, as before.
//
// A batch is one string allocation: the first 33 characters are the same for all its ids, only the last
// three (the index) differ, so an id costs a copy of 36 bytes.

// idBatchMax is the most ids one batch numbers (12 bits).
const idBatchMax = 1 << 12

// idCounter is the process-wide batch counter (60 bits used), started at a random value.
var idCounter atomic.Uint64

func init() {
	var b [8]byte
	_, _ = crand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	idCounter.Store(binary.LittleEndian.Uint64(b[:]))
}

// idGen hands out control_execution_ids in batches; see above. One per pooled scratch (rng is used by one
// evaluation at a time).
type idGen struct {
	rng   *rand.ChaCha8
	batch string
	next  int
	left  int // ids still to be handed out in this evaluation at most (sizes the next batch)
}

func (g *idGen) id() string {
	if g.next*36 >= len(g.batch) {
		g.fill()
	}
	s := g.batch[g.next*36 : g.next*36+36]
	g.next++
	if g.left > 0 {
		g.left--
	}
	return s
}

// fill makes the next batch: min(left, idBatchMax) ids, or 32 when left is unknown.
func (g *idGen) fill() {
	n := 32
	if g.left > 0 {
		n = min(g.left, idBatchMax)
	}
	if g.rng == nil {
		g.rng = newIDSource()
	}
	c := idCounter.Add(1) & (1<<60 - 1)
	r := g.rng.Uint64() & (1<<50 - 1)
	var u [16]byte
	// bytes 0-7: the counter, with the version nibble at the top of byte 6.
	binary.BigEndian.PutUint64(u[0:8], c<<4&^0xffff|c&0xfff) // c's top 48 bits, a hole, its low 12
	u[6] = u[6]&0x0f | 0x40
	// bytes 8-14: the variant, the 50 random bits; the low nibble of byte 14 and byte 15: the index.
	binary.BigEndian.PutUint64(u[8:16], 0x8000000000000000|r<<12)
	var tmpl [36]byte
	tmpl[8], tmpl[13], tmpl[18], tmpl[23] = '-', '-', '-', '-'
	for j, at := range uuidHexAt {
		tmpl[at], tmpl[at+1] = hexDigits[u[j]>>4], hexDigits[u[j]&0xf]
	}
	// A strings.Builder grown once allocates without zeroing and hands its bytes over without a copy.
	var sb strings.Builder
	sb.Grow(36 * n)
	for i := 0; i < n; i++ {
		tmpl[33], tmpl[34], tmpl[35] = hexDigits[i>>8&0xf], hexDigits[i>>4&0xf], hexDigits[i&0xf]
		sb.Write(tmpl[:])
	}
	g.batch = sb.String()
	g.next = 0
}

// newIDSource returns a ChaCha8 generator seeded from crypto/rand.
func newIDSource() *rand.ChaCha8 {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (crypto/rand panics rather than return an error)
	return rand.NewChaCha8(seed)
}

// uuidHexAt is where each of the 16 bytes goes in the 36-character form.
var uuidHexAt = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}
