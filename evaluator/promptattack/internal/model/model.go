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

// Score scores text in windows of WindowBlocks blocks sliding by one block and returns, per head, the
// window with the highest logit. Every block's features are computed once, so the cost is linear in the
// length of the text. ex is the scratch space (nil: Score makes one). stop, when not nil, is called every few dozen blocks; when it reports true Score
// returns early with ok false.
func (m *Model) Score(text string, ex *Extractor, stop func() bool) (best [K]Window, ok bool) {
	for c := range best {
		best[c].Logit[c] = math.Inf(-1)
	}
	var ring [WindowBlocks]blockSums
	var win blockSums // the sums of the blocks in ring
	blocks := 0
	consider := func(end int) {
		first := 0 // fewer than WindowBlocks blocks: the window is the whole text
		if blocks >= WindowBlocks {
			first = ring[blocks%WindowBlocks].start // the oldest block in the ring
		}
		var inv float64
		if win.n > 0 {
			inv = 1 / math.Sqrt(float64(win.n))
		}
		for c := range K {
			l := m.Bias[c] + m.Scale[c]*float64(win.sum[c])*inv
			if l > best[c].Logit[c] {
				best[c] = Window{Start: first, End: end}
				best[c].Logit = [K]float64{}
				for j := range K {
					best[c].Logit[j] = m.Bias[j] + m.Scale[j]*float64(win.sum[j])*inv
				}
			}
		}
	}
	if ex == nil {
		ex = new(Extractor)
	}
	w := m.Weights
	for start := 0; start < len(text); {
		if stop != nil && blocks%64 == 63 && stop() {
			return best, false
		}
		end := NextBlock(text, start)
		scratch := ex.Block(text[start:end])
		var b blockSums
		b.start = start
		b.n = int32(len(scratch))
		for _, f := range scratch {
			ws := w[int(f)*K : int(f)*K+K : int(f)*K+K]
			b.sum[0] += int32(ws[0])
			b.sum[1] += int32(ws[1])
			b.sum[2] += int32(ws[2])
			b.sum[3] += int32(ws[3])
		}
		slot := blocks % WindowBlocks
		if blocks >= WindowBlocks {
			old := &ring[slot]
			for c := range K {
				win.sum[c] -= old.sum[c]
			}
			win.n -= old.n
		}
		ring[slot] = b
		for c := range K {
			win.sum[c] += b.sum[c]
		}
		win.n += b.n
		blocks++
		if blocks >= WindowBlocks {
			consider(end)
		}
		start = end
	}
	if blocks < WindowBlocks {
		consider(len(text))
	}
	return best, true
}

// LogitOf returns the logits of the heads on one window given by its features (as Extractor.Block gives
// them, all blocks of the window together): what Score computes for that window.
func (m *Model) LogitOf(features []uint32) [K]float64 {
	var sum [K]int32
	for _, f := range features {
		for c := range K {
			sum[c] += int32(m.Weights[int(f)*K+c])
		}
	}
	var out [K]float64
	var inv float64
	if len(features) > 0 {
		inv = 1 / math.Sqrt(float64(int32(len(features))))
	}
	for c := range K {
		out[c] = m.Bias[c] + m.Scale[c]*float64(sum[c])*inv
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
