package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/guardrail-control/guard/server/problem"
)

// Cross-site protection. With authentication off (the default for local development) the browser's
// same-origin policy is all that stands between a web page the operator visits and the control plane, and
// it does not stop "simple" cross-site requests: a form post or a no-cors fetch with a text/plain body
// reaches the server and is acted on even though the page cannot read the answer. Three checks close that,
// each cheap enough for the evaluation hot path:
//
//   - Host (DNS rebinding): when the server listens on a loopback address, the Host header must name
//     loopback (localhost, *.localhost, 127.0.0.0/8, ::1) or the host of an allowed origin; otherwise a page
//     whose own domain was re-pointed at 127.0.0.1 would be "same-origin" with the server. 421
//     HOST_NOT_ALLOWED. Only the host name is compared, not the port, so port forwarding (ssh -L) keeps
//     working: a browser can only reach the port through something the operator set up.
//   - Origin: every request with a method other than GET, HEAD and OPTIONS that a browser marks as coming
//     from another origin (an Origin header whose host is not the request's Host, or Sec-Fetch-Site
//     cross-site/same-site) is refused unless the operator allowed that origin: 403 ORIGIN_NOT_ALLOWED.
//     This covers every POST, including the read-only POST /evaluation (it records events) and
//     POST /observability/events/query, and the routes without a body (link, restore, DELETE). Requests
//     without Origin and Sec-Fetch-Site (curl, the SDKs, the Go client) are not browser requests and pass.
//     The decision is net/http's CrossOriginProtection, whose scheme-blind comparison keeps TLS-terminating
//     proxies working.
//   - Content-Type: a request with a body must say application/json (415 UNSUPPORTED_MEDIA_TYPE). A
//     browser cannot send that type cross-site without a CORS preflight, which this server never approves.

// WithListenAddr tells the server the address it listens on (host:port, as given to net.Listen). When its
// host is a loopback address or "localhost", requests whose Host header names anything else are refused
// (DNS rebinding protection). Without it, or on another address, Host is not checked.
func WithListenAddr(addr string) Option { return func(c *config) { c.listenAddr = addr } }

// WithAllowedOrigins lists the exact origins ("scheme://host[:port]", as browsers send them in the Origin
// header) whose pages may call the mutating routes, in addition to the server's own origin; their hosts are
// also accepted in the Host header on a loopback listener (a reverse proxy that keeps the public Host).
// New refuses a value that is not an origin.
func WithAllowedOrigins(origins []string) Option {
	return func(c *config) { c.allowedOrigins = append([]string(nil), origins...) }
}

// crossSite holds the checks; it is built once by New.
type crossSite struct {
	cop *http.CrossOriginProtection
	// checkHost is true on a loopback listener; hosts are the extra names Host may carry (lower case).
	checkHost bool
	hosts     map[string]bool
}

func newCrossSite(listenAddr string, origins []string) (*crossSite, error) {
	x := &crossSite{cop: http.NewCrossOriginProtection(), hosts: map[string]bool{}}
	for i, o := range origins {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		norm, host, err := normalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("server: allowed origin %d (GUARD_ALLOWED_ORIGINS) %v", i+1, err)
		}
		if err := x.cop.AddTrustedOrigin(norm); err != nil {
			return nil, fmt.Errorf("server: allowed origin %d (GUARD_ALLOWED_ORIGINS) is not an origin", i+1)
		}
		x.hosts[host] = true
	}
	if listenAddr != "" {
		host, _, err := net.SplitHostPort(listenAddr)
		if err != nil {
			host = strings.Trim(listenAddr, "[]")
		}
		if isLoopbackName(host) {
			x.checkHost = true
			x.hosts[strings.ToLower(host)] = true
		}
	}
	return x, nil
}

// normalizeOrigin returns o as a browser would send it in Origin (lower-case scheme and host, no default
// port) and its host name. The error says what is wrong without repeating the value.
func normalizeOrigin(o string) (origin, host string, err error) {
	u, perr := url.Parse(o)
	switch {
	case perr != nil:
		return "", "", errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", "", errors.New("must start with http:// or https://")
	case u.Host == "" || u.User != nil || u.Opaque != "":
		return "", "", errors.New("must be scheme://host[:port]")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", "", errors.New("must not have a path, query or fragment (an origin is scheme://host[:port])")
	}
	scheme := strings.ToLower(u.Scheme)
	host = strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hp := host
	if strings.Contains(host, ":") {
		hp = "[" + host + "]"
	}
	if port != "" {
		hp += ":" + port
	}
	return scheme + "://" + hp, host, nil
}

// isLoopbackName reports whether host (no port, no brackets) names the loopback interface.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	// RFC 6761: browsers resolve *.localhost to loopback themselves, so no DNS answer can re-point it.
	if n := len(".localhost"); len(host) > n && strings.EqualFold(host[len(host)-n:], ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// hostName strips the port and the IPv6 brackets from a Host header value.
func hostName(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[1:i]
		}
		return h
	}
	if i := strings.IndexByte(h, ':'); i >= 0 && strings.LastIndexByte(h, ':') == i {
		return h[:i]
	}
	return h
}

// hostAllowed reports whether the Host header h may reach a loopback listener. An empty Host (HTTP/1.0)
// passes: browsers always send one, so it cannot be a rebinding attack.
func (x *crossSite) hostAllowed(h string) bool {
	if h == "" {
		return true
	}
	name := hostName(h)
	return x.hosts[name] || isLoopbackName(name) || x.hosts[strings.ToLower(name)]
}

// safeMethod reports whether m cannot change anything (and so carries no meaningful body).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// crossSiteOuter wraps a route's handler (before authentication) with the Host and Origin checks it
// needs; a route that needs none gets h itself, so GET routes on a non-loopback listener pay nothing.
func (s *Server) crossSiteOuter(method string, h http.Handler) http.Handler {
	x := s.xsite
	checkOrigin := !safeMethod(method)
	if !x.checkHost && !checkOrigin {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if x.checkHost && !x.hostAllowed(r.Host) {
			s.writeErr(w, r, problem.New(http.StatusMisdirectedRequest, problem.CodeHostNotAllowed,
				"this server answers only to loopback host names on this address; add the origin to GUARD_ALLOWED_ORIGINS to use another name"))
			return
		}
		if checkOrigin && isBrowserRequest(r) && x.cop.Check(r) != nil {
			s.writeErr(w, r, problem.New(http.StatusForbidden, problem.CodeOriginNotAllowed,
				"cross-origin requests may not change this server; allow the origin with GUARD_ALLOWED_ORIGINS"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isBrowserRequest reports whether r carries the headers the Origin check looks at. Without Origin and
// Sec-Fetch-Site, CrossOriginProtection lets a request through; asking the map directly (net/http stores
// header names in canonical form) spares the SDKs' requests two canonicalising lookups.
func isBrowserRequest(r *http.Request) bool {
	return r.Header["Origin"] != nil || r.Header["Sec-Fetch-Site"] != nil
}

// crossSiteInner wraps a route's handler (after authentication) with the Content-Type check; safe methods
// get h itself.
func (s *Server) crossSiteInner(method string, h http.Handler) http.Handler {
	if safeMethod(method) {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasBody(r) && !isJSONMediaType(r.Header.Get("Content-Type")) {
			s.writeErr(w, r, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
				"the request body must be JSON sent with Content-Type: application/json"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hasBody reports whether the request carries a body: a positive Content-Length, or an unknown length
// (chunked) with a body present.
func hasBody(r *http.Request) bool {
	if r.ContentLength > 0 {
		return true
	}
	return r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody
}

// isJSONMediaType accepts application/json, in any case, with optional parameters; a charset parameter
// must be UTF-8 (RFC 8259: JSON exchanged between systems is UTF-8). application/problem+json is a
// response format and is not accepted as a request body.
func isJSONMediaType(ct string) bool {
	if ct == "application/json" {
		return true // the common case, without parsing
	}
	const want = "application/json"
	if len(ct) < len(want) || !strings.EqualFold(ct[:len(want)], want) {
		return false
	}
	rest := strings.TrimLeft(ct[len(want):], " \t")
	if rest == "" {
		return true
	}
	if rest[0] != ';' {
		return false // application/jsonx, application/json-seq, ...
	}
	for params := rest[1:]; ; {
		p, more, found := strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "charset") {
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if !strings.EqualFold(v, "utf-8") && !strings.EqualFold(v, "utf8") {
				return false
			}
		}
		if !found {
			return true
		}
		params = more
	}
}
