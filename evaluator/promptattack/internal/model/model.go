package model

import (
	"math"
)

// K is the number of heads (attack classes) of a model.
const K = 4

// Model is a set of K linear heads over the hashed features, quantised to int8 per bucket and head. The
// logit of head c on a window with features f1..fN is Bias[c] + Scale[c]*sum(Weights[fi*K+c])/sqrt(N).
type Model struct {
	Classes [K]string
	Bias    [K]float64
	Scale   [K]float64
	// Points are the calibrated operating points: for each, the logit from which each head fires.
	Points []Point
	// Info says what the model was trained from (counts per corpus), for people; scoring ignores it.
	Info    string
	Weights []int8 // Buckets*K, bucket-major

	// packed holds the K weights of each bucket in one word (head c in byte c), so that scoring a feature
	// is one load; built by Pack.
	packed *[Buckets]uint32
}

// Pack builds the packed form of the weights that Score reads. It must be called after Weights change.
func (m *Model) Pack() {
	p := new([Buckets]uint32)
	for b := range Buckets {
		for c := range K {
			p[b] |= uint32(uint8(m.Weights[b*K+c])) << (8 * c)
		}
	}
	m.packed = p
}

// Point is a named operating point: the logit threshold of each head, chosen on ordinary text for a stated
// false-positive rate.
type Point struct {
	Name  string
	Logit [K]float64
}

// Point returns the operating point of that name.
func (m *Model) Point(name string) (Point, bool) {
	for _, p := range m.Points {
		if p.Name == name {
			return p, true
		}
	}
	return Point{}, false
}

// Window is a scored window: its byte span in the text and the logit of each head there.
type Window struct {
	Start, End int
	Logit      [K]float64
}

// blockSums is what one block contributes to a window: the integer weight sum per head and the number of
// features.
type blockSums struct {
	sum   [K]int32
	n     int32
	start int
}

// Score scores text in windows sliding by one block (each head's window is HeadWindow[c] blocks) and
// returns, per head, the window with the highest logit. Every block's features are computed once, so the
// cost is linear in the length of the text. ex is the scratch space (nil: Score makes one). stop, when not
// nil, is called every 64 blocks; when it reports true Score returns early with ok false.
func (m *Model) Score(text string, ex *Extractor, stop func() bool) (best [K]Window, ok bool) {
	for c := range best {
		best[c].Logit[c] = math.Inf(-1)
	}
	if ex == nil {
		ex = new(Extractor)
	}
	var ring [WindowBlocks]blockSums // the last WindowBlocks blocks; block i in slot i%WindowBlocks
	blocks := 0
	// consider scores, for each head, the window of its size that ends with the newest block (or the
	// whole text when it has fewer blocks), keeping the best.
	consider := func(end int, final bool) {
		for c := range K {
			size := HeadWindow[c]
			if blocks < size && !final || blocks >= size && final {
				continue // a text shorter than the window is scored once, at its end
			}
			n := min(size, blocks)
			var sum, cnt int32
			for j := blocks - n; j < blocks; j++ {
				b := &ring[j%WindowBlocks]
				sum += b.sum[c]
				cnt += b.n
			}
			l := m.Bias[c]
			if cnt > 0 {
				l = m.Bias[c] + m.Scale[c]*float64(sum)*(1/math.Sqrt(float64(cnt)))
			}
			if l > best[c].Logit[c] {
				best[c].Logit[c] = l
				best[c].End = end
				best[c].Start = 0
				if blocks > n {
					best[c].Start = ring[(blocks-n)%WindowBlocks].start
				}
			}
		}
	}
	if m.packed == nil {
		m.Pack()
	}
	w := m.packed
	for start := 0; start < len(text); {
		if stop != nil && blocks%64 == 63 && stop() {
			return best, false
		}
		end := NextBlock(text, start)
		b := &ring[blocks%WindowBlocks]
		b.start = start
		b.sum, b.n = ex.blockSums(text[start:end], w)
		blocks++
		consider(end, false)
		start = end
	}
	consider(len(text), true)
	return best, true
}

// LogitOf returns the logits of the heads on one window given by its features (as Extractor.Block gives
// them, all blocks of the window together): what Score computes for that window for each head whose
// window size it has.
func (m *Model) LogitOf(features []uint32) [K]float64 {
	var sum [K]int32
	for _, f := range features {
		for c := range K {
			sum[c] += int32(m.Weights[int(f)*K+c])
		}
	}
	var out [K]float64
	for c := range K {
		out[c] = m.Bias[c]
		if len(features) > 0 {
			out[c] = m.Bias[c] + m.Scale[c]*float64(sum[c])*(1/math.Sqrt(float64(int32(len(features)))))
		}
	}
	return out
}

// Blocks returns the [start, end) spans of the blocks of text.
func Blocks(text string) [][2]int {
	var out [][2]int
	for start := 0; start < len(text); {
		end := NextBlock(text, start)
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}
