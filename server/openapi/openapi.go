// Package openapi embeds the OpenAPI 3.1 document of the guard REST API and a self-contained page that
// renders it (no network access, no external assets).
package openapi

import _ "embed"

// Document is the OpenAPI 3.1 document served at /openapi.json.
//
//go:embed openapi.json
var Document []byte

// DocsPage is the HTML page served at /docs; it fetches /openapi.json and renders it.
//
//go:embed docs.html
var DocsPage []byte
