package guard

import (
	crand "crypto/rand"
	"math/rand/v2"
)

// idBatch is how many control_execution_ids are made at once.
const idBatch = 32

// idGen hands out random (version 4, RFC 9562) UUID strings, made in batches: one read from a
// cryptographically strong generator and one string allocation per batch instead of two allocations per
// id. The generator is a ChaCha8 stream (math/rand/v2) seeded from crypto/rand, one per pooled scratch.
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

func (g *idGen) fill() {
	n := idBatch
	if g.left > 0 && g.left < n {
		n = g.left
	}
	var rnd [16 * idBatch]byte
	if g.rng == nil {
		g.rng = newIDSource()
	}
	_, _ = g.rng.Read(rnd[:16*n]) // never fails
	var out [36 * idBatch]byte
	for i := 0; i < n; i++ {
		u := rnd[16*i : 16*i+16]
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant 10
		o := out[36*i : 36*i+36]
		o[8], o[13], o[18], o[23] = '-', '-', '-', '-'
		for j, at := range uuidHexAt {
			o[at], o[at+1] = hexDigits[u[j]>>4], hexDigits[u[j]&0xf]
		}
	}
	g.batch = string(out[:36*n])
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
