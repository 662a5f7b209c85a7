// Package client is the agent-side library of the Guardrail Control Service and a typed Go client for its
// REST API.
//
// Two entry points:
//
//   - Init registers an agent with the server, fetches the controls linked to it, compiles them into an
//     in-process engine and keeps them fresh in the background. Protect wraps a function so that its input
//     is checked before the call (stage pre) and its output after it (stage post): a deny returns a
//     *guard.ControlViolationError, a steer a *guard.ControlSteerError.
//   - NewHTTPClient is a thin, typed client for every endpoint of API v1 (controls, their data and history,
//     agents, links, evaluation, evaluators, observability), for administrators who script the service.
//
// The library fails open on infrastructure problems and closed on policy: when the server cannot be
// reached the agent keeps (or starts from) its last good snapshot of controls, and evaluates the server's
// controls of that snapshot in-process rather than letting steps through unchecked. See Config for every
// setting and its default.
package client
