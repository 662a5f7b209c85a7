// Package ui is the guard web dashboard: static HTML, CSS and JavaScript embedded in the binary (with
// the embed package) and served under /ui/. The pages talk to the REST API at /api/v1 from the browser, so the
// dashboard needs no server-side state and works with no network access beyond the guard server itself.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var assets embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

// Handler serves the dashboard. Mount it at Prefix ("/ui/"); a request for "/ui" is redirected to "/ui/".
// Unknown paths under /ui/ without a file extension get index.html, since the pages route on the URL
// fragment; a missing file (anything with an extension) is a 404.
func Handler() http.Handler {
	static, err := fs.Sub(assets, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == "/ui" {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/ui")
		name = strings.TrimPrefix(name, "/")
		if name != "" && !exists(static, name) {
			if path.Ext(name) != "" {
				// A missing asset (a stale cached script, a typo) is a 404, not the page: a browser
				// would otherwise try to run HTML as a module.
				http.NotFound(w, r)
				return
			}
			name = ""
		}
		if name == "" {
			name = "index.html"
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		if name == "index.html" {
			// FileServer redirects /index.html to /; serve the file content directly instead.
			data, err := fs.ReadFile(static, "index.html")
			if err != nil {
				http.Error(w, "dashboard missing", http.StatusInternalServerError)
				return
			}
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(data)
			return
		}
		files.ServeHTTP(w, r2)
	})
}

func exists(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && !st.IsDir()
}
