package guard

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/guardrail-control/guard/evaluator"
)

// buildCache builds each distinct (evaluator, config) pair of one compilation once. Control sets repeat
// configurations (the same PII pattern on several steps, one list on input and output): building a
// regex is most of the cost of loading a control, and each built evaluator is retained by the snapshot.
// Evaluators are safe for concurrent use and immutable once built, so leaves with equal configurations
// share one. External evaluators are not shared: they may hold per-instance state (connections,
// breakers). The cache lives for one compilation only.
type buildCache struct {
	reg *evaluator.Registry
	mu  sync.Mutex
	m   map[string]*buildEntry
}

type buildEntry struct {
	once sync.Once
	b    built
}

func newBuildCache(reg *evaluator.Registry) *buildCache {
	return &buildCache{reg: reg, m: make(map[string]*buildEntry)}
}

// build is reg.Build(name, config), shared with every earlier call of this compilation with an equal
// name and config.
func (c *buildCache) build(name string, config map[string]any) built {
	f, ok := c.reg.Lookup(name)
	var sb strings.Builder
	if !ok || f.External || !configKey(&sb, config, 0) {
		b, err := c.reg.Build(name, config)
		return built{b, err}
	}
	sb.WriteByte(0)
	sb.WriteString(name)
	key := sb.String()
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		e = &buildEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		b, err := c.reg.Build(name, config)
		e.b = built{b, err}
	})
	return e.b
}

// configKey writes a key of v that two values share only when they are equal, of the same Go types
// (typed, length-prefixed, map keys sorted). It reports false for values it does not know, or nested deeper than
// MaxJSONDepth: those are built without sharing.
func configKey(sb *strings.Builder, v any, depth int) bool {
	if depth > MaxJSONDepth {
		return false
	}
	str := func(s string) {
		sb.WriteString(strconv.Itoa(len(s)))
		sb.WriteByte(':')
		sb.WriteString(s)
	}
	switch x := v.(type) {
	case nil:
		sb.WriteByte('n')
	case bool:
		if x {
			sb.WriteByte('t')
		} else {
			sb.WriteByte('f')
		}
	case string:
		sb.WriteByte('s')
		str(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		sb.WriteByte('d')
		str(strconv.FormatFloat(x, 'g', -1, 64))
	case int: // Go types are kept apart: a factory may treat an int and a float64 differently
		sb.WriteByte('i')
		str(strconv.Itoa(x))
	case int64:
		sb.WriteByte('I')
		str(strconv.FormatInt(x, 10))
	case []string:
		sb.WriteByte('S')
		sb.WriteString(strconv.Itoa(len(x)))
		for _, s := range x {
			sb.WriteByte('s')
			str(s)
		}
	case []any:
		sb.WriteByte('[')
		sb.WriteString(strconv.Itoa(len(x)))
		for _, e := range x {
			if !configKey(sb, e, depth+1) {
				return false
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		sb.WriteString(strconv.Itoa(len(x)))
		for _, k := range keys {
			str(k)
			if !configKey(sb, x[k], depth+1) {
				return false
			}
		}
	default:
		return false
	}
	return true
}
