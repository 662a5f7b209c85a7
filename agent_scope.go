package guard

// AgentScope restricts a store query to a set of agents: the agents an API key scoped to some agents may
// see (server/keys.go). The zero value does not restrict; a limited scope with no names matches nothing.
type AgentScope struct {
	// Limited turns the restriction on; Names are then the only agents the query may return.
	Limited bool
	Names   []string
}

// Allows reports whether the scope lets agent name through.
func (s AgentScope) Allows(name string) bool {
	if !s.Limited {
		return true
	}
	for _, n := range s.Names {
		if n == name {
			return true
		}
	}
	return false
}
