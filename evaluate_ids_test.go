package guard

import (
	"regexp"
	"sync"
	"testing"

	"github.com/google/uuid"
)

var v4Form = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestExecutionIDsUniqueV4 draws ids from many generators at once, in batches of every size up to and past
// idBatchMax, and checks that every id is a lower-case version 4, RFC 9562 variant UUID and that none repeats.
func TestExecutionIDsUniqueV4(t *testing.T) {
	const gens, perGen = 8, 3
	sizes := []int{1, 2, 31, 32, 33, 4095, idBatchMax, idBatchMax + 1, 2*idBatchMax + 7}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range gens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []string
			for range perGen {
				for _, n := range sizes {
					g := idGen{rng: newIDSource(), left: n}
					for range n {
						local = append(local, g.id())
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("id %s repeated", id)
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()
	for id := range seen {
		if !v4Form.MatchString(id) {
			t.Fatalf("id %q is not a version 4 UUID string", id)
		}
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("id %q: parsed %v %v, version %v variant %v", id, u, err, u.Version(), u.Variant())
		}
	}
}

// TestExecutionIDLayout checks where the parts of an id go: the batch counter in the first 60 bits, 50
// random bits, the index in the last 12; the ids of one batch differ only in the index.
func TestExecutionIDLayout(t *testing.T) {
	g := idGen{rng: newIDSource(), left: 300}
	first := g.id()
	for i := 1; i < 300; i++ {
		id := g.id()
		if id[:33] != first[:33] {
			t.Fatalf("id %d %s and id 0 %s differ before the index", i, id, first)
		}
		if want := []byte{hexDigits[i>>8], hexDigits[i>>4&0xf], hexDigits[i&0xf]}; id[33:] != string(want) {
			t.Fatalf("id %d %s: index digits %s, want %s", i, id, id[33:], want)
		}
	}
	// The next batch steps the counter (the batches of other tests may step it in between).
	g2 := idGen{rng: newIDSource(), left: 1}
	next := g2.id()
	counter := func(id string) uint64 {
		u := uuid.MustParse(id)
		hi := uint64(0)
		for _, b := range u[:8] {
			hi = hi<<8 | uint64(b)
		}
		return hi>>16<<12 | hi&0xfff
	}
	if counter(next) == counter(first) {
		t.Fatalf("two batches share the counter: %s %s", first, next)
	}
}
