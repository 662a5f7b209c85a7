package training

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/guardrail-control/guard/evaluator/promptattack/internal/model"
)

// Options are the training settings; Defaults are those the shipped weights were trained with.
type Options struct {
	Epochs       int
	LearningRate float64
	L2           float64
	Seed         uint64
	// PositiveWeight caps the weight of an attack example relative to an ordinary one (attack corpora are
	// smaller; the weight evens them out up to this cap).
	PositiveWeight float64
	// MaxNegativeWindows caps how many windows of one long ordinary text are trained on.
	MaxNegativeWindows int
	// Rounds of multiple-instance learning: a long attack text is trained on through its best-scoring
	// window under the previous round's model (round 0 uses only attack texts that fit one window).
	Rounds int
	// PromptNegativeWeight is the weight of an ordinary prompt as a negative of the indirect head.
	PromptNegativeWeight float64
}

// Defaults are the settings of the shipped weights.
var Defaults = Options{Epochs: 8, LearningRate: 0.3, L2: 1e-6, Seed: 20261202, PositiveWeight: 6, MaxNegativeWindows: 24, Rounds: 2, PromptNegativeWeight: 0.3}

// example is one window trained on: its features and a target per head (+1 attack, -1 ordinary, 0 not
// trained for that head).
type example struct {
	feats  []uint32
	target [model.K]int8
	weight [model.K]float64
	prompt bool // an ordinary prompt (weighted PromptNegativeWeight for the indirect head)
}

// targets says what each label teaches each head. An attack of another class is left out of a head
// (a jailbreak is neither a positive nor a negative of the extraction head); direct injections are also
// positives of the indirect head, since an override in a tool result is an injection there too.
func targets(l Label) [model.K]int8 {
	switch l {
	case DirectInjection:
		return [model.K]int8{1, 0, 0, 1}
	case Jailbreak:
		return [model.K]int8{0, 1, 0, 0}
	case Extraction:
		return [model.K]int8{0, 0, 1, 0}
	case IndirectInjection:
		return [model.K]int8{0, 0, 0, 1}
	case BenignPrompt:
		// The indirect head judges tool results; a user's own request ("rework your previous answer") is
		// what an instruction hidden in data imitates, so prompts teach that head with a small weight
		// (promptNegativeWeight) and its thresholds are calibrated on tool results only.
		return [model.K]int8{-1, -1, -1, -1}
	default:
		return [model.K]int8{-1, -1, -1, -1}
	}
}

// windowsOf returns the feature lists of the windows of size blocks of a text whose blocks are blocks with
// features per, as model.Score sees them, and their byte spans.
func windowsOf(blocks [][2]int, per [][]uint32, size, textLen int) ([][]uint32, [][2]int) {
	if len(per) <= size {
		return [][]uint32{slices.Concat(per...)}, [][2]int{{0, textLen}}
	}
	out := make([][]uint32, 0, len(per)-size+1)
	spans := make([][2]int, 0, cap(out))
	for i := size; i <= len(per); i++ {
		out = append(out, slices.Concat(per[i-size:i]...))
		spans = append(spans, [2]int{blocks[i-size][0], blocks[i-1][1]})
	}
	return out, spans
}

// sizes are the distinct window sizes of the heads.
var sizes = func() []int {
	var out []int
	for _, s := range model.HeadWindow {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}()

// windowAround returns the index of the window that holds span with the most room on both sides, or -1
// when no window holds all of it.
func windowAround(spans [][2]int, span [2]int) int {
	best, room := -1, -1
	for i, w := range spans {
		if w[0] <= span[0] && span[1] <= w[1] {
			if r := min(span[0]-w[0], w[1]-span[1]); r > room {
				best, room = i, r
			}
		}
	}
	return best
}

// prepared is an item with the features of its windows, per window size.
type prepared struct {
	item  Item
	wins  [model.WindowBlocks + 1][][]uint32
	spans [model.WindowBlocks + 1][][2]int
}

func prepare(it Item) prepared {
	blocks := model.Blocks(it.Text)
	per := make([][]uint32, len(blocks))
	ex := new(model.Extractor)
	for i, b := range blocks {
		per[i] = slices.Clone(ex.Block(it.Text[b[0]:b[1]]))
	}
	p := prepared{item: it}
	for _, sz := range sizes {
		p.wins[sz], p.spans[sz] = windowsOf(blocks, per, sz, len(it.Text))
	}
	return p
}

// Fit trains a model on the training part of items and calibrates its operating points on the
// calibration part.
func Fit(items []Item, o Options) *model.Model {
	var train, calib []prepared
	for _, it := range items {
		switch it.Part {
		case Train:
			train = append(train, prepare(it))
		case Calibrate:
			if it.Label == BenignPrompt || it.Label == BenignTool {
				calib = append(calib, prepare(it))
			}
		}
	}
	var m *model.Model
	for round := 0; round <= o.Rounds; round++ {
		var exs []example
		var pos, neg [model.K]float64
		for _, p := range train {
			for _, sz := range sizes {
				t := targets(p.item.Label)
				for c := range model.K {
					if model.HeadWindow[c] != sz {
						t[c] = 0 // this head reads windows of another size
					}
				}
				if t == ([model.K]int8{}) {
					continue
				}
				wins, spans := p.wins[sz], p.spans[sz]
				if p.item.Label == BenignPrompt || p.item.Label == BenignTool {
					ws := wins
					if len(ws) > o.MaxNegativeWindows {
						step := float64(len(ws)) / float64(o.MaxNegativeWindows)
						sel := make([][]uint32, 0, o.MaxNegativeWindows)
						for i := range o.MaxNegativeWindows {
							sel = append(sel, ws[int(float64(i)*step)])
						}
						ws = sel
					}
					for _, w := range ws {
						exs = append(exs, example{feats: w, target: t, prompt: p.item.Label == BenignPrompt})
						for c := range model.K {
							if t[c] < 0 {
								neg[c]++
							}
						}
					}
					continue
				}
				var w []uint32
				at := -1
				if p.item.Span != [2]int{} {
					at = windowAround(spans, p.item.Span)
				}
				switch {
				case len(wins) == 1:
					w = wins[0]
				case at >= 0:
					// The attack's place is known: its window is the positive, and the windows that do not
					// touch it are ordinary text of the same document for the heads this item trains.
					w = wins[at]
					for i, s := range spans {
						if i%2 == 0 && (s[1] <= p.item.Span[0] || s[0] >= p.item.Span[1]) {
							var nt [model.K]int8
							for c := range model.K {
								if t[c] > 0 {
									nt[c] = -1
									neg[c]++
								}
							}
							exs = append(exs, example{feats: wins[i], target: nt})
						}
					}
				case m == nil:
					continue // round 0: long attacks wait for a model to pick their window
				default:
					best, bestL := 0, math.Inf(-1)
					for i, win := range wins {
						l := m.LogitOf(win)
						s := math.Inf(-1)
						for c := range model.K {
							if t[c] > 0 && l[c] > s {
								s = l[c]
							}
						}
						if i == 0 || s > bestL {
							best, bestL = i, s
						}
					}
					w = wins[best]
				}
				exs = append(exs, example{feats: w, target: t})
				for c := range model.K {
					if t[c] > 0 {
						pos[c]++
					}
				}
			}
		}
		var pw [model.K]float64
		for c := range model.K {
			pw[c] = 1
			if pos[c] > 0 {
				pw[c] = min(o.PositiveWeight, neg[c]/pos[c])
			}
		}
		for i := range exs {
			for c := range model.K {
				switch {
				case exs[i].target[c] > 0:
					exs[i].weight[c] = pw[c]
				case exs[i].target[c] < 0:
					exs[i].weight[c] = 1
					if exs[i].prompt && c == int(IndirectInjection) {
						exs[i].weight[c] = o.PromptNegativeWeight
					}
				}
			}
		}
		m = fitSGD(exs, o)
	}
	calibrate(m, calib)
	return m
}

// fitSGD runs logistic regression by stochastic gradient descent on all heads at once and quantises the
// result.
func fitSGD(exs []example, o Options) *model.Model {
	w := make([]float64, model.Buckets*model.K)
	var bias [model.K]float64
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	order := make([]int, len(exs))
	for i := range order {
		order[i] = i
	}
	for epoch := range o.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := o.LearningRate / (1 + 0.5*float64(epoch))
		for _, idx := range order {
			ex := &exs[idx]
			if len(ex.feats) == 0 {
				continue
			}
			inv := 1 / math.Sqrt(float64(len(ex.feats)))
			var sum [model.K]float64
			for _, f := range ex.feats {
				base := int(f) * model.K
				for c := range model.K {
					sum[c] += w[base+c]
				}
			}
			var g [model.K]float64
			for c := range model.K {
				if ex.target[c] == 0 {
					continue
				}
				z := bias[c] + float64(sum[c]*inv)
				y := 0.0
				if ex.target[c] > 0 {
					y = 1
				}
				g[c] = float64((sigmoid(z) - y) * ex.weight[c])
				bias[c] -= float64(lr * g[c] * 0.1)
				g[c] = float64(lr * float64(g[c]*inv))
			}
			for _, f := range ex.feats {
				base := int(f) * model.K
				for c := range model.K {
					if g[c] != 0 {
						w[base+c] -= g[c] + float64(lr*float64(o.L2*w[base+c]))
					}
				}
			}
		}
	}
	return quantise(w, bias)
}

// quantise maps each head's weights to int8 with a scale that keeps the 99.99th percentile of the
// non-zero magnitudes in range (rarer outliers are clipped, so that they do not flatten all the rest).
func quantise(w []float64, bias [model.K]float64) *model.Model {
	m := &model.Model{Weights: make([]int8, len(w))}
	for c := range model.K {
		m.Classes[c] = ClassNames[c]
		m.Bias[c] = bias[c]
		var mags []float64
		for i := c; i < len(w); i += model.K {
			if w[i] != 0 {
				mags = append(mags, math.Abs(w[i]))
			}
		}
		sort.Float64s(mags)
		top := 1.0
		if len(mags) > 0 {
			top = mags[min(len(mags)-1, int(float64(len(mags))*0.9999))]
		}
		scale := top / 127
		m.Scale[c] = scale
		for i := c; i < len(w); i += model.K {
			q := math.Round(w[i] / scale)
			m.Weights[i] = int8(max(-127, min(127, q)))
		}
	}
	return m
}

// sigmoid is 1/(1+e^-z) with a pure-Go exponential, so that training gives the same bits on every machine
// (math.Exp has assembly variants that may round differently).
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + exp(-z))
	}
	e := exp(z)
	return e / (1 + e)
}

// exp is e^x for x <= 0 by range reduction to [-ln2/2, ln2/2] and a degree-11 Taylor polynomial, each
// product rounded on its own (explicit conversions forbid fused multiply-adds).
func exp(x float64) float64 {
	if x < -700 {
		return 0
	}
	const ln2 = 0.6931471805599453
	k := math.Round(x / ln2)
	r := x - float64(k*ln2)
	term, sum := 1.0, 1.0
	for i := 1; i <= 11; i++ {
		term = float64(term*r) / float64(i)
		sum += term
	}
	return math.Ldexp(sum, int(k))
}

// Operating points: the false-positive rates each is calibrated for, on ordinary prompts and on ordinary
// tool results of the calibration part. The default, "balanced", is the product's target for tool results
// (0.5%) and half its target for prompts (0.3%): most calibration prompts are grade-school maths questions,
// easier than the prompts users write, so the prompt heads keep a margin.
var pointRates = []struct {
	name         string
	prompt, tool float64
}{
	{"strict", 0.0005, 0.002},
	{"balanced", 0.0015, 0.005},
	{"sensitive", 0.01, 0.02},
}

// calibrate sets the operating points: for each head, the lowest logit at which no more than the point's
// rate of the ordinary prompts and of the ordinary tool results fire.
func calibrate(m *model.Model, calib []prepared) {
	var prompts, tools [model.K][]float64
	for _, p := range calib {
		var best [model.K]float64
		for c := range best {
			best[c] = math.Inf(-1)
		}
		for c := range model.K {
			for _, w := range p.wins[model.HeadWindow[c]] {
				best[c] = max(best[c], m.LogitOf(w)[c])
			}
		}
		for c := range model.K {
			if p.item.Label == BenignPrompt {
				prompts[c] = append(prompts[c], best[c])
			} else {
				tools[c] = append(tools[c], best[c])
			}
		}
	}
	for _, pr := range pointRates {
		p := model.Point{Name: pr.name}
		for c := range model.K {
			p.Logit[c] = thresholdFor(tools[c], pr.tool)
			if c != int(IndirectInjection) { // the indirect head runs on tool results only
				p.Logit[c] = max(p.Logit[c], thresholdFor(prompts[c], pr.prompt))
			}
		}
		m.Points = append(m.Points, p)
	}
}

// thresholdFor returns the lowest threshold t such that at most floor(rate*n) of scores are >= t.
func thresholdFor(scores []float64, rate float64) float64 {
	if len(scores) == 0 {
		return 0
	}
	s := slices.Clone(scores)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	allowed := int(rate * float64(len(s)))
	if allowed >= len(s) {
		return math.Inf(-1)
	}
	return math.Nextafter(s[allowed], math.Inf(1))
}

// Describe is the model's Info text: how many items of each source went into each part.
func Describe(items []Item) string {
	type key struct {
		src  string
		part Part
	}
	counts := map[key]int{}
	var srcs []string
	for _, it := range items {
		k := key{it.Source, it.Part}
		if _, ok := counts[key{it.Source, Train}]; !ok && !slices.Contains(srcs, it.Source) {
			srcs = append(srcs, it.Source)
		}
		counts[k]++
	}
	var b strings.Builder
	b.WriteString("source: train/calibrate/validate items\n")
	for _, s := range srcs {
		fmt.Fprintf(&b, "%s: %d/%d/%d\n", s, counts[key{s, Train}], counts[key{s, Calibrate}], counts[key{s, Validate}])
	}
	return b.String()
}
