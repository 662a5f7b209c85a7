package server

import (
	"context"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/guardrail-control/guard/internal/strictjson"
)

// Key is one named API key of a key file (GUARD_API_KEYS_FILE, docs/operations.md "Named and scoped
// keys"). The secret is given either in plaintext (Key) or as the hex SHA-256 digest of the plaintext
// (SHA256), so that the file need not hold the secret itself. Agents limits the key to the agents it
// names (exact names or path.Match patterns such as "team-a-*"); no Agents is a global key. Approve lets a
// key that is not an admin key decide the approval requests of its agents (POST /approvals/{id}) besides
// the runtime and read routes: the key of a guard MCP gateway that asks its user (docs/approvals.md).
type Key struct {
	Name    string `json:"name"`
	Key     string `json:"key,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Admin   bool   `json:"admin,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	// ReadOnly limits the key to the read routes (a dashboard on a wall, on-call): it may not evaluate,
	// register, post events or change anything.
	ReadOnly bool     `json:"read_only,omitempty"`
	Agents   []string `json:"agents,omitempty"`
}

// keyFile is the document of a key file.
type keyFile struct {
	Keys []Key `json:"keys"`
}

// keyNameRE is what a key name may be: it goes into logs, events and the audit trail as is.
var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$`)

// unnamedPrefix starts the names given to the keys of GUARD_API_KEYS and GUARD_ADMIN_API_KEYS (which have
// none); a key file may not use it, so that a name always says where the key comes from.
const unnamedPrefix = "unnamed-"

// ParseKeys reads a key file: a JSON object {"keys": [...]} of Key. Every problem of the file is
// reported in one error (one line each, naming the key by its position and name), never the secret.
func ParseKeys(data []byte) ([]Key, error) {
	// Keys are compared exactly: {"Admin": true} is an unknown field, not an admin key.
	var f keyFile
	if err := strictjson.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the key file is not a JSON object {\"keys\": [...]}: %v", err)
	}
	var probs []string
	if len(f.Keys) == 0 {
		probs = append(probs, "keys: the file configures no key")
	}
	names := map[string]int{}
	digests := map[string]int{}
	for i, k := range f.Keys {
		where := fmt.Sprintf("keys[%d]", i)
		if k.Name != "" {
			where += fmt.Sprintf(" (%s)", k.Name)
		}
		bad := func(format string, a ...any) { probs = append(probs, where+": "+fmt.Sprintf(format, a...)) }
		switch {
		case k.Name == "":
			bad("name is required")
		case !keyNameRE.MatchString(k.Name):
			bad("name must be 1-64 characters of letters, digits and . _ : @ -, starting with a letter or digit")
		case strings.HasPrefix(k.Name, unnamedPrefix):
			bad("name may not start with %q (the names of the keys of GUARD_API_KEYS and GUARD_ADMIN_API_KEYS)", unnamedPrefix)
		default:
			if j, dup := names[k.Name]; dup {
				bad("name is also the name of keys[%d]", j)
			}
			names[k.Name] = i
		}
		var d []byte
		switch {
		case k.Key != "" && k.SHA256 != "":
			bad("give either key or sha256, not both")
		case k.Key != "":
			d = digest(k.Key)
		case k.SHA256 != "":
			b, err := hex.DecodeString(k.SHA256)
			if err != nil || len(b) != 32 {
				bad("sha256 must be 64 hexadecimal digits (the SHA-256 of the key, e.g. printf %%s KEY | sha256sum)")
			} else {
				d = b
			}
		default:
			bad("key or sha256 is required")
		}
		if d != nil {
			if j, dup := digests[string(d)]; dup {
				bad("the same secret as keys[%d]: one secret, one name", j)
			}
			digests[string(d)] = i
		}
		if k.ReadOnly && (k.Admin || k.Approve) {
			bad("read_only cannot be combined with admin or approve")
		}
		for j, p := range k.Agents {
			if err := checkAgentPattern(p); err != nil {
				bad("agents[%d]: %v", j, err)
			}
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("the key file has %d problem(s):\n  %s", len(probs), strings.Join(probs, "\n  "))
	}
	return f.Keys, nil
}

// checkAgentPattern accepts an agent name or a path.Match pattern.
func checkAgentPattern(p string) error {
	if p == "" {
		return fmt.Errorf("is empty")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("%q is not a valid pattern (path.Match: * ? [a-z])", p)
	}
	return nil
}

// WithKeys adds named keys (ParseKeys) to those of WithAuth. It does not turn authentication on.
func WithKeys(keys []Key) Option {
	return func(c *config) { c.namedKeys = append(c.namedKeys, keys...) }
}

// keyScope is the set of agents a scoped key may reach: exact names, then patterns.
type keyScope struct {
	exact    map[string]struct{}
	patterns []string
}

func newKeyScope(agents []string) *keyScope {
	if len(agents) == 0 {
		return nil // global
	}
	sc := &keyScope{exact: map[string]struct{}{}}
	for _, a := range agents {
		if strings.ContainsAny(a, `*?[\`) {
			sc.patterns = append(sc.patterns, a)
		} else {
			sc.exact[a] = struct{}{}
		}
	}
	return sc
}

// names lists the scope's agent names and patterns, sorted (nil for a global key).
func (sc *keyScope) names() []string {
	if sc == nil {
		return nil
	}
	out := make([]string, 0, len(sc.exact)+len(sc.patterns))
	for n := range sc.exact {
		out = append(out, n)
	}
	out = append(out, sc.patterns...)
	slices.Sort(out)
	return out
}

// allows reports whether the scope reaches agent name; a nil scope reaches every agent.
func (sc *keyScope) allows(name string) bool {
	if sc == nil {
		return true
	}
	if _, ok := sc.exact[name]; ok {
		return true
	}
	for _, p := range sc.patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// keyEntry is one configured key: its digest and what it may do.
type keyEntry struct {
	name     string
	digest   []byte
	admin    bool
	approve  bool      // may decide approval requests (levelApprove) without being an admin key
	readOnly bool      // may call the read routes only
	scope    *keyScope // nil: every agent
	stored   bool      // made at runtime (apikey): its last use is recorded
	expires  time.Time // zero: never
}

// identityKey is the context key of the *keyEntry that authenticated a request.
type identityKey struct{}

// withIdentity returns ctx carrying the key e.
func withIdentity(ctx context.Context, e *keyEntry) context.Context {
	return context.WithValue(ctx, identityKey{}, e)
}

func identityOf(ctx context.Context) *keyEntry {
	e, _ := ctx.Value(identityKey{}).(*keyEntry)
	return e
}

// KeyName is the name of the API key that authenticated the request whose context is ctx: the name a
// key file gives it, or "unnamed-admin-N" / "unnamed-regular-N" for the N-th key of GUARD_ADMIN_API_KEYS /
// GUARD_API_KEYS. It is "" when authentication is off or the route is public. It never reveals the
// secret; record it wherever "who did this" matters (the audit trail, approvals).
func KeyName(ctx context.Context) string {
	if e := identityOf(ctx); e != nil {
		return e.name
	}
	return ""
}

// KeyIsAdmin reports whether the request's key is an admin key (false when authentication is off).
func KeyIsAdmin(ctx context.Context) bool {
	e := identityOf(ctx)
	return e != nil && e.admin
}

// KeyAllowsAgent reports whether the request's key may reach the agent: true for a global key and when
// authentication is off.
func KeyAllowsAgent(ctx context.Context, agent string) bool {
	e := identityOf(ctx)
	return e == nil || e.scope.allows(agent)
}

// keyScoped reports whether the request's key is limited to some agents.
func keyScoped(ctx context.Context) bool {
	e := identityOf(ctx)
	return e != nil && e.scope != nil
}
