// Package openapi embeds the OpenAPI 3.1 document of the guard REST API and a self-contained page that
// renders it (no network access, no external assets). The document is written as YAML (openapi.yaml)
// for readability and served as JSON; a test in package server checks it against the real routes and
// responses, so it cannot drift.
package openapi

import (
	_ "embed"

	"sigs.k8s.io/yaml"
)

//go:embed openapi.yaml
var source []byte

// Document is the OpenAPI 3.1 document served at /openapi.json, as JSON.
var Document = mustJSON(source)

// DocsPage is the HTML page served at /docs; it fetches /openapi.json and renders it.
//
//go:embed docs.html
var DocsPage []byte

func mustJSON(y []byte) []byte {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		panic("openapi: the embedded openapi.yaml is not valid YAML: " + err.Error())
	}
	return j
}
